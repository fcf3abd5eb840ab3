#pragma once
/// Exact tap-rectangle sums of one input plane, or of one flat chunk of it, from its total and its
/// border ("band") lines, by inclusion-exclusion. Written once for the CUDA kernels and the host
/// executors. Every term is linear in x, so the rectangle sum of a plane is the sum of the rectangle
/// sums of its chunks: a chunk can be finished on its own, with no plane-level gather.
///
/// For taps (th, tw) with intervals I_h = [a, b), I_w = [c, d) the needed quantity is
///   R[th][tw] = sum_{i in I_h, j in I_w} x[i][j]
///             = T - sum_{i not in I_h} rowsum(i) - sum_{j not in I_w} colsum(j)
///                 + sum_{i not in I_h, j not in I_w} x[i][j]
/// where T is the plane total. Rows outside I_h are band rows and columns outside I_w are band
/// columns (convt_band), so only band row sums, band column sums and the band x band corner values
/// are needed besides T. At the default #44 size the band is one row and one column.
///
/// Precision: all terms are fp64 sums of exactly converted fp32 values, so the cancellation in
/// T - (borders) costs ~1e-16 * |T|, not ~1e-7 * |T| as fp32 partials would (which fails the 1e-5
/// gate when heavy cropping leaves a small rectangle of a large-offset plane).
#include <cstdint>

#include "fused/arch/host_device.cuh"
#include "fused/math/convt_index.cuh"

namespace fb::fused::math {

/// Rows i of a (height x width) plane whose element (i, j) has plane-relative flat index in
/// [flat_begin, flat_end): i in [ceil((flat_begin - j)/width), ceil((flat_end - j)/width)) clamped
/// to [0, height). Used to split band-column sums over flat chunks of the plane.
FB_HOST_DEVICE index_interval column_rows_in_flat_range(int64_t flat_begin, int64_t flat_end, int64_t j,
                                                        int64_t width, int64_t height) {
  const int64_t lo = max_i64(0, ceil_div(flat_begin - j, width));
  const int64_t hi = min_i64(height, ceil_div(flat_end - j, width));
  return index_interval{lo, hi > lo ? hi : lo};
}

/// Flat indices of row i of a width-wide plane that lie in [flat_begin, flat_end) (maybe empty).
FB_HOST_DEVICE index_interval row_in_flat_range(int64_t i, int64_t width, int64_t flat_begin, int64_t flat_end) {
  const int64_t lo = max_i64(flat_begin, i * width);
  const int64_t hi = min_i64(flat_end, (i + 1) * width);
  return index_interval{lo, hi > lo ? hi : lo};
}

/// The band x band corner values tap_rect_sum needs, read from the fp32 plane itself: corner (br,
/// bc) is plane element f (row bh.line(br), column bw.line(bc)).
struct corners_from_plane {
  const float* plane;
  FB_HOST_DEVICE double operator()(int64_t /*br*/, int64_t /*bc*/, int64_t f) const {
    return static_cast<double>(plane[f]);
  }
};

/// The same values gathered beforehand (a kernel loads them together with the band lines, so that
/// the rectangles need no further round trip to memory): value[br * n_band_cols + bc].
struct corners_gathered {
  const double* value;
  int64_t n_band_cols;
  FB_HOST_DEVICE double operator()(int64_t br, int64_t bc, int64_t /*f*/) const { return value[br * n_band_cols + bc]; }
};

/// Sum of plane[i][j] over the rectangle I_h x I_w restricted to the flat chunk
/// [flat_begin, flat_end) of the plane (see file comment), in fp64. total: fp64 sum of the chunk;
/// band_row_sums[b]: sum of row bh.line(b) inside the chunk; band_col_sums[b]: sum of column
/// bw.line(b) inside the chunk; corner(br, bc, f): the plane's element f = bh.line(br) * width +
/// bw.line(bc) (corners_from_plane or corners_gathered), asked only for band x band corners inside
/// the chunk. The whole plane is the chunk [0, height * width). The summation order is fixed (band
/// index order), so it is deterministic.
template <class Corner>
FB_HOST_DEVICE double tap_rect_sum(double total, const band_1d& bh, const band_1d& bw, index_interval ih,
                                   index_interval iw, const double* band_row_sums, const double* band_col_sums,
                                   Corner corner, int64_t width, int64_t flat_begin, int64_t flat_end) {
  if (ih.empty() || iw.empty()) return 0.0;  // the tap never lands inside the output
  const int64_t nbr = bh.count();
  const int64_t nbc = bw.count();
  double rows_out = 0.0;
  for (int64_t b = 0; b < nbr; ++b)
    if (!ih.contains(bh.line(b))) rows_out += band_row_sums[b];
  double cols_out = 0.0;
  for (int64_t b = 0; b < nbc; ++b)
    if (!iw.contains(bw.line(b))) cols_out += band_col_sums[b];
  double corners = 0.0;
  for (int64_t br = 0; br < nbr; ++br) {
    const int64_t i = bh.line(br);
    if (ih.contains(i)) continue;
    const index_interval in_chunk = row_in_flat_range(i, width, flat_begin, flat_end);
    if (in_chunk.empty()) continue;
    for (int64_t bc = 0; bc < nbc; ++bc) {
      const int64_t f = i * width + bw.line(bc);
      if (!iw.contains(bw.line(bc)) && in_chunk.contains(f)) corners += corner(br, bc, f);
    }
  }
  return ((total - rows_out) - cols_out) + corners;
}

}  // namespace fb::fused::math
