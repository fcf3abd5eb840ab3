// Host executor of convt2d_mul_gap: the same decomposition as the CUDA kernel (per work item: its
// sum and band-line partials, its tap rectangles R_item, its contributions; per sample: the item
// rows summed in k_slices interleaved slices, then the slices in order), run serially with the
// shared math. Only the in-item sums differ in order (sequential here, per-warp pieces and a warp
// tree there); those fp64 sums of fp32 values are exact unless the values span more than ~2^20 in
// magnitude, so the outputs usually agree bitwise (the self-test checks they agree to 1e-6).
#include <vector>

#include "fused/convt2d_mul_gap/convt2d_mul_gap.h"
#include "fused/convt2d_mul_gap/plan.h"
#include "fused/math/border_sums.cuh"
#include "fused/math/convt_index.cuh"
#include "fused/runtime/plan_util.h"

namespace fb::fused::convt2d_mul_gap {

std::size_t workspace_bytes(const problem& prob) { return detail::make_plan(prob).workspace_bytes; }

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
  double* row_part = ws + pl.off_row_part;
  double* col_part = ws + pl.off_col_part;
  double* rect = ws + pl.off_rect;
  double* contrib = ws + pl.off_contrib;

  for (int64_t item = 0; item < pl.n_items; ++item) {
    const int64_t plane = item / pl.chunks_per_plane;
    const index_interval range = detail::item_range(item - plane * pl.chunks_per_plane, pl.plane_size);
    const float* xp = x + plane * pl.plane_size;
    // The item's sum and its share of each band row and column.
    double total = 0.0;
    for (int64_t e = range.lo; e < range.hi; ++e) total += static_cast<double>(xp[e]);
    for (int64_t br = 0; br < pl.n_band_rows; ++br) {
      const index_interval r = math::row_in_flat_range(pl.band_h.line(br), pl.width, range.lo, range.hi);
      double s = 0.0;
      for (int64_t e = r.lo; e < r.hi; ++e) s += static_cast<double>(xp[e]);
      row_part[item * pl.n_band_rows + br] = s;
    }
    for (int64_t bc = 0; bc < pl.n_band_cols; ++bc) {
      const int64_t j = pl.band_w.line(bc);
      const index_interval rows = math::column_rows_in_flat_range(range.lo, range.hi, j, pl.width, pl.height);
      double c = 0.0;
      for (int64_t i = rows.lo; i < rows.hi; ++i) c += static_cast<double>(xp[i * pl.width + j]);
      col_part[item * pl.n_band_cols + bc] = c;
    }
    // Its tap rectangles by inclusion-exclusion, restricted to the item, and its contributions.
    double* r_item = rect + item * pl.n_taps;
    for (int64_t tap = 0; tap < pl.n_taps; ++tap) {
      const int64_t th = tap / pl.k;
      const int64_t tw = tap - th * pl.k;
      const index_interval ih = convt_tap_interval(pl.height, pl.h_out, pl.stride, pl.padding, th);
      const index_interval iw = convt_tap_interval(pl.width, pl.w_out, pl.stride, pl.padding, tw);
      r_item[tap] = math::tap_rect_sum(total, pl.band_h, pl.band_w, ih, iw, row_part + item * pl.n_band_rows,
                                       col_part + item * pl.n_band_cols, math::corners_from_plane{xp}, pl.width,
                                       range.lo, range.hi);
    }
    const float* w_ci = weight + (plane % pl.c_in) * pl.c_out * pl.n_taps;
    for (int64_t co = 0; co < pl.c_out; ++co)
      contrib[item * pl.c_out + co] = detail::item_contribution(w_ci + co * pl.n_taps, r_item, pl.n_taps);
  }

  // Per sample: the item rows in k_slices interleaved slices, then the slices in order.
  for (int64_t b = 0; b < pl.batch; ++b) {
    const double* rows = contrib + b * pl.items_per_sample * pl.c_out;
    for (int64_t co = 0; co < pl.c_out; ++co) {
      double sum = 0.0;
      for (int s = 0; s < detail::k_slices; ++s) {
        double slice[1];
        detail::slice_sums<1>(rows, pl.items_per_sample, pl.c_out, co, 1, 1, s, detail::plain_load{}, slice);
        sum += slice[0];
      }
      out[b * pl.c_out + co] = detail::gap_output(pl.multiplier, conv_bias[co], sum, pl.inv_area);
    }
  }
}

}  // namespace fb::fused::convt2d_mul_gap
