#pragma once
/// Derived sizes, workspace layout and the per-item math of convt2d_mul_gap, shared by run_cuda and
/// run_host so both use the same decomposition (items, bands, summation orders, fp64 scratch).
#include <cstddef>
#include <cmath>
#include <cstdint>

#include "fused/convt2d_mul_gap/convt2d_mul_gap.h"
#include "fused/math/convt_index.cuh"
#include "fused/runtime/plan_util.h"

namespace fb::fused::convt2d_mul_gap::detail {

/// Elements of one work item: a flat chunk of one (b, ci) plane, summed by one CUDA block of
/// k_slices warps. A fixed constant (not derived from the grid or the device), so the decomposition,
/// and with it every rounding, is the same on every GPU and in the host executor.
constexpr int64_t k_item_elems = 32768;

/// The sum over a sample's items runs as k_slices interleaved slices (items r = s, s + k_slices, ...
/// in order), then the slices in order: one slice per warp of the block that finishes the sample.
constexpr int k_slices = 8;

/// Everything derived from a problem. Work item it = plane * chunks_per_plane + q covers the flat
/// range [q * k_item_elems, min(hw, (q + 1) * k_item_elems)) of plane = b * c_in + ci; the items of a
/// sample are consecutive. Workspace offsets count fp64 values from the aligned base:
///   row_part[n_items * n_band_rows]    per item, the sum of each band row's elements inside it
///   col_part[n_items * n_band_cols]    per item, the sum of each band column's elements inside it
///   rect[n_items * k * k]      per item, its tap-rectangle sums R_item[tap] (linear in x: the
///                              plane's R is the sum over its items)
///   contrib[n_items * c_out]   per item, sum_tap W[ci, co, tap] R_item[tap]
/// followed, for the CUDA path only, by `batch` uint32 arrival counters (items done per sample) at
/// byte offset counters_byte_offset, zeroed by run_cuda before its kernel.
struct plan {
  int64_t batch, c_in, c_out, height, width, k, stride, padding;
  int64_t n_planes, plane_size, h_out, w_out, n_taps;
  band_1d band_h, band_w;
  int64_t n_band_rows, n_band_cols;
  int64_t chunks_per_plane, n_items, items_per_sample;
  int64_t off_row_part, off_col_part, off_rect, off_contrib, n_doubles;
  std::size_t counters_byte_offset, workspace_bytes;
  double multiplier;
  double inv_area;  // 1 / (H' * W')
};

/// Validates (std::invalid_argument naming field and rule) and derives the plan.
inline plan make_plan(const problem& p) {
  using fb::fused::detail::require;
  constexpr const char* m = "convt2d_mul_gap";
  fb::fused::detail::require_positive_sizes(p, m);
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
  pl.plane_size = p.height * p.width;
  pl.n_taps = p.kernel_size * p.kernel_size;
  pl.band_h = convt_band(p.height, pl.h_out, p.kernel_size, p.stride, p.padding);
  pl.band_w = convt_band(p.width, pl.w_out, p.kernel_size, p.stride, p.padding);
  pl.n_band_rows = pl.band_h.count();
  pl.n_band_cols = pl.band_w.count();
  pl.chunks_per_plane = ceil_div(pl.plane_size, k_item_elems);
  pl.n_items = pl.n_planes * pl.chunks_per_plane;
  pl.items_per_sample = pl.c_in * pl.chunks_per_plane;
  require(pl.items_per_sample < (int64_t{1} << 31), m, "in_channels*height*width",
          "too large (work items per sample must be < 2^31)", pl.items_per_sample);
  pl.off_row_part = 0;
  pl.off_col_part = pl.off_row_part + pl.n_items * pl.n_band_rows;
  pl.off_rect = pl.off_col_part + pl.n_items * pl.n_band_cols;
  pl.off_contrib = pl.off_rect + pl.n_items * pl.n_taps;
  pl.n_doubles = pl.off_contrib + pl.n_items * pl.c_out;
  pl.counters_byte_offset = static_cast<std::size_t>(pl.n_doubles) * sizeof(double);
  pl.workspace_bytes = fb::fused::detail::k_workspace_align + pl.counters_byte_offset +
                       static_cast<std::size_t>(pl.batch) * sizeof(unsigned);
  pl.multiplier = static_cast<double>(p.multiplier);
  pl.inv_area = 1.0 / (static_cast<double>(pl.h_out) * static_cast<double>(pl.w_out));
  return pl;
}

/// Plain loads, for host code and for data the reading thread's own block wrote.
struct plain_load {
  FB_HOST_DEVICE double operator()(const double* p) const { return *p; }
};

/// Flat range [begin, end) of work item q of a plane.
FB_HOST_DEVICE index_interval item_range(int64_t q, int64_t hw) {
  return index_interval{q * k_item_elems, min_i64(hw, (q + 1) * k_item_elems)};
}

/// One item's contribution to out[b, co] before the 1/(H'W') scale: the sum over taps (in tap
/// order) of W[ci, co, tap] * R_item[tap] in fp64. w_ci_co: the kk weights W[ci, co, :].
FB_HOST_DEVICE double item_contribution(const float* w_ci_co, const double* rect, int64_t kk) {
  double acc = 0.0;
#if defined(__CUDA_ARCH__)
#pragma unroll 8
#endif
  for (int64_t tap = 0; tap < kk; ++tap) acc = fma(static_cast<double>(w_ci_co[tap]), rect[tap], acc);
  return acc;
}

/// Slice s of the sum over a sample's item contributions, for the n <= kTile output channels
/// co_j = co_first + j * co_step: acc[j] = the sum over items r = s, s + k_slices, ... (in order) of
/// contrib[r * c_out + co_j]. contrib: the sample's first item row. Each co's value depends only on
/// its own sum, not on kTile: the host executor (kTile 1) and the kernel (kTile 4, lanes 32 apart)
/// get the same numbers; the tile only gives the kernel kTile independent loads per step.
/// load: how to read a value (the kernel reads other blocks' rows from L2).
template <int kTile, class Load>
FB_HOST_DEVICE void slice_sums(const double* contrib, int64_t n_items, int64_t c_out, int64_t co_first,
                               int64_t co_step, int n, int s, Load load, double (&acc)[kTile]) {
  for (int j = 0; j < kTile; ++j) acc[j] = 0.0;
#if defined(__CUDA_ARCH__)
#pragma unroll 4
#endif
  for (int64_t r = s; r < n_items; r += k_slices) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int j = 0; j < kTile; ++j)
      if (j < n) acc[j] += load(contrib + r * c_out + co_first + j * co_step);
  }
}

/// out[b, co] = multiplier * (conv_bias[co] + (sum over ci of the plane contributions) / (H'W')).
FB_HOST_DEVICE float gap_output(double multiplier, float conv_bias, double contributions, double inv_area) {
  return static_cast<float>(multiplier * (static_cast<double>(conv_bias) + contributions * inv_area));
}

}  // namespace fb::fused::convt2d_mul_gap::detail
