#pragma once
/// KernelBench #15: ConvTranspose3d -> BatchNorm3d -> subtract the per-(b,c) spatial mean (SPEC §1.1).
#include "reference/common.h"

namespace fb::ref::convt3d_bn_sub {

/// BatchNorm3d(out_channels) is built with its defaults; they are not constructor arguments (no JSON keys).
inline constexpr double batch_norm_eps = 1e-5;
/// See batch_norm_eps.
inline constexpr double batch_norm_momentum = 0.1;

/// Constructor arguments, input sizes and the BatchNorm mode; defaults are KernelBench's.
struct config {
  int64_t in_channels = 16;
  int64_t out_channels = 32;
  int64_t kernel_size = 3;
  int64_t stride = 2;
  int64_t padding = 1;
  bool bias = true;
  int64_t batch_size = 16;
  int64_t depth = 16;
  int64_t height = 32;
  int64_t width = 32;
  bool training = true;  // KernelBench never calls .eval()
};

/// Throws config_error for anything PyTorch rejects (sizes, empty output, training with B*D'*H'*W' = 1).
void validate(const config& c);
/// (B, C_in, D, H, W).
[[nodiscard]] std::vector<int64_t> input_shape(const config& c);
/// (B, C_out, D', H', W').
[[nodiscard]] std::vector<int64_t> output_shape(const config& c);
/// (D', H', W') of the transposed convolution.
[[nodiscard]] std::vector<int64_t> conv_output_shape(const config& c);
/// conv_transpose.weight (C_in, C_out, k, k, k), conv_transpose.bias (C_out, if bias) and batch_norm.*.
[[nodiscard]] tensor_map make_parameters(const config& c, param_init init, uint64_t seed);
/// libtorch forward on x's device and dtype; buffers are batch_norm.* after the call.
[[nodiscard]] forward_result forward(const config& c, const tensor_map& params, const at::Tensor& x);
/// fp32 rounding amplification of the reference on this case (see normalisation_conditioning).
[[nodiscard]] double conditioning(const config& c, const tensor_map& params, const at::Tensor& x);
/// fp64 loops on the CPU.
[[nodiscard]] forward_result oracle(const config& c, const tensor_map& params, const at::Tensor& x);

}  // namespace fb::ref::convt3d_bn_sub
