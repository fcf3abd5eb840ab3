// Host executor of convt2d_mul_gap: the same three passes as the CUDA path (plane-chunk and band
// sums -> tap-rectangle sums -> per-(b, co) dot), run serially with the shared index/border math.
#include "fused/common/border_sums.cuh"
#include "fused/common/convt2d_mul_gap_plan.h"
#include "fused/common/convt_index.cuh"
#include "fused/common/plan_util.h"
#include "fused/convt2d_mul_gap.h"

namespace fb::fused::convt2d_mul_gap {

std::size_t workspace_bytes(const problem& prob) {
  return fb::fused::detail::workspace_bytes_for(detail::make_plan(prob).n_doubles);
}

void run_host(const problem& prob, const float* x, const float* weight, const float* conv_bias, float* out,
              void* workspace) {
  using fb::fused::detail::require_ptr;
  const detail::plan pl = detail::make_plan(prob);
  constexpr const char* m = "convt2d_mul_gap::run_host";
  require_ptr(x, m, "x");
  require_ptr(weight, m, "weight");
  require_ptr(conv_bias, m, "conv_bias");
  require_ptr(out, m, "out");
  require_ptr(workspace, m, "workspace");
  double* ws = fb::fused::detail::aligned_workspace(workspace);
  double* part_total = ws + pl.off_part_total;
  double* part_col = ws + pl.off_part_col;
  double* row_sum = ws + pl.off_row_sum;
  double* col_sum = ws + pl.off_col_sum;
  double* rect = ws + pl.off_rect;
  constexpr int64_t chunk = fb::fused::detail::k_chunk_elems;

  // Pass 1: per plane chunk its fp64 sum and its share of each band column; full band row sums.
  for (int64_t plane = 0; plane < pl.n_planes; ++plane) {
    const float* xp = x + plane * pl.hw;
    for (int64_t q = 0; q < pl.chunks_per_plane; ++q) {
      const int64_t item = plane * pl.chunks_per_plane + q;
      const int64_t begin = q * chunk;
      const int64_t end = min_i64(pl.hw, begin + chunk);
      double s = 0.0;
      for (int64_t e = begin; e < end; ++e) s += static_cast<double>(xp[e]);
      part_total[item] = s;
      for (int64_t bc = 0; bc < pl.nbc; ++bc) {
        const int64_t j = pl.bw.line(bc);
        const index_interval rows = column_rows_in_flat_range(begin, end, j, pl.width, pl.height);
        double c = 0.0;
        for (int64_t i = rows.lo; i < rows.hi; ++i) c += static_cast<double>(xp[i * pl.width + j]);
        part_col[item * pl.nbc + bc] = c;
      }
    }
    for (int64_t br = 0; br < pl.nbr; ++br) {
      const float* row = xp + pl.bh.line(br) * pl.width;
      double s = 0.0;
      for (int64_t j = 0; j < pl.width; ++j) s += static_cast<double>(row[j]);
      row_sum[plane * pl.nbr + br] = s;
    }
  }

  // Pass 2: plane total, band column sums, then every tap rectangle by inclusion-exclusion.
  for (int64_t plane = 0; plane < pl.n_planes; ++plane) {
    double total = 0.0;
    for (int64_t q = 0; q < pl.chunks_per_plane; ++q) total += part_total[plane * pl.chunks_per_plane + q];
    for (int64_t bc = 0; bc < pl.nbc; ++bc) {
      double c = 0.0;
      for (int64_t q = 0; q < pl.chunks_per_plane; ++q)
        c += part_col[(plane * pl.chunks_per_plane + q) * pl.nbc + bc];
      col_sum[plane * pl.nbc + bc] = c;
    }
    for (int64_t tap = 0; tap < pl.kk; ++tap) {
      const int64_t th = tap / pl.k;
      const int64_t tw = tap - th * pl.k;
      const index_interval ih = convt_tap_interval(pl.height, pl.h_out, pl.stride, pl.padding, th);
      const index_interval iw = convt_tap_interval(pl.width, pl.w_out, pl.stride, pl.padding, tw);
      rect[plane * pl.kk + tap] = tap_rect_sum(total, pl.bh, pl.bw, ih, iw, row_sum + plane * pl.nbr,
                                               col_sum + plane * pl.nbc, x + plane * pl.hw, pl.width);
    }
  }

  // Pass 3: out[b, co] = multiplier * (conv_bias[co] + sum_{ci, tap} W[ci, co, tap] R[b, ci, tap] / (H'W')).
  const int64_t len = pl.c_in * pl.kk;
  for (int64_t b = 0; b < pl.batch; ++b) {
    const double* r = rect + b * len;
    for (int64_t co = 0; co < pl.c_out; ++co) {
      double acc = 0.0;
      for (int64_t ci = 0; ci < pl.c_in; ++ci) {
        const float* w = weight + (ci * pl.c_out + co) * pl.kk;
        for (int64_t tap = 0; tap < pl.kk; ++tap) acc += static_cast<double>(w[tap]) * r[ci * pl.kk + tap];
      }
      out[b * pl.c_out + co] =
          static_cast<float>(pl.multiplier * (static_cast<double>(conv_bias[co]) + acc * pl.inv_area));
    }
  }
}

}  // namespace fb::fused::convt2d_mul_gap
