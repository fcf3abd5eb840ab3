#pragma once
/// Derived sizes and workspace layout of convt2d_gap_bias_lse, shared by run_cuda and run_host.
#include <cstdint>

#include "fused/common/convt_index.cuh"
#include "fused/common/plan_util.h"
#include "fused/convt2d_gap_bias_lse.h"

namespace fb::fused::convt2d_gap_bias_lse::detail {

/// Lanes (one (ci, co) pair each) of one weight-tap-sum work item.
constexpr int64_t k_wsum_pairs_per_item = 32;

/// Everything derived from a problem. Workspace offsets count fp64 values from the aligned base:
///   part[n_chunk_items]     plane-chunk sums (chunk q of plane b*C_in+ci at index plane*cpp+q)
///   wsum[C_in * C_out]      Wsum[ci, co] = sum of weight[ci, co, :, :]
///   s[B * C_in]             S[b, ci] = spatial sum of x[b, ci]
///   z[B * C_out]            z[b, co] = mean[b, co] + bias[co]
struct plan {
  int64_t batch, c_in, c_out, height, width, k;
  int64_t n_planes, hw, h_out, w_out, kk;
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
  pl.hw = p.height * p.width;
  // Stride 1, padding 0: n_out = n_in + k - 1 and every tap lands inside the output.
  pl.h_out = convt_output_size(p.height, p.kernel_size, 1, 0, 0);
  pl.w_out = convt_output_size(p.width, p.kernel_size, 1, 0, 0);
  pl.kk = p.kernel_size * p.kernel_size;
  pl.chunks_per_plane = ceil_div(pl.hw, fb::fused::detail::k_chunk_elems);
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

}  // namespace fb::fused::convt2d_gap_bias_lse::detail
