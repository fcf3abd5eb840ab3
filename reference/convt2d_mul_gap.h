#pragma once
/// KernelBench #44: ConvTranspose2d -> * multiplier -> mean over (2,3) -> mean over (2,3) (SPEC §1.4).
#include "reference/common.h"

namespace fb::ref::convt2d_mul_gap {

/// Constructor arguments and input sizes; defaults are KernelBench's.
struct config {
  int64_t in_channels = 64;
  int64_t out_channels = 128;
  int64_t kernel_size = 3;
  int64_t stride = 2;
  int64_t padding = 1;
  int64_t output_padding = 1;
  double multiplier = 0.5;
  int64_t batch_size = 16;
  int64_t height = 128;
  int64_t width = 128;
};

/// Throws config_error for anything PyTorch rejects (sizes, output_padding >= stride, empty output).
void validate(const config& c);
/// (B, C_in, H, W).
[[nodiscard]] std::vector<int64_t> input_shape(const config& c);
/// (B, C_out, 1, 1).
[[nodiscard]] std::vector<int64_t> output_shape(const config& c);
/// (H', W') of the transposed convolution.
[[nodiscard]] std::vector<int64_t> conv_output_shape(const config& c);
/// conv_transpose.weight (C_in, C_out, k, k) and conv_transpose.bias (C_out).
[[nodiscard]] tensor_map make_parameters(const config& c, param_init init, uint64_t seed);
/// libtorch forward on x's device and dtype.
[[nodiscard]] forward_result forward(const config& c, const tensor_map& params, const at::Tensor& x);
/// fp64 loops on the CPU.
[[nodiscard]] forward_result oracle(const config& c, const tensor_map& params, const at::Tensor& x);

}  // namespace fb::ref::convt2d_mul_gap
