#pragma once
/// Boundary set of convt3d_ln_gelu_scale (#34; fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale.cu, the block programs
/// in fused/convt3d_ln_gelu_scale/plan.h and fused/conv3d/mma_fp64_tile.cuh): the weight
/// arrangement and the pass (a block per sample, channel group, d base and tile of h bases of one
/// (d, h) phase pair; w phases in position passes of warp_rows x 32 positions; input channels in
/// chunks; LayerNorm rows of W' = C_out <= 128 in shared memory).
///
/// Written against the plan as of d64867c; the split row buffer and three blocks per SM added
/// 2026-11-26, the persistent kernel's paths in the sixth session. The kernel is being rewritten (the lead's #34 work): this file is the one place to
/// update when its plan fields change (keep the paths' names where the boundary stays). See
/// property_tests/selftest/boundary.h.
#include <cstdio>
#include <string>
#include <vector>

#include "fused/convt3d_ln_gelu_scale/epilogue.cuh"
#include "property_tests/selftest/boundary.h"

namespace fb::boundary::convt3d_ln_gelu_scale {

namespace lgs = fb::fused::convt3d_ln_gelu_scale;
namespace conv = fb::fused::conv3d::mma_fp64;

struct boundary_case {
  std::string note;
  lgs::problem problem;
  bool bias;
  input_kind inputs;
};

inline std::vector<path> paths() {
  return {
      {"kernel:arrange_kernel", "the weights in the fp64 MMA's fragment order", ""},
      {"kernel:pass_kernel", "convolution on the fp64 tensor cores + LayerNorm/GELU/scale, a block per tile", ""},
      {"kernel:persistent_kernel", "the same tiles in resident blocks, each tile's x box by a TMA tensor copy", ""},
      {"persistent_tiles_claimed", "more tiles than resident blocks: blocks take further tiles from the counter", ""},
      {"persistent_empty_tiles", "persistent blocks meeting tiles with no rows (d or h phases of fewer bases)", ""},
      {"persistent_box_w_skip", "a box whose first column is not 16-byte aligned in x (the copy starts before it)", ""},
      {"persistent_box_w_aligned", "a box whose first column is 16-byte aligned in x", ""},
      {"persistent_commit_rounds>=2", "the fp32 box converted to fp64 in several rounds", ""},
      {"persistent_rows_whole", "persistent blocks with whole rows in the region (the box anywhere in x's memory)", ""},
      {"persistent_rows_own_warp", "each warp finishes the rows it stored: no block barrier before the rows", ""},
      {"persistent_rows_shared", "persistent blocks whose warps finish rows other warps stored", ""},
      {"chunks>=2", "input channels staged in several chunks", ""},
      {"channel_groups>=2", "more than 64 output channels: several channel groups", ""},
      {"channel_group_partial", "a last channel group narrower than 64", ""},
      {"warp_cols=1", "C_out <= 32: one warp column", ""},
      {"warp_cols=2", "C_out > 32: two warp columns", ""},
      {"position_passes>=2", "a w phase with more positions than the warps hold", ""},
      {"h_tiles>=2", "several tiles of h bases in a phase", ""},
      {"phases_without_taps", "k < s: phases with no tap", ""},
      {"j0>=3", "ceil(k/s) >= 3 taps per dimension", ""},
      {"row=128", "LayerNorm rows of the largest W' (128)", ""},
      {"row=1", "single-value LayerNorm rows (W' = 1)", ""},
      {"rows_split", "the last w phase's row values in x's memory after the k16 loops", ""},
      {"rows_split_unaligned", "split rows whose first segment is not a multiple of 4 values", ""},
      {"rows_whole", "whole LayerNorm rows in the region", ""},
      {"three_blocks_per_sm", "a block within a third of the SM's shared memory", ""},
  };
}

inline std::vector<std::string> reached(const lgs::problem& p, const device_limits& limits) {
  const lgs::detail::plan pl = lgs::detail::make_plan(p);
  const conv::geometry& g = pl.g;
  // Position passes: a block holds up to tile_h rows of an h phase; each w phase's positions are
  // rows x its w bases, run warp_rows x 32 at a time.
  bool passes = false;
  for (int rh = 0; rh < g.s[1]; ++rh) {
    const int rows = g.order[1].count(rh) < g.tile_h ? g.order[1].count(rh) : g.tile_h;
    for (int rw = 0; rw < g.s[2]; ++rw)
      passes = passes || rows * g.order[2].count(rw) > g.warp_rows * conv::k_warp_m;
  }
  reached_paths r;
  r.add("kernel:arrange_kernel", g.wt_items > 0);
  r.add("kernel:pass_kernel", !pl.persistent);
  r.add("kernel:persistent_kernel", pl.persistent);
  const int blocks_per_sm = 3 - conv::smem_tier(pl.smem_bytes + conv::k_persistent_static_bytes);
  r.add("persistent_tiles_claimed", pl.persistent && g.n_blocks > static_cast<int64_t>(limits.sms) * blocks_per_sm);
  bool empty_tiles = false;
  for (int rd = 0; rd < g.s[0]; ++rd) empty_tiles = empty_tiles || g.order[0].count(rd) < g.qd_slots;
  for (int rh = 0; rh < g.s[1]; ++rh)
    empty_tiles = empty_tiles || (g.order[1].count(rh) + g.tile_h - 1) / g.tile_h < g.h_tiles;
  r.add("persistent_empty_tiles", pl.persistent && empty_tiles);
  r.add("persistent_box_w_skip", pl.persistent && conv::box_w_skip(g) > 0);
  r.add("persistent_box_w_aligned", pl.persistent && conv::box_w_skip(g) == 0);
  r.add("persistent_commit_rounds>=2", pl.persistent && (g.c_in * g.xd > conv::k_warps * conv::k_commit_planes ||
                                                         g.xh * g.xw > 32 * conv::k_commit_elems));
  r.add("persistent_rows_whole", pl.persistent && !pl.last_into_x);
  r.add("persistent_rows_own_warp", pl.persistent && pl.rows_own_warp);
  r.add("persistent_rows_shared", pl.persistent && !pl.rows_own_warp);
  r.add("chunks>=2", g.n_chunks >= 2);
  r.add("channel_groups>=2", g.n_groups >= 2);
  r.add("channel_group_partial", g.n_groups >= 2 && g.c_out % conv::k_group != 0);
  r.add("warp_cols=1", g.warp_cols == 1);
  r.add("warp_cols=2", g.warp_cols == 2);
  r.add("position_passes>=2", passes);
  r.add("h_tiles>=2", g.h_tiles >= 2);
  r.add("phases_without_taps", p.kernel_size < p.stride);
  r.add("j0>=3", g.j0[0] >= 3);
  r.add("row=128", pl.w_out == lgs::detail::k_max_row);
  r.add("row=1", pl.w_out == 1);
  r.add("rows_split", pl.last_into_x);
  r.add("rows_split_unaligned", pl.last_into_x && pl.region_row_values % 4 != 0);
  r.add("rows_whole", !pl.last_into_x);
  r.add("three_blocks_per_sm", pl.smem_bytes <= conv::k_smem_three_per_sm_bytes);
  return r.take();
}

/// The set (W' = C_out in every problem), small enough for compute-sanitizer.
inline std::vector<boundary_case> cases() {
  return {
      {"W' 40 (k 1): 5 input channels", {2, 5, 40, 6, 9, 40, 1, 1, 0, 1e-5, 1.0}, true, input_kind::normal},
      {"W' 64, k 7: chunked staging", {1, 9, 64, 4, 7, 58, 7, 1, 0, 1e-3, -2.0}, false, input_kind::offset},
      {"W' 100: two channel groups (the last partial), position passes", {1, 3, 100, 3, 4, 100, 1, 1, 0, 1e-5, 0.7},
       true, input_kind::uniform},
      {"W' 128 (the largest row)", {1, 2, 128, 2, 3, 128, 1, 1, 0, 1e-5, -1.5}, true, input_kind::sparse},
      {"64 input channels at k 4, s 2 (chunked)", {1, 64, 64, 3, 5, 32, 4, 2, 1, 1e-5, 0.5}, true, input_kind::uniform},
      {"k 5, s 2: ceil(k/s) = 3", {2, 7, 37, 6, 7, 18, 5, 2, 1, 0.2, 1.5}, true, input_kind::offset},
      {"k 1 < s 2: phases without taps", {3, 6, 33, 9, 10, 17, 1, 2, 0, 1e-5, 1.0}, true, input_kind::sparse},
      {"s 4, p 2: crops", {1, 4, 50, 5, 6, 14, 2, 4, 2, 1e-5, -1.0}, false, input_kind::border_only},
      {"W' 8: one warp column, 40 x 40 inputs (several h tiles)", {1, 3, 8, 40, 40, 4, 2, 2, 0, 1e-5, 1.0}, true,
       input_kind::normal},
      {"W' 1", {2, 3, 1, 5, 6, 1, 1, 1, 0, 1e-5, 1.0}, true, input_kind::uniform},
      {"W' 16, 512 tiles: persistent blocks claim further tiles", {4, 2, 16, 16, 32, 8, 2, 2, 0, 1e-5, 1.0}, true,
       input_kind::normal},
      {"k 3, s 2, W 8: persistent, split rows, d phases of 6 and 5 bases (empty tiles)",
       {2, 16, 17, 5, 6, 8, 3, 2, 0, 1e-5, 1.0}, true, input_kind::offset},
      {"the default's k 4, s 2, p 1 with C_in 48 on 2 x 4 x 32: the box in two conversion rounds",
       {1, 48, 64, 2, 4, 32, 4, 2, 1, 1e-5, 1.0}, true, input_kind::normal},
  };
}

inline model_set set() {
  return make_set<boundary_case>(
      "convt3d_ln_gelu_scale", paths(), cases(), reached,
      [](const boundary_case& c) {
        const lgs::problem& p = c.problem;
        char buf[400];
        std::snprintf(buf, sizeof buf,
                      R"({"batch_size":%lld,"in_channels":%lld,"out_channels":%lld,"depth":%lld,"height":%lld,"width":%lld,"kernel_size":%lld,"stride":%lld,"padding":%lld,"bias":%s,"eps":%.17g,"scaling_factor":%.17g})",
                      (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.depth,
                      (long long)p.height, (long long)p.width, (long long)p.kernel_size, (long long)p.stride,
                      (long long)p.padding, c.bias ? "true" : "false", p.eps, p.scaling_factor);
        return std::string(buf);
      },
      [](const lgs::problem& p) {
        const lgs::detail::plan pl = lgs::detail::make_plan(p);
        const int64_t d = fb::fused::convt_output_size(p.depth, p.kernel_size, p.stride, p.padding, 0);
        const int64_t h = fb::fused::convt_output_size(p.height, p.kernel_size, p.stride, p.padding, 0);
        return static_cast<double>(p.batch * p.in_channels * p.depth * p.height * p.width) +
               static_cast<double>(p.batch * p.out_channels * d * h * pl.w_out);
      },
      [](const boundary_case& c) {
        const lgs::problem& p = c.problem;
        char buf[200];
        std::snprintf(buf, sizeof buf, "B=%lld Cin=%lld Cout=%lld D=%lld H=%lld W=%lld k=%lld s=%lld p=%lld",
                      (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.depth,
                      (long long)p.height, (long long)p.width, (long long)p.kernel_size, (long long)p.stride,
                      (long long)p.padding);
        return std::string(buf);
      });
}

}  // namespace fb::boundary::convt3d_ln_gelu_scale

FB_BOUNDARY_MODEL(convt3d_ln_gelu_scale, fb::boundary::convt3d_ln_gelu_scale::set)
