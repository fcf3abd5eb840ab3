#pragma once
/// Derived sizes and workspace layout of convt2d_gap_bias_lse, shared by run_cuda and run_host.
#include <cmath>
#include <cstdint>

#include "fused/convt2d_gap_bias_lse/convt2d_gap_bias_lse.h"
#include "fused/math/convt_index.cuh"
#include "fused/runtime/plan_util.h"

namespace fb::fused::convt2d_gap_bias_lse::detail {

/// Lanes (one (ci, co) pair each) of one weight-tap-sum work item.
constexpr int64_t k_wsum_pairs_per_item = 32;

/// The model's final multiplier: out[b] = 10 * logsumexp_co(z[b, co]) (KernelBench #42's `* 10.0`).
constexpr double k_output_scale = 10.0;

/// Everything derived from a problem. Workspace offsets count fp64 values from the aligned base:
///   part[n_chunk_items]     plane-chunk sums (chunk q of plane b*C_in+ci at index plane*cpp+q)
///   wsum[C_in * C_out]      Wsum[ci, co] = sum of weight[ci, co, :, :]
///   s[B * C_in]             S[b, ci] = spatial sum of x[b, ci]
///   z[B * C_out]            z[b, co] = mean[b, co] + bias[co]
struct plan {
  int64_t batch, c_in, c_out, height, width, k;
  int64_t n_planes, plane_size, h_out, w_out, n_taps;
  int64_t chunks_per_plane, n_chunk_items, n_wsum_items;
  int64_t off_part, off_wsum, off_s, off_z, n_doubles;
  double inv_area;  // 1 / (H' * W')
};

/// Validates (std::invalid_argument naming field and rule) and derives the plan.
inline plan make_plan(const problem& p) {
  using fb::fused::detail::require;
  constexpr const char* m = "convt2d_gap_bias_lse";
  fb::fused::detail::require_positive_sizes(p, m);
  plan pl{};
  pl.batch = p.batch;
  pl.c_in = p.in_channels;
  pl.c_out = p.out_channels;
  pl.height = p.height;
  pl.width = p.width;
  pl.k = p.kernel_size;
  pl.n_planes = p.batch * p.in_channels;
  pl.plane_size = p.height * p.width;
  // Stride 1, padding 0: n_out = n_in + k - 1 and every tap lands inside the output.
  pl.h_out = convt_output_size(p.height, p.kernel_size, 1, 0, 0);
  pl.w_out = convt_output_size(p.width, p.kernel_size, 1, 0, 0);
  pl.n_taps = p.kernel_size * p.kernel_size;
  pl.chunks_per_plane = ceil_div(pl.plane_size, fb::fused::detail::k_chunk_elems);
  pl.n_chunk_items = pl.n_planes * pl.chunks_per_plane;
  pl.n_wsum_items = ceil_div(p.in_channels * p.out_channels, k_wsum_pairs_per_item);
  pl.off_part = 0;
  pl.off_wsum = pl.off_part + pl.n_chunk_items;
  pl.off_s = pl.off_wsum + p.in_channels * p.out_channels;
  pl.off_z = pl.off_s + p.batch * p.in_channels;
  pl.n_doubles = pl.off_z + p.batch * p.out_channels;
  pl.inv_area = 1.0 / (static_cast<double>(pl.h_out) * static_cast<double>(pl.w_out));
  return pl;
}

/// The math of both paths, written once (the kernel and the host executor call these, so they cannot
/// drift apart: same terms, same order, fma in the same places).

/// Wsum[ci, co] of one (ci, co) pair: the fp64 sum of its kk weight taps, in tap order. Recomputed on
/// every call: parameters change between calls.
FB_HOST_DEVICE double weight_tap_sum(const float* w_pair, int64_t kk) {
  double acc = 0.0;
  for (int64_t t = 0; t < kk; ++t) acc += static_cast<double>(w_pair[t]);
  return acc;
}

/// Elements [begin, end) of plane chunk q (chunks of k_chunk_elems; the last one may be shorter).
struct chunk_range {
  int64_t begin, end;
};
FB_HOST_DEVICE chunk_range chunk_of(int64_t q, int64_t hw) {
  const int64_t begin = q * fb::fused::detail::k_chunk_elems;
  return {begin, min_i64(hw, begin + fb::fused::detail::k_chunk_elems)};
}

/// z[b, co] = conv_bias[co] + (1/(H'W')) * sum_ci S[b, ci] * Wsum[ci, co] + bias[co], in fp64, the dot
/// product accumulated with fma in ci order (SPEC: the mean of the conv output, plus the extra bias).
FB_HOST_DEVICE double channel_logit(const double* s_b, const double* wsum, int64_t c_in, int64_t c_out, int64_t co,
                                    double inv_area, float conv_bias, float bias) {
  double acc = 0.0;
#if defined(__CUDA_ARCH__)
#pragma unroll 8
#endif
  for (int64_t ci = 0; ci < c_in; ++ci) acc = fma(s_b[ci], wsum[ci * c_out + co], acc);
  return (static_cast<double>(conv_bias) + acc * inv_area) + static_cast<double>(bias);
}

}  // namespace fb::fused::convt2d_gap_bias_lse::detail
