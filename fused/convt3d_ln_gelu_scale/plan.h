#pragma once
/// The plan (validation, geometry, workspace layout) of convt3d_ln_gelu_scale; its block programs are in
/// epilogue.cuh (the LayerNorm policy of the fp64 tensor-core loop) and its row math in layer_norm.cuh,
/// (KernelBench #34), shared by run_cuda (fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale.cu) and run_host
/// (fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale_host.cpp): the GPU runs them with one CUDA block per program instance
/// and a barrier per ex.sync(), the host block by block (fused/conv3d/mma_fp64_tile.cuh).
///
/// Launch sequence (one stream):
///   1. arrange  a thread per (phase, channel group, chunk, k16 step, n8 tile, lane): the weights in
///               the fp64 MMA's B-fragment order, fp32 (conv3d::mma_fp64::arrange_weights_item); then a
///               thread per entry of the koff tables, one per (phase, chunk): where each k of the
///               GEMM reads the staged x (conv3d::mma_fp64::arrange_koff_item).
///   2. pass     the convolution on the fp64 tensor cores (conv3d::mma_fp64::conv_block: a block per
///               sample, channel group, d base and tile_h h bases of one (d, h) phase pair, all w
///               phases; or, where plan::persistent, the same tiles in resident blocks:
///               conv3d::mma_fp64::conv_persistent), with the LayerNorm/GELU/scale epilogue on chip
///               (ln_policy): each w phase's
///               accumulators, rounded once to fp32 (y, as libtorch's fp32 conv output), go into a
///               row buffer in shared memory (the last w phase's into the staged x's memory once
///               the k16 loops are done with it, where it fits: phase_offset); after the last w
///               phase the block's rows are whole W' rows, each normalised (row_moments: one
///               pass of fp64 sums of the values less the row's first and of their squares, over
///               the row's one or two segments),
///               passed through exact GELU (fp32 erf of the once-rounded fp32 argument), scaled and
///               stored by a thread per row, 16 bytes at a time. No W' row ever goes to memory unnormalised;
///               nothing but the output is written.
///
/// Precision: every product of fp32 x and w is exact in fp64 and the sums are fp64, so y is the
/// correctly rounded convolution but for ~K 2^-53 of sum |x w| (K = C_in x taps). No centring of x
/// and no compensated sums are needed (the SIMT fp32 kernel before this one needed both, and a
/// per-output correction term, to stay as close to fp64 as libtorch's GEMM order).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "fused/arch/read_only.cuh"
#include "fused/conv3d/mma_fp64_tile.cuh"
#include "fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale.h"
#include "fused/math/convt_index.cuh"
#include "fused/runtime/plan_util.h"

