#pragma once
/// fp64 building blocks of the oracles: plain loops written straight from the definitions, with no
/// ATen operator in the math, so that a misuse of libtorch (wrong LayerNorm dims, weight layout,
/// train vs eval) in a reference shows up as a disagreement. CPU, float64, small shapes only.
#include "reference/common.h"

#include <array>

namespace fb::ref::oracle {

/// Per-dimension geometry of a transposed convolution over (D, H, W); 2-D models use D = 1, k_d = 1.
struct convt_geometry {
  std::array<int64_t, 3> kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 3> padding{0, 0, 0};
  std::array<int64_t, 3> output_padding{0, 0, 0};
};

/// Transposed convolution in scatter form: input index i with tap t lands on o = i*s - p + t, kept
/// when 0 <= o < n_out. x: (B, C_in, D, H, W), weight: (C_in, C_out, kd, kh, kw), bias: (C_out) or
/// undefined. Returns (B, C_out, D', H', W') in float64.
[[nodiscard]] at::Tensor conv_transpose_scatter(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                                const convt_geometry& g);

/// Statistics of a BatchNorm batch for one channel: mean and biased variance over (B, spatial).
struct channel_stats {
  double mean = 0;
  double var_biased = 0;
  int64_t count = 0;
};

/// Per-channel batch statistics of y: (B, C, ...) float64.
[[nodiscard]] std::vector<channel_stats> batch_stats(const at::Tensor& y);

/// BatchNorm by definition on y (B, C, ...). Training: batch mean and biased variance, and the
/// buffer updates (running_var with the unbiased variance, num_batches_tracked + 1). Eval: the
/// running buffers, nothing updated. Updated buffers go to `buffers_out` under `prefix`.
[[nodiscard]] at::Tensor batch_norm(const at::Tensor& y, const tensor_map& params, const std::string& prefix,
                                    bool training, double momentum, double eps, tensor_map& buffers_out);

/// LayerNorm over the last dimension only (each contiguous row), biased variance, affine by w index.
[[nodiscard]] at::Tensor layer_norm_last_dim(const at::Tensor& y, const at::Tensor& gamma, const at::Tensor& beta,
                                             double eps);

/// Exact GELU 0.5*x*(1+erf(x/sqrt(2))), elementwise.
[[nodiscard]] at::Tensor gelu_erf(const at::Tensor& y);

/// Mean over every dim after the first two: (B, C, ...) -> (B, C).
[[nodiscard]] at::Tensor spatial_mean(const at::Tensor& y);

/// Max-subtracted logsumexp of a row.
[[nodiscard]] double logsumexp(const double* v, int64_t n);

/// A parameter as a contiguous CPU float64 tensor (throws std::out_of_range if missing).
[[nodiscard]] at::Tensor param64(const tensor_map& params, const std::string& name);

}  // namespace fb::ref::oracle
