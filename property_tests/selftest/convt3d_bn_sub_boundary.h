#pragma once
/// Boundary set of convt3d_bn_sub (#15; fused/convt3d_bn_sub/convt3d_bn_sub.cu, the block programs in
/// fused/convt3d_bn_sub/plan.h, the tile in fused/conv3d/simt_fp32_tile.cuh): prep, centring,
/// the pass kernels (statistics in training, writing in eval) in 12 instantiations (J0 = ceil(k/s)
/// of 1, 2 or generic; one input-channel chunk or several), finalize, and the training rows
/// launch (bands staged by bulk copies, or rows read straight from the buffer).
/// See property_tests/selftest/boundary.h.
#include <cstdio>
#include <string>
#include <vector>

#include "fused/convt3d_bn_sub/finalize.cuh"
#include "fused/convt3d_bn_sub/rows.cuh"
#include "property_tests/selftest/boundary.h"

namespace fb::boundary::convt3d_bn_sub {

namespace bsub = fb::fused::convt3d_bn_sub;
namespace tile = fb::fused::conv3d::simt_fp32;

struct boundary_case {
  std::string note;
  bsub::problem problem;
  bool bias;
  input_kind inputs;
};

/// "kernel:pass_kernel<J0=..,chunked=..,stats=..>" as the paths name the instantiations.
inline std::string pass_kernel_name(int variant, bool chunked, bool stats) {
  return "kernel:pass_kernel<J0=" + std::string(variant == 0 ? "generic" : std::to_string(variant)) +
         ",chunked=" + (chunked ? "1" : "0") + ",stats=" + (stats ? "1" : "0") + ">";
}

inline std::vector<path> paths() {
  std::vector<path> out = {
      {"kernel:prep_kernel", "tap-box sums, x's centres, the arranged weights", ""},
      {"kernel:centring_kernel", "means, tap shares, class or prefix tables", ""},
      {"kernel:finalize_kernel", "batch statistics, running buffers, scales", ""},
      {"kernel:rows_staged_kernel", "training rows in bands staged by bulk copies", ""},
      {"kernel:rows_kernel<int>", "training rows too wide for a band, read straight from the buffer", ""},
      {"kernel:rows_kernel<int64_t>", "the same with 64-bit plane offsets",
       "needs a (b, c) output plane of >= 2^31 floats (8 GiB): beyond the device's memory under a sanitizer; "
       "it differs from rows_kernel<int> only in the offsets' type"},
  };
  for (int v : {1, 2, 0})
    for (bool chunked : {false, true})
      for (bool stats : {true, false})
        out.push_back({pass_kernel_name(v, chunked, stats),
                       std::string(stats ? "training statistics pass" : "eval writing pass") +
                           (chunked ? ", input channels staged in several chunks" : ", all channels staged at once"),
                       ""});
  const std::vector<path> more = {
      {"tiles_d>=2", "several tiles along d", ""},
      {"tiles_h>=2", "several tiles along h", ""},
      {"tiles_w>=2", "several tiles along w (rows of more than 32 bases)", ""},
      {"co_blocks>=2", "several blocks of 16 output channels", ""},
      {"co_block_padded", "a channel block padded past C_out", ""},
      {"weights_double_buffered", "the next phase's weights staged while this phase computes", ""},
      {"weights_single_buffered", "one weight buffer (several chunks, or too little shared memory)", ""},
      {"class_tables", "output centres from per-phase class tables (J0 <= 2)", ""},
      {"centre_at", "output centres from the prefix tables (J0 > 2)", ""},
      {"phases_without_taps", "phases with no tap (k < s): outputs are the bias alone", ""},
      {"slab_groups", "partial sums of d-slabs inside one channel (a channel's taps exceed a group)", ""},
      {"group_spans_chunks", "a channel group that spans two staged chunks", ""},
      {"bands>=2", "several staged bands per slice", ""},
      {"band_short_last", "a slice's last band shorter than the others", ""},
      {"finalize_rounds>=2", "more than 32 samples: finalize sums them in rounds", ""},
      {"eval", "running statistics (eval mode)", ""},
      {"rows_grid_stride>=2", "more than 2^20 slices or band items: the rows launches stride",
       "needs more than 2^20 blocks' worth of (b, co, od) slices: far past a sanitizer run; the loop body is "
       "the same for every stride"},
  };
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

inline std::vector<std::string> reached(const bsub::problem& p, const device_limits&) {
  const bsub::detail::plan pl = bsub::detail::make_plan(p);
  const tile::geometry& g = pl.g;
  const bool chunked = g.n_ci_chunks > 1;
  bool slab_groups = false, spans_chunks = false;
  for (int64_t ph = 0; ph < g.n_phases; ++ph) {
    const tile::phase_pos pp = tile::phase_of(g, ph);
    if (pp.taps == 0) continue;
    slab_groups = slab_groups || pp.group == 0;
    spans_chunks = spans_chunks || (chunked && pp.group > 0 && g.ci_chunk % pp.group != 0 && g.c_in > pp.group);
  }
  reached_paths r;
  r.add("kernel:prep_kernel", true);
  r.add("kernel:centring_kernel", true);
  r.add("kernel:finalize_kernel", true);
  r.add("kernel:rows_staged_kernel", pl.training && pl.band_rows > 0);
  r.add("kernel:rows_kernel<int>", pl.training && pl.band_rows == 0 && pl.spatial < (int64_t{1} << 31));
  r.add("kernel:rows_kernel<int64_t>", pl.training && pl.band_rows == 0 && pl.spatial >= (int64_t{1} << 31));
  r.add(pass_kernel_name(g.variant, chunked, pl.training), true);
  r.add("tiles_d>=2", g.n_tile[0] >= 2);
  r.add("tiles_h>=2", g.n_tile[1] >= 2);
  r.add("tiles_w>=2", g.n_tile[2] >= 2);
  r.add("co_blocks>=2", g.n_co_blocks >= 2);
  r.add("co_block_padded", g.c_out % tile::k_co_block != 0);
  r.add("weights_double_buffered", g.w_buffers == 2);
  r.add("weights_single_buffered", g.w_buffers == 1);
  r.add("class_tables", pl.class_table);
  r.add("centre_at", !pl.class_table);
  r.add("phases_without_taps", p.kernel_size < p.stride);
  r.add("slab_groups", slab_groups);
  r.add("group_spans_chunks", spans_chunks);
  r.add("bands>=2", pl.training && pl.band_rows > 0 && pl.band_count >= 2);
  r.add("band_short_last", pl.training && pl.band_rows > 0 && g.dim[1].n_out % pl.band_rows != 0);
  r.add("finalize_rounds>=2", pl.training && p.batch > bsub::detail::k_finalize_samples);
  r.add("eval", !pl.training);
  const int64_t slices = bsub::detail::output_slices(pl);
  r.add("rows_grid_stride>=2", pl.training && (pl.band_rows > 0 ? slices * pl.band_count : slices) > (int64_t{1} << 20));
  return r.take();
}

inline bsub::problem make(int64_t b, int64_t ci, int64_t co, int64_t d, int64_t h, int64_t w, int64_t k, int64_t s,
                          int64_t pad, bool training) {
  return bsub::problem{b, ci, co, d, h, w, k, s, pad, training, 1e-5, 0.1};
}

/// The set: every pass instantiation in both modes, small enough for compute-sanitizer.
inline std::vector<boundary_case> cases() {
  return {
      // J0 = 2 (k 3 or 4, s 2): the default's unrolled variant.
      {"J0 2, 30 input channels in 2 chunks (a group of 16 spans them), training", make(2, 30, 9, 5, 9, 11, 3, 2, 1, true),
       true, input_kind::normal},
      {"J0 2, 64 input channels in 3 chunks, eval", make(1, 64, 20, 3, 5, 6, 3, 2, 1, false), false, input_kind::uniform},
      {"J0 2, 33 output channels (3 blocks, padded), training", make(2, 6, 33, 7, 9, 10, 3, 2, 1, true), true,
       input_kind::uniform},
      {"J0 2, all-two-tap phases (k 4), eval", make(2, 7, 5, 8, 9, 10, 4, 2, 1, false), false, input_kind::offset},
      // J0 = 1 (k <= s).
      {"J0 1, k 2 < s 4 (phases without taps), training", make(3, 5, 6, 9, 10, 11, 2, 4, 0, true), true,
       input_kind::normal},
      {"J0 1, eval", make(2, 5, 6, 9, 10, 11, 2, 2, 0, false), true, input_kind::sparse},
      {"J0 1, 120 input channels in chunks, training", make(1, 120, 5, 3, 4, 5, 2, 2, 0, true), false, input_kind::uniform},
      {"J0 1, 120 input channels in chunks, eval", make(1, 120, 5, 3, 4, 5, 2, 2, 0, false), true, input_kind::normal},
      // Generic tap loop (J0 >= 3).
      {"J0 7 (k 7, s 1): one channel per chunk, d-slab groups, training", make(1, 5, 7, 6, 9, 12, 7, 1, 3, true), true,
       input_kind::sparse},
      {"J0 7, chunked, eval", make(2, 3, 5, 4, 7, 9, 7, 1, 0, false), true, input_kind::normal},
      {"J0 3 (k 3, s 1), one chunk, training", make(2, 7, 5, 8, 9, 10, 3, 1, 1, true), true, input_kind::uniform},
      {"J0 3, one chunk, eval", make(2, 7, 5, 8, 9, 10, 3, 1, 1, false), false, input_kind::offset},
      // Tiles, bands, rows, rounds.
      {"40^3 at s 1: many tiles in every dimension, rows of 42 bases", make(1, 3, 4, 40, 40, 40, 3, 1, 1, true), true,
       input_kind::border_only},
      {"157 x 157 planes: several staged bands, the last short", make(1, 2, 3, 2, 40, 40, 3, 4, 1, true), true,
       input_kind::normal},
      {"rows of 8397 floats: too wide for a band (the unstaged rows launch)", make(2, 2, 3, 1, 3, 2100, 3, 4, 1, true),
       false, input_kind::uniform},
      {"33 samples: finalize in two rounds", make(33, 2, 3, 2, 3, 4, 3, 2, 1, true), true, input_kind::normal},
      {"padding past the kernel (crops at both borders)", make(2, 3, 4, 6, 7, 8, 3, 3, 5, true), true,
       input_kind::border_only},
  };
}

inline model_set set() {
  return make_set<boundary_case>(
      "convt3d_bn_sub", paths(), cases(), reached,
      [](const boundary_case& c) {
        const bsub::problem& p = c.problem;
        char buf[400];
        std::snprintf(buf, sizeof buf,
                      R"({"batch_size":%lld,"in_channels":%lld,"out_channels":%lld,"depth":%lld,"height":%lld,"width":%lld,"kernel_size":%lld,"stride":%lld,"padding":%lld,"bias":%s,"training":%s})",
                      (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.depth,
                      (long long)p.height, (long long)p.width, (long long)p.kernel_size, (long long)p.stride,
                      (long long)p.padding, c.bias ? "true" : "false", p.training ? "true" : "false");
        return std::string(buf);
      },
      [](const bsub::problem& p) {
        const bsub::detail::plan pl = bsub::detail::make_plan(p);
        return static_cast<double>(p.batch * p.in_channels * p.depth * p.height * p.width) +
               static_cast<double>(p.batch * p.out_channels * pl.spatial);
      },
      [](const boundary_case& c) {
        const bsub::problem& p = c.problem;
        char buf[200];
        std::snprintf(buf, sizeof buf, "B=%lld Cin=%lld Cout=%lld D=%lld H=%lld W=%lld k=%lld s=%lld p=%lld %s%s",
                      (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.depth,
                      (long long)p.height, (long long)p.width, (long long)p.kernel_size, (long long)p.stride,
                      (long long)p.padding, p.training ? "train" : "eval", c.bias ? "" : " no-bias");
        return std::string(buf);
      });
}

}  // namespace fb::boundary::convt3d_bn_sub

FB_BOUNDARY_MODEL(convt3d_bn_sub, fb::boundary::convt3d_bn_sub::set)