namespace fb::fused::convt3d_ln_gelu_scale::detail {


/// The largest W' (== C_out) a block holds (its rows in shared memory).
constexpr int64_t k_max_row = 128;

/// Per output column w' of a LayerNorm row: gamma and beta (fp64: exact), read by every row (one
/// 16-byte shared load on the GPU).
struct alignas(16) ln_column {
  double gamma, beta;
};

/// The conv bias of every channel (C_out == W'), fp64, padded with zeros to whole channel groups
/// (a warp tile's channel is < conv3d::mma_fp64::k_group, so bp.first_channel + channel is always inside).
FB_HOST_DEVICE std::size_t ln_bias_count(int64_t w_out) {
  constexpr int64_t group = conv3d::mma_fp64::k_group;
  return static_cast<std::size_t>((w_out + group - 1) / group * group);
}

/// Shared memory of the LayerNorm region for `rows` LayerNorm rows of row_stride floats and rows of
/// w_out columns: the columns (ln_column), the channels' biases (ln_bias_count doubles), each
/// column's place in the phase-major row buffer (int, padded to 16 bytes), then the rows (fp32).
FB_HOST_DEVICE std::size_t ln_columns_bytes(int64_t w_out) {
  return static_cast<std::size_t>(w_out) * sizeof(ln_column) + ln_bias_count(w_out) * sizeof(double) +
         (static_cast<std::size_t>(w_out) * sizeof(int) + 15) / 16 * 16;
}
inline std::size_t ln_region_bytes(int64_t rows, int row_stride, int64_t w_out) {
  return ln_columns_bytes(w_out) + static_cast<std::size_t>(rows) * sizeof(float) * static_cast<std::size_t>(row_stride);
}

/// The row buffer's layout: a row holds its w phases one after the other, each with its w bases in
/// order (phase rw starts at phase_offset), so an accumulator fragment's 8 consecutive positions
/// are consecutive floats and a row is n values without gaps; rows are an odd number of floats
/// apart (the statistics' thread per row reads 32 rows in 32 different banks).
///
/// Where the block's last w phase runs in one position pass and its values fit in the staged x's
/// memory, the row buffer is split (plan::last_into_x): the region holds phases 0 .. s-2 (region_row_values
/// values per row), and the last phase's values go into x's memory once the k16 loops are done,
/// rows as far apart as the region's. A block then needs ~16 KB less (the default: three blocks per
/// SM instead of two). Row r's values are two segments, (region rows + r stride, region_row_values values) and
/// (x rows + r stride, the rest); the finish's places index both from the first segment's start
/// (x's memory lies before the region, at a fixed distance: negative places), so no value is found
/// through a branch.
FB_HOST_DEVICE int phase_offset(const conv3d::mma_fp64::geometry& g, int rw) {
  int off = 0;
  for (int r = 0; r < rw; ++r) off += g.order[2].count(r);
  return off;
}

/// Everything derived from a problem.
struct plan {
  conv3d::mma_fp64::geometry g;
  int64_t w_out;       ///< W' == C_out: the LayerNorm row length
  bool last_into_x;    ///< the last w phase's values go into x's memory (phase_offset)
  int region_row_values;             ///< values per row in the region's row buffer: W', or phases 0 .. s-2
  int row_stride;      ///< floats from one row to the next, in the region and in x's memory: odd
  int group_ch;        ///< channels of a block's LayerNorm rows: min(C_out, conv3d::mma_fp64::k_group)
  int64_t ln_rows;     ///< LayerNorm rows a block holds: tile_h x group_ch
  std::size_t workspace_bytes;  ///< the arranged weights (fp32), the koff tables and the alignment
  std::size_t smem_bytes;       ///< dynamic shared memory of the pass
  /// The persistent program serves the plan (conv3d::mma_fp64::conv_persistent; run_cuda also needs x 16-byte
  /// aligned): g.region_offset then leaves room for the koff tables of every w phase, in the same
  /// tier of blocks per SM as without them.
  bool persistent;
  /// Each finishing thread's rows (finish_rows: thread t takes rows t, t + 128, ...) were stored by
  /// its own warp in every w phase, and the last phase goes into x's memory (rows_stored_by_own_warp):
  /// the persistent program then needs no block-wide barrier before the rows (the default: a
  /// warp's 32 x 32 tile is one h row and 32 channels, the rows its 32 threads normalise).
  bool rows_own_warp;
  double eps, scale;
};

/// plan::rows_own_warp for a plan whose geometry is set: every (position, channel) a warp stores
/// (ln_policy::store: the C fragment of warp (warp_row, warp_col)) lies in a row that a thread of
/// the same warp finishes, in every w phase, each phase in one position pass.
inline bool rows_stored_by_own_warp(const conv3d::mma_fp64::geometry& g, bool last_into_x, int group_ch) {
  if (!last_into_x) return false;
  const int cap = g.warp_rows * conv3d::mma_fp64::k_warp_m;
  for (int rw = 0; rw < g.s[2]; ++rw) {
    const int n_qw = g.order[2].count(rw), positions = g.tile_h * n_qw;
    if (positions > cap) return false;
    for (int warp = 0; warp < conv3d::mma_fp64::k_warps; ++warp)
      for (int mt = 0; mt < conv3d::mma_fp64::k_mt; ++mt)
        for (int nt = 0; nt < conv3d::mma_fp64::k_nt; ++nt)
          for (int lane = 0; lane < 32; ++lane)
            for (int v = 0; v < arch::mma::k_c_regs; ++v) {
              const int m = conv3d::mma_fp64::tile_position(warp / g.warp_cols, mt, lane, v);
              const int ch = conv3d::mma_fp64::tile_channel(warp % g.warp_cols, nt, lane, v);
              if (m >= positions || ch >= group_ch) continue;
              const int row = (m / n_qw) * group_ch + ch;
              if (row % conv3d::mma_fp64::k_threads / 32 != warp) return false;
            }
  }
  return true;
}

/// Validates (std::invalid_argument naming field and rule) and derives the plan. max_chunk_ci
/// (tests) caps the input channels a block stages at once, to exercise the chunked K loop.
inline plan make_plan(const problem& p, int64_t max_chunk_ci = 0) {
  using fb::fused::detail::require;
  constexpr const char* m = "convt3d_ln_gelu_scale";
  fb::fused::detail::require_convt3d_sizes(p, m);
  const int64_t w_out = convt_output_size(p.width, p.kernel_size, p.stride, p.padding, 0);
  require(w_out == p.out_channels, m, "width",
          "gives W' = (width-1)*stride - 2*padding + kernel_size, which must equal out_channels "
          "(LayerNorm(out_channels) normalises the last dim); W'",
          w_out);
  require(p.in_channels * p.depth * p.height * p.width < (int64_t{1} << 31), m, "in_channels*depth*height*width",
          "must be < 2^31 (a sample's input is indexed in 32 bits)", p.in_channels * p.depth * p.height * p.width);
  require(w_out <= k_max_row, m, "out_channels",
          "must be <= 128 (a block holds whole rows of W' = out_channels in shared memory)", w_out);
  require(p.eps > 0.0 && std::isfinite(p.eps), m, "eps", "must be finite and > 0 (x1e9)",
          static_cast<int64_t>(p.eps * 1e9));
  require(std::isfinite(p.scaling_factor), m, "scaling_factor", "must be finite", 0);

  plan pl{};
  pl.w_out = w_out;
  const int64_t group = conv3d::mma_fp64::k_group;
  pl.group_ch = static_cast<int>(p.out_channels < group ? p.out_channels : group);
  // The last w phase's bases, and the values of the phases before it (phase_order: the phases of
  // one dimension are the same for every block).
  const phase_order w_order = phase_order_of(
      phase_dim{p.width, w_out, p.kernel_size, p.stride, p.padding});
  const int s = static_cast<int>(p.stride);
  const int n_last = w_order.count(s - 1);
  const int n_before = static_cast<int>(w_out) - n_last;
  const int cap = conv3d::mma_fp64::pass_positions(p.out_channels);
  // First with the split row buffer (the last phase in x's memory), where that phase runs in one
  // position pass; then, if x's memory turns out too small for it, with whole rows in the region.
  bool fits = false;
  for (const bool split : {true, false}) {
    pl.last_into_x = split;
    pl.region_row_values = split ? n_before : static_cast<int>(w_out);
    pl.row_stride = (split && n_last > n_before ? n_last : pl.region_row_values) | 1;
    fits = conv3d::mma_fp64::make_geometry(
        pl.g, p.batch, p.in_channels, p.out_channels, p.depth, p.height, p.width, p.kernel_size, p.stride, p.padding,
        [&](int tile_h) {
          // A tile whose last phase needs several position passes keeps whole rows in the region.
          const int stride = split && tile_h * n_last <= cap ? pl.row_stride : static_cast<int>(w_out | 1);
          return ln_region_bytes(static_cast<int64_t>(tile_h) * pl.group_ch, stride, w_out);
        },
        max_chunk_ci);
    if (!split || !fits) break;
    const std::size_t x_rows_bytes =
        static_cast<std::size_t>(pl.g.tile_h) * pl.group_ch * static_cast<std::size_t>(pl.row_stride) * sizeof(float);
    if (pl.g.tile_h * n_last <= cap && x_rows_bytes <= pl.g.x_bytes) break;
  }
  require(fits, m, "kernel_size",
          "too large for the stride: one input channel's box (ceil(k/s) x ceil(k/s) lines of about W'/s + "
          "ceil(k/s) fp64 values) must fit in shared memory beside one row of W' outputs; ceil(k/s)",
          (p.kernel_size + p.stride - 1) / p.stride);
  const conv3d::mma_fp64::geometry& g = pl.g;
  require(g.n_blocks < (int64_t{1} << 31), m, "batch", "too large (blocks of the grid must be < 2^31); blocks",
          g.n_blocks);
  require(g.wt_floats < (int64_t{1} << 31), m, "in_channels*out_channels*kernel_size^3",
          "too large (arranged weights must be < 2^31 floats)", g.wt_floats);
  pl.ln_rows = static_cast<int64_t>(g.tile_h) * pl.group_ch;
  // The arranged weights, the koff tables, then the persistent program's tile counter.
  pl.workspace_bytes = fb::fused::detail::workspace_bytes_for((g.wt_floats + g.koff_ints + 1) / 2 + 1);
  const std::size_t region = ln_region_bytes(pl.ln_rows, pl.row_stride, pl.w_out);
  pl.smem_bytes = conv3d::mma_fp64::smem_bytes(g, region);
  // The persistent program: its box must stay clear of the last w phase's rows in x's memory.
  const std::size_t x_rows_bytes =
      pl.last_into_x ? static_cast<std::size_t>(pl.ln_rows) * static_cast<std::size_t>(pl.row_stride) * sizeof(float) : 0;
  const std::size_t persistent_region_offset = (g.x_bytes + conv3d::mma_fp64::persistent_koff_bytes(g) + 15) / 16 * 16;
  pl.persistent = conv3d::mma_fp64::persistent_fits(g, x_rows_bytes) &&
                  conv3d::mma_fp64::smem_tier(persistent_region_offset + region +
                                              conv3d::mma_fp64::k_persistent_static_bytes) ==
                      conv3d::mma_fp64::smem_tier(pl.smem_bytes);
  if (pl.persistent) {
    pl.g.region_offset = persistent_region_offset;
    pl.smem_bytes = conv3d::mma_fp64::smem_bytes(pl.g, region);
  }
  pl.rows_own_warp = pl.persistent && rows_stored_by_own_warp(pl.g, pl.last_into_x, pl.group_ch);
  pl.eps = p.eps;
  pl.scale = p.scaling_factor;
  return pl;
}

/// The pointers of one call (kernel argument, with the plan).
struct args {
  const float* x;
  const float* weight;
  const float* gamma;
  const float* beta;
  float* out;
  double* ws;  ///< aligned workspace base
  /// The conv bias (C_out), or null. It cancels in the LayerNorm, but it decides the fp32 grid y is
  /// rounded to: PyTorch rounds conv + bias, so ln_policy::store adds it before the one rounding
  /// (without it, a row whose bias nearly cancels its level is rounded on a coarser grid than
  /// PyTorch's: 13x further from fp64 on near-constant rows, the 4800d2d gate).
  const float* bias;
};

/// The call's pointers, each checked, as args (workspace: the caller's pointer, aligned here). One
/// check for the CUDA path and the host executor, as #15's bind. The conv bias may be null (no bias).
inline args bind(const float* x, const float* weight, const float* conv_bias, const float* gamma, const float* beta,
                 float* out, void* workspace) {
  using fb::fused::detail::require_ptr;
  constexpr const char* m = "convt3d_ln_gelu_scale";
  require_ptr(x, m, "x");
  require_ptr(weight, m, "weight");
  require_ptr(gamma, m, "gamma");
  require_ptr(beta, m, "beta");
  require_ptr(out, m, "out");
  require_ptr(workspace, m, "workspace");
  return args{x, weight, gamma, beta, out, fb::fused::detail::aligned_workspace(workspace), conv_bias};
}

/// The arranged weights (the workspace's start) and the koff tables after them.
FB_HOST_DEVICE float* arranged_weights(const args& a) { return reinterpret_cast<float*>(a.ws); }
FB_HOST_DEVICE int* arranged_koff(const plan& pl, const args& a) {
  return reinterpret_cast<int*>(arranged_weights(a) + pl.g.wt_floats);
}

/// The persistent program's tile counter, after the koff tables.
FB_HOST_DEVICE unsigned* tile_counter(const plan& pl, const args& a) {
  return reinterpret_cast<unsigned*>(arranged_koff(pl, a) + pl.g.koff_ints);
}

/// Work item `item` of the arrangement launch: the weights' items, the koff tables' entries, then
/// one that zeroes the tile counter (the pass after it on the stream counts from 0).
FB_HOST_DEVICE int64_t arrange_items(const plan& pl) { return pl.g.wt_items + pl.g.koff_ints + 1; }
FB_HOST_DEVICE void arrange_item(const plan& pl, const args& a, int64_t item) {
  if (item < pl.g.wt_items) conv3d::mma_fp64::arrange_weights_item(pl.g, a.weight, arranged_weights(a), item);
  else if (item < pl.g.wt_items + pl.g.koff_ints)
    conv3d::mma_fp64::arrange_koff_item(pl.g, arranged_koff(pl, a), item - pl.g.wt_items);
  else *tile_counter(pl, a) = 0;
}

}  // namespace fb::fused::convt3d_ln_gelu_scale::detail
