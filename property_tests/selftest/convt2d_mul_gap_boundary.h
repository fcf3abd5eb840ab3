#pragma once
/// Boundary set of convt2d_mul_gap (#44; fused/convt2d_mul_gap/convt2d_mul_gap.cu): one persistent kernel; a block
/// owns a contiguous run of work items (<= 32768-element chunks of a plane), streams them in
/// batches of up to 4, finishes each batch's tap rectangles and contributions, and arrives on its
/// samples' counters; the block completing a sample sums the sample's rows (8 slices, then tiles of
/// 128 output channels). See property_tests/selftest/boundary.h.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "fused/convt2d_mul_gap/plan.h"
#include "property_tests/selftest/boundary.h"

namespace fb::boundary::convt2d_mul_gap {

namespace mg = fb::fused::convt2d_mul_gap;

/// The kernel's constants (fused/convt2d_mul_gap/convt2d_mul_gap.cu): threads, warps, items a block streams per
/// batch, tap intervals cached per block, shared bytes for a batch's item states, output channels
/// per finishing tile.
constexpr int k_threads = 256;
constexpr int64_t k_warps = k_threads / 32;
constexpr int64_t k_max_batch = 4;
constexpr int64_t k_cached_taps = 64;
constexpr int64_t k_max_line_smem = 32 * 1024;
constexpr int64_t k_co_tile_channels = 32 * 4;

struct boundary_case {
  std::string note;
  mg::problem problem;
  input_kind inputs;
};

inline std::vector<path> paths() {
  return {
      {"kernel:mul_gap_kernel", "the whole pipeline (one launch)", ""},
      {"items_per_plane>=2", "planes of several 32768-element work items", ""},
      {"items_per_plane>=3", "planes of three work items (a middle item with no plane border)", ""},
      {"item_short_last", "a plane's last item shorter than 32768", ""},
      {"item_state_in_smem", "band partials and tap rectangles of a batch in shared memory", ""},
      {"item_state_in_workspace", "item states too large for shared memory (k = 65)", ""},
      {"corners_gathered", "the band x band corners loaded beside the band lines into the item states", ""},
      {"corners_read_from_x", "item states in shared memory, their corners too many for it: read from x", ""},
      {"block_items>=2", "every block owns two or more items (items >= 2 x resident blocks)", ""},
      {"block_batches>=2", "a block streams several batches (items > (batch + 1) x resident blocks)", ""},
      {"batch_spans_samples", "one block's batch holds items of two samples and completes both", ""},
      {"band_lines_loop>=2", "more band lines than warps (8)", ""},
      {"taps_beyond_cache", "tap intervals past the 64 cached per block (k > 64)", ""},
      {"finish_slices>=2", "each of the 8 slices of a sample sum adds two or more items", ""},
      {"finish_co_tiles>=2", "more than 128 output channels: several finishing tiles", ""},
      {"plane_unaligned", "planes that start off a 16-byte boundary (H*W not a multiple of 4)", ""},
  };
}

/// Bytes of an item's state (band partials and R) and of its band x band corners.
inline int64_t state_bytes_of(const mg::detail::plan& pl) {
  return (pl.n_band_rows + pl.n_band_cols + pl.n_taps) * static_cast<int64_t>(sizeof(double));
}
inline int64_t corner_bytes_of(const mg::detail::plan& pl) {
  return pl.n_band_rows * pl.n_band_cols * static_cast<int64_t>(sizeof(double));
}

/// Items a block streams per batch (run_cuda's choice: as many slots as fit, a slot holding the
/// corners too where they fit).
inline int64_t batch_items(const mg::detail::plan& pl) {
  const int64_t state_bytes = state_bytes_of(pl), with_corners = state_bytes + corner_bytes_of(pl);
  const int64_t slot_bytes = with_corners <= k_max_line_smem ? with_corners : state_bytes;
  return state_bytes <= k_max_line_smem ? std::min(k_max_batch, k_max_line_smem / slot_bytes) : k_max_batch;
}

inline std::vector<std::string> reached(const mg::problem& p, const device_limits& lim) {
  const mg::detail::plan pl = mg::detail::make_plan(p);
  const int64_t resident = lim.resident_upper_bound(k_threads);
  const int64_t state_bytes = state_bytes_of(pl);
  const int64_t batch = batch_items(pl);
  reached_paths r;
  r.add("kernel:mul_gap_kernel", true);
  r.add("items_per_plane>=2", pl.chunks_per_plane >= 2);
  r.add("items_per_plane>=3", pl.chunks_per_plane >= 3);
  r.add("item_short_last", pl.chunks_per_plane >= 2 && pl.plane_size % mg::detail::k_item_elems != 0);
  r.add("item_state_in_smem", state_bytes <= k_max_line_smem);
  r.add("item_state_in_workspace", state_bytes > k_max_line_smem);
  r.add("corners_gathered", state_bytes + corner_bytes_of(pl) <= k_max_line_smem);
  r.add("corners_read_from_x", state_bytes <= k_max_line_smem && state_bytes + corner_bytes_of(pl) > k_max_line_smem);
  // A block's run holds floor(n / G) or more items, G <= resident.
  r.add("block_items>=2", pl.n_items >= 2 * resident);
  r.add("block_batches>=2", pl.n_items >= (batch + 1) * resident);
  // One item per sample and runs of >= 2 items: every batch spans samples and completes them all.
  r.add("batch_spans_samples", pl.items_per_sample == 1 && batch >= 2 && pl.n_items >= 2 * resident);
  r.add("band_lines_loop>=2", pl.n_band_rows + pl.n_band_cols > k_warps);
  r.add("taps_beyond_cache", pl.k > k_cached_taps);
  r.add("finish_slices>=2", pl.items_per_sample >= 2 * mg::detail::k_slices);
  r.add("finish_co_tiles>=2", pl.c_out > k_co_tile_channels);
  r.add("plane_unaligned", pl.n_planes >= 2 && pl.plane_size % 4 != 0);
  return r.take();
}

/// The set: small enough for compute-sanitizer (the largest input is 307K floats).
inline std::vector<boundary_case> cases() {
  return {
      {"planes of 2 items (38000 elements), the last short", {2, 2, 3, 200, 190, 3, 2, 1, 1, 0.75f},
       input_kind::normal},
      {"planes of 3 items (75000 elements)", {1, 1, 2, 300, 250, 5, 3, 2, 2, -1.5f}, input_kind::border_only},
      {"5490 single-item planes: blocks stream several batches, 61 items per sample",
       {90, 61, 37, 8, 7, 3, 2, 1, 1, 0.5f}, input_kind::offset},
      {"2200 samples of one item: every batch spans and completes several samples", {2200, 1, 5, 8, 8, 3, 1, 0, 0, -2.0f},
       input_kind::uniform},
      {"k 65: item states in the workspace, taps past the cache", {2, 3, 5, 8, 8, 65, 1, 0, 0, 0.5f}, input_kind::uniform},
      {"k 65, stride 2, padding 30", {3, 2, 4, 9, 7, 65, 2, 30, 1, -2.0f}, input_kind::border_only},
      {"k 30, padding 30: every line a band line, the item state in shared memory, its 3600 corners read from x",
       {1, 2, 3, 60, 60, 30, 1, 30, 0, 0.5f}, input_kind::offset},
      {"130 output channels (two finishing tiles)", {2, 3, 130, 9, 10, 3, 2, 1, 1, 1.0f}, input_kind::sparse},
  };
}

inline model_set set() {
  return make_set<boundary_case>(
      "convt2d_mul_gap", paths(), cases(), reached,
      [](const boundary_case& c) {
        const mg::problem& p = c.problem;
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      R"({"batch_size":%lld,"in_channels":%lld,"out_channels":%lld,"height":%lld,"width":%lld,"kernel_size":%lld,"stride":%lld,"padding":%lld,"output_padding":%lld,"multiplier":%.9g})",
                      (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.height,
                      (long long)p.width, (long long)p.kernel_size, (long long)p.stride, (long long)p.padding,
                      (long long)p.output_padding, static_cast<double>(p.multiplier));
        return std::string(buf);
      },
      [](const mg::problem& p) {
        return static_cast<double>(p.batch * p.in_channels * p.height * p.width + p.batch * p.out_channels);
      },
      [](const boundary_case& c) {
        const mg::problem& p = c.problem;
        char buf[200];
        std::snprintf(buf, sizeof buf, "B=%lld Cin=%lld Cout=%lld H=%lld W=%lld k=%lld s=%lld p=%lld op=%lld",
                      (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.height,
                      (long long)p.width, (long long)p.kernel_size, (long long)p.stride, (long long)p.padding,
                      (long long)p.output_padding);
        return std::string(buf);
      });
}

}  // namespace fb::boundary::convt2d_mul_gap

FB_BOUNDARY_MODEL(convt2d_mul_gap, fb::boundary::convt2d_mul_gap::set)
