#pragma once
/// KernelBench #34: ConvTranspose3d -> LayerNorm(out_channels) -> GELU -> * scaling_factor (SPEC §1.2).
#include "reference/common.h"

namespace fb::ref::convt3d_ln_gelu_scale {

/// Constructor arguments and input sizes; defaults are KernelBench's (W' = 64 = out_channels).
struct config {
  int64_t in_channels = 32;
  int64_t out_channels = 64;
  int64_t kernel_size = 4;
  int64_t stride = 2;
  int64_t padding = 1;
  bool bias = true;
  double eps = 1e-5;
  double scaling_factor = 1.0;
  int64_t batch_size = 32;
  int64_t depth = 16;
  int64_t height = 32;
  int64_t width = 32;
};

/// Throws config_error for anything PyTorch rejects (sizes, empty output, W' != out_channels, eps <= 0).
void validate(const config& c);
/// (B, C_in, D, H, W).
[[nodiscard]] std::vector<int64_t> input_shape(const config& c);
/// (B, C_out, D', H', W'): the output is as large as the convolution's.
[[nodiscard]] std::vector<int64_t> output_shape(const config& c);
/// (D', H', W') of the transposed convolution.
[[nodiscard]] std::vector<int64_t> conv_output_shape(const config& c);
/// conv_transpose.weight (C_in, C_out, k, k, k), conv_transpose.bias (C_out, if bias),
/// layer_norm.weight and layer_norm.bias (length out_channels = W', indexed by the w position).
[[nodiscard]] tensor_map make_parameters(const config& c, param_init init, uint64_t seed);
/// libtorch forward on x's device and dtype.
[[nodiscard]] forward_result forward(const config& c, const tensor_map& params, const at::Tensor& x);
/// fp32 rounding amplification of the reference on this case (see normalisation_conditioning).
[[nodiscard]] double conditioning(const config& c, const tensor_map& params, const at::Tensor& x);
/// forward in fp64 (x fp64) with the convolution's output (bias included) rounded once to fp32
/// before the LayerNorm: what the fp32 module's one rounding of y does (model_entry::fp64_rounded_conv).
[[nodiscard]] forward_result forward_rounded_conv(const config& c, const tensor_map& params, const at::Tensor& x);
/// fp64 loops on the CPU.
[[nodiscard]] forward_result oracle(const config& c, const tensor_map& params, const at::Tensor& x);

}  // namespace fb::ref::convt3d_ln_gelu_scale
