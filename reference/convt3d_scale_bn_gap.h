#pragma once
/// KernelBench #77: ConvTranspose3d -> * scale_factor -> BatchNorm3d -> AdaptiveAvgPool3d(1) (SPEC §1.5).
#include "reference/common.h"

namespace fb::ref::convt3d_scale_bn_gap {

/// ConvTranspose3d(in, out, k) is built with stride 1, padding 0 and a bias; none is a constructor argument.
inline constexpr int64_t conv_stride = 1;
/// See conv_stride.
inline constexpr int64_t conv_padding = 0;

/// Constructor arguments, input sizes and the BatchNorm mode; defaults are KernelBench's.
struct config {
  int64_t in_channels = 64;
  int64_t out_channels = 128;
  int64_t kernel_size = 5;
  double scale_factor = 2.0;
  double eps = 1e-5;
  double momentum = 0.1;
  int64_t batch_size = 16;
  int64_t depth = 16;
  int64_t height = 32;
  int64_t width = 32;
  bool training = true;  // KernelBench never calls .eval()
};

/// Throws config_error for anything PyTorch rejects (sizes, training with B*D'*H'*W' = 1) and for
/// eps <= 0, momentum outside (0, 1] and a non-finite scale_factor. PyTorch itself accepts any
/// momentum, but outside (0, 1] the running average is no average; the fuzz domain draws (0, 1].
void validate(const config& c);
/// (B, C_in, D, H, W).
[[nodiscard]] std::vector<int64_t> input_shape(const config& c);
/// (B, C_out, 1, 1, 1).
[[nodiscard]] std::vector<int64_t> output_shape(const config& c);
/// (D', H', W') of the transposed convolution: D + k - 1 etc.
[[nodiscard]] std::vector<int64_t> conv_output_shape(const config& c);
/// conv_transpose.weight (C_in, C_out, k, k, k), conv_transpose.bias (C_out) and batch_norm.*.
[[nodiscard]] tensor_map make_parameters(const config& c, param_init init, uint64_t seed);
/// libtorch forward on x's device and dtype; buffers are batch_norm.* after the call.
[[nodiscard]] forward_result forward(const config& c, const tensor_map& params, const at::Tensor& x);
/// fp32 rounding amplification of the reference on this case (see normalisation_conditioning).
[[nodiscard]] double conditioning(const config& c, const tensor_map& params, const at::Tensor& x);
/// fp64 loops on the CPU.
[[nodiscard]] forward_result oracle(const config& c, const tensor_map& params, const at::Tensor& x);

}  // namespace fb::ref::convt3d_scale_bn_gap
