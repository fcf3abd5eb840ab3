#pragma once
/// Pieces shared by the 3-D transposed-convolution + BatchNorm references (#15 convt3d_bn_sub, #77
/// convt3d_scale_bn_gap): cubic geometry, the BatchNorm batch-size rule, and the conv step in both the
/// libtorch and the fp64 oracle form. Written once so the two models cannot drift apart.
#include "reference/common.h"

namespace fb::ref::convt3d {

/// Name of the BatchNorm3d submodule in both KernelBench modules (`self.batch_norm`).
inline constexpr const char* batch_norm_prefix = "batch_norm";

/// Cubic kernel/stride/padding of a ConvTranspose3d without output_padding (neither model takes one).
struct cubic_conv {
  int64_t kernel_size;
  int64_t stride;
  int64_t padding;
};

/// (D', H', W') of the transposed convolution over (depth, height, width).
[[nodiscard]] std::vector<int64_t> output_size(const cubic_conv& conv, int64_t depth, int64_t height, int64_t width);

/// PyTorch's ConvTranspose3d rules, then BatchNorm's: in training mode N = B*D'*H'*W' must exceed 1
/// (PyTorch raises "Expected more than 1 value per channel when training"). Throws config_error.
void validate_conv_bn(int64_t batch_size, int64_t in_channels, int64_t out_channels, const cubic_conv& conv,
                      int64_t depth, int64_t height, int64_t width, bool training);

/// `conv_transpose.weight`/`.bias` (if `bias`) and `batch_norm.*`, drawn in that order from one seed.
[[nodiscard]] tensor_map make_conv_bn_parameters(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                                                 bool bias, param_init init, uint64_t seed);

/// at::conv_transpose3d with the parameters converted to x's dtype/device; no bias unless `bias`.
[[nodiscard]] at::Tensor forward_conv(const cubic_conv& conv, bool bias, const tensor_map& params, const at::Tensor& x);

/// normalisation_conditioning of BatchNorm on the fp64 conv output `y`: per channel over (B, D', H', W')
/// with the batch variance in training mode, or the running variance in eval mode.
/// `magnitude` is conv(|x|, |w|) + |b| (the scale of fp32 rounding per element).
[[nodiscard]] double batch_norm_conditioning(const at::Tensor& y, const at::Tensor& magnitude, const tensor_map& params,
                                             bool training, double eps);

/// The same convolution by the oracle's scatter loops, float64 on the CPU.
[[nodiscard]] at::Tensor oracle_conv(const cubic_conv& conv, bool bias, const tensor_map& params, const at::Tensor& x);

}  // namespace fb::ref::convt3d
