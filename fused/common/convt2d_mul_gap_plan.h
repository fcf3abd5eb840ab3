#pragma once
/// Derived sizes and workspace layout of convt2d_mul_gap, shared by run_cuda and run_host so both
/// use the same decomposition (chunks, bands, fp64 scratch layout).
#include <cstdint>

#include "fused/common/convt_index.cuh"
#include "fused/common/plan_util.h"
#include "fused/convt2d_mul_gap.h"

namespace fb::fused::convt2d_mul_gap::detail {

/// Everything derived from a problem. Workspace offsets count fp64 values from the aligned base:
///   part_total[n_chunk_items]         plane-chunk sums
///   part_col[n_chunk_items * nbc]     per chunk, the sum of each band column's elements inside it
///   row_sum[n_planes * nbr]           full sums of band rows
///   col_sum[n_planes * nbc]           full sums of band columns (finalize pass)
///   rect[n_planes * k * k]            tap-rectangle sums R[b, ci, th, tw]
struct plan {
  int64_t batch, c_in, c_out, height, width, k, stride, padding;
  int64_t n_planes, hw, h_out, w_out, kk;
  band_1d bh, bw;
  int64_t nbr, nbc;
  int64_t chunks_per_plane, n_chunk_items, n_row_items;
  int64_t off_part_total, off_part_col, off_row_sum, off_col_sum, off_rect, n_doubles;
  double multiplier;
  double inv_area;  // 1 / (H' * W')
};

/// Validates (std::invalid_argument naming field and rule) and derives the plan.
inline plan make_plan(const problem& p) {
  using fb::fused::detail::require;
  constexpr const char* m = "convt2d_mul_gap";
  require(p.batch >= 1, m, "batch", "must be >= 1", p.batch);
  require(p.in_channels >= 1, m, "in_channels", "must be >= 1", p.in_channels);
  require(p.out_channels >= 1, m, "out_channels", "must be >= 1", p.out_channels);
  require(p.height >= 1, m, "height", "must be >= 1", p.height);
  require(p.width >= 1, m, "width", "must be >= 1", p.width);
  require(p.kernel_size >= 1, m, "kernel_size", "must be >= 1", p.kernel_size);
  require(p.stride >= 1, m, "stride", "must be >= 1", p.stride);
  require(p.padding >= 0, m, "padding", "must be >= 0", p.padding);
  require(p.output_padding >= 0, m, "output_padding", "must be >= 0", p.output_padding);
  require(p.output_padding < p.stride, m, "output_padding", "must be < stride (PyTorch rule)", p.output_padding);
  plan pl{};
  pl.batch = p.batch;
  pl.c_in = p.in_channels;
  pl.c_out = p.out_channels;
  pl.height = p.height;
  pl.width = p.width;
  pl.k = p.kernel_size;
  pl.stride = p.stride;
  pl.padding = p.padding;
  pl.h_out = convt_output_size(p.height, p.kernel_size, p.stride, p.padding, p.output_padding);
  pl.w_out = convt_output_size(p.width, p.kernel_size, p.stride, p.padding, p.output_padding);
  require(pl.h_out >= 1, m, "padding", "too large: output height (H-1)*s-2p+k+op must be >= 1; output height",
          pl.h_out);
  require(pl.w_out >= 1, m, "padding", "too large: output width (W-1)*s-2p+k+op must be >= 1; output width",
          pl.w_out);
  pl.n_planes = p.batch * p.in_channels;
  pl.hw = p.height * p.width;
  pl.kk = p.kernel_size * p.kernel_size;
  pl.bh = convt_band(p.height, pl.h_out, p.kernel_size, p.stride, p.padding);
  pl.bw = convt_band(p.width, pl.w_out, p.kernel_size, p.stride, p.padding);
  pl.nbr = pl.bh.count();
  pl.nbc = pl.bw.count();
  pl.chunks_per_plane = ceil_div(pl.hw, fb::fused::detail::k_chunk_elems);
  pl.n_chunk_items = pl.n_planes * pl.chunks_per_plane;
  pl.n_row_items = pl.n_planes * pl.nbr;
  pl.off_part_total = 0;
  pl.off_part_col = pl.off_part_total + pl.n_chunk_items;
  pl.off_row_sum = pl.off_part_col + pl.n_chunk_items * pl.nbc;
  pl.off_col_sum = pl.off_row_sum + pl.n_planes * pl.nbr;
  pl.off_rect = pl.off_col_sum + pl.n_planes * pl.nbc;
  pl.n_doubles = pl.off_rect + pl.n_planes * pl.kk;
  pl.multiplier = static_cast<double>(p.multiplier);
  pl.inv_area = 1.0 / (static_cast<double>(pl.h_out) * static_cast<double>(pl.w_out));
  return pl;
}

}  // namespace fb::fused::convt2d_mul_gap::detail
