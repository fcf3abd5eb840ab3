#pragma once
/// KernelBench #42: ConvTranspose2d -> mean over (2,3) -> + bias -> logsumexp over channels ->
/// sum over (2,3) -> * 10 (SPEC §1.3).
#include "reference/common.h"

namespace fb::ref::convt2d_gap_bias_lse {

/// Constructor arguments and input sizes; defaults are KernelBench's. bias_shape is always
/// (out_channels, 1, 1), so it is not a key. Stride 1 and padding 0 are fixed by the module.
struct config {
  int64_t in_channels = 64;
  int64_t out_channels = 128;
  int64_t kernel_size = 3;
  int64_t batch_size = 16;
  int64_t height = 512;
  int64_t width = 512;
};

/// Throws config_error for anything PyTorch rejects (non-positive sizes).
void validate(const config& c);
/// (B, C_in, H, W).
[[nodiscard]] std::vector<int64_t> input_shape(const config& c);
/// (B, 1).
[[nodiscard]] std::vector<int64_t> output_shape(const config& c);
/// (H', W') = (H + k - 1, W + k - 1) of the transposed convolution.
[[nodiscard]] std::vector<int64_t> conv_output_shape(const config& c);
/// conv_transpose.weight (C_in, C_out, k, k), conv_transpose.bias (C_out) and bias (C_out, 1, 1).
[[nodiscard]] tensor_map make_parameters(const config& c, param_init init, uint64_t seed);
/// libtorch forward on x's device and dtype.
[[nodiscard]] forward_result forward(const config& c, const tensor_map& params, const at::Tensor& x);
/// fp64 loops on the CPU.
[[nodiscard]] forward_result oracle(const config& c, const tensor_map& params, const at::Tensor& x);

}  // namespace fb::ref::convt2d_gap_bias_lse
