#pragma once
/// Boundary set of convt2d_gap_bias_lse (#42; fused/convt2d_gap_bias_lse/convt2d_gap_bias_lse.cu): sums_kernel (a warp
/// per item: weight tap sums of 32 (ci, co) pairs, or one 4096-element chunk of a plane; a
/// persistent grid striding over the items) and lse_kernel (a block per sample, striding over the
/// samples; warps over the input channels, lanes over a plane's chunks, threads over the output
/// channels). See property_tests/selftest/boundary.h.
#include <cstdio>
#include <string>
#include <vector>

#include "fused/convt2d_gap_bias_lse/plan.h"
#include "property_tests/selftest/boundary.h"

namespace fb::boundary::convt2d_gap_bias_lse {

namespace gl = fb::fused::convt2d_gap_bias_lse;

/// Threads of both kernels (the .cu file's k_block) and warps per block.
constexpr int k_threads = 256;
constexpr int64_t k_warps = k_threads / 32;

struct boundary_case {
  std::string note;
  gl::problem problem;
  input_kind inputs;
};

inline std::vector<path> paths() {
  return {
      {"kernel:sums_kernel", "the tap sums and plane-chunk sums", ""},
      {"kernel:lse_kernel", "the per-sample logits and logsumexp", ""},
      {"sums.wsum_items>=2", "several weight-tap-sum items", ""},
      {"sums.wsum_item_partial", "a weight item with idle lanes (C_in*C_out not a multiple of 32)", ""},
      {"sums.chunks_per_plane>=2", "planes of several 4096-element chunks", ""},
      {"sums.chunk_short_last", "a plane's last chunk shorter than 4096", ""},
      {"sums.plane_unaligned", "planes that start off a 16-byte boundary (H*W not a multiple of 4)", ""},
      {"sums.grid_stride>=2", "more items than resident warps: the persistent grid strides", ""},
      {"lse.ci_loop>=2", "more input channels than warps (8)", ""},
      {"lse.chunk_lane_loop>=2", "more chunks per plane than lanes (32)", ""},
      {"lse.co_loop>=2", "more output channels than threads (256)", ""},
      {"lse.batch_loop>=2", "more samples than resident blocks: blocks stride over samples", ""},
  };
}

inline std::vector<std::string> reached(const gl::problem& p, const device_limits& lim) {
  const gl::detail::plan pl = gl::detail::make_plan(p);
  const int64_t resident = lim.resident_upper_bound(k_threads);
  const int64_t n_items = pl.n_wsum_items + pl.n_chunk_items;
  reached_paths r;
  r.add("kernel:sums_kernel", true);
  r.add("kernel:lse_kernel", true);
  r.add("sums.wsum_items>=2", pl.n_wsum_items >= 2);
  r.add("sums.wsum_item_partial", pl.c_in * pl.c_out % gl::detail::k_wsum_pairs_per_item != 0);
  r.add("sums.chunks_per_plane>=2", pl.chunks_per_plane >= 2);
  r.add("sums.chunk_short_last", pl.chunks_per_plane >= 2 && pl.plane_size % fb::fused::detail::k_chunk_elems != 0);
  r.add("sums.plane_unaligned", pl.n_planes >= 2 && pl.plane_size % 4 != 0);
  r.add("sums.grid_stride>=2", n_items > resident * k_warps);
  r.add("lse.ci_loop>=2", pl.c_in > k_warps);
  r.add("lse.chunk_lane_loop>=2", pl.chunks_per_plane > 32);
  r.add("lse.co_loop>=2", pl.c_out > k_threads);
  r.add("lse.batch_loop>=2", pl.batch > resident);
  return r.take();
}

/// The set: small enough for compute-sanitizer (the largest input is 131K floats).
inline std::vector<boundary_case> cases() {
  return {
      {"planes of 2 chunks, the last short; 9 input channels; tap-sum items with idle lanes",
       {2, 9, 37, 70, 75, 3}, input_kind::normal},
      {"33 chunks per plane (the lse lanes loop twice)", {1, 1, 3, 363, 362, 1}, input_kind::uniform},
      {"300 output channels (the lse channel loop)", {2, 3, 300, 5, 7, 2}, input_kind::offset},
      {"1100 samples x 8 channels of 1x1: more items than resident warps, more samples than blocks",
       {1100, 8, 5, 1, 1, 2}, input_kind::sparse},
      {"k 7, odd sizes", {3, 5, 6, 9, 11, 7}, input_kind::border_only},
  };
}

inline model_set set() {
  return make_set<boundary_case>(
      "convt2d_gap_bias_lse", paths(), cases(), reached,
      [](const boundary_case& c) {
        const gl::problem& p = c.problem;
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      R"({"batch_size":%lld,"in_channels":%lld,"out_channels":%lld,"height":%lld,"width":%lld,"kernel_size":%lld})",
                      (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.height,
                      (long long)p.width, (long long)p.kernel_size);
        return std::string(buf);
      },
      [](const gl::problem& p) {
        return static_cast<double>(p.batch * p.in_channels * p.height * p.width + p.batch);
      },
      [](const boundary_case& c) {
        const gl::problem& p = c.problem;
        return "B=" + std::to_string(p.batch) + " Cin=" + std::to_string(p.in_channels) + " Cout=" +
               std::to_string(p.out_channels) + " H=" + std::to_string(p.height) + " W=" + std::to_string(p.width) +
               " k=" + std::to_string(p.kernel_size);
      });
}

}  // namespace fb::boundary::convt2d_gap_bias_lse

FB_BOUNDARY_MODEL(convt2d_gap_bias_lse, fb::boundary::convt2d_gap_bias_lse::set)
