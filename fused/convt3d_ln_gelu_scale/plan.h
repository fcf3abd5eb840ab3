#pragma once
/// The plan (validation, geometry, workspace layout) and the block programs of convt3d_ln_gelu_scale
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

/// A row's LayerNorm statistics: its mean and 1/sqrt(var + eps), var biased.
struct row_norm {
  double mean, rstd;
};

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

// ---------------------------------------------------------------------------------------------
// The row math, written once: fp64 operations spelled out, so that neither compiler can contract
// them differently (host and device round alike).
// ---------------------------------------------------------------------------------------------

FB_HOST_DEVICE double add64(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
FB_HOST_DEVICE double sub64(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
FB_HOST_DEVICE double mul64(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
/// 1/sqrt(v): on the GPU CUDA's rsqrt (within 1 ulp; a reciprocal square-root seed and a few
/// fp64 FMAs), on the host 1/sqrt (two correctly rounded operations). The two may differ in the
/// last bit of an fp64 rstd, far below the fp32 output's rounding; the GPU's fp64 division and
/// square root are long chains of fp64 operations, each waiting on the pipe the MMAs hold (measured
/// on an H100: -0.4% for the kernel with the division-free statistics).
FB_HOST_DEVICE double rsqrt64(double v) {
#if defined(__CUDA_ARCH__)
  return rsqrt(v);
#else
  return 1.0 / std::sqrt(v);
#endif
}

/// 2^q in fp32: on the GPU the special-function unit's ex2.approx (one MUFU.EX2; relative error
/// below 2^-22, subnormal results flushed to 0), on the host std::exp2.
FB_HOST_DEVICE float exp2_f32(float q) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(q));
  return r;
#else
  return std::exp2(q);
#endif
}

/// Exact (erf) GELU of an fp32 value in fp32: u Phi(u), Phi(u) = (1 + erf(u / sqrt 2)) / 2 the
/// normal CDF (PyTorch's gelu, approximate='none'; not the tanh form). Phi's smaller side,
/// Phi(-|u|) = erfc(t) / 2 with t = |u| / sqrt 2, is 2^(t P(t) - 1) with P of degree 7 (a weighted
/// minimax fit of log2 erfc on [0, 3.92]: erfc's absolute error below 1.6e-8 there, its fp32
/// coefficients below; t P(t) keeps falling past 3.92, so 2^q -> 0 and GELU(u) -> 0 or u), and
/// Phi(u) = 1 - that for u >= 0; 1 / sqrt 2 is folded into P's coefficients (a polynomial of |u|).
/// One exp2 and 8 fmaf, no branch: about half the instructions of 0.5 u (1 + erff(u / sqrt 2))
/// (CUDA's erff selects one of two coefficient sets per value): -2.3% for the #34 kernel on an H100.
/// Measured on the host over every 9973rd fp32 bit pattern with 1e-30 <= |u| <= 1e4, against long
/// double erfc: |error| <= 1.83 x 2^-24 |u| (the erff form: 1.8);
/// the GPU's ex2 adds at most 2^-22 of Phi's smaller side, |u| 2^-23 at most. Host and device differ
/// by that ex2 alone (the self-test's tolerance), as they did by their erff before.
FB_HOST_DEVICE float gelu_erf(float u) {
  const float a = fabsf(u);  // t P(t) as a polynomial of |u| = sqrt 2 t: the fit's c_k times 2^-(k+1)/2
  float p = -2.83490567e-06f;
  p = fmaf(p, a, 3.93775917e-05f);
  p = fmaf(p, a, -1.86179721e-04f);
  p = fmaf(p, a, -1.36937684e-04f);
  p = fmaf(p, a, 7.06342189e-03f);
  p = fmaf(p, a, -5.24961799e-02f);
  p = fmaf(p, a, -4.59208190e-01f);
  p = fmaf(p, a, -1.15110517e+00f);  // ~ -sqrt(2 / pi) / ln 2: erfc(t) = 1 - 2t / sqrt(pi) + ...
  const float phi_small = exp2_f32(fmaf(a, p, -1.0f));
  return u * (u >= 0.0f ? 1.0f - phi_small : phi_small);
}

/// One output from its row's fp64 mean and 1/sqrt(var + eps): scale * GELU(gamma * (y - mean) *
/// rstd + beta), the normalisation in fp64, rounded once to fp32 before the GELU and the scale.
/// gamma and beta are the fp32 parameters, held as fp64 (exact).
FB_HOST_DEVICE float ln_gelu_scale(float y, double mean, double rstd, double gamma, double beta, float scale) {
  const double z = mul64(sub64(static_cast<double>(y), mean), rstd);
  const float u = static_cast<float>(fma(z, gamma, beta));
  return gelu_erf(u) * scale;
}

/// Four floats to p (16-byte aligned): one store on the GPU.
FB_HOST_DEVICE void store_f4(float* p, const float (&v)[4]) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
#else
  for (int i = 0; i < 4; ++i) p[i] = v[i];
#endif
}

/// The two sums of a row's statistics: of the values less a shift c, and of their squares.
struct shifted_sums {
  double s1, s2;
};
FB_HOST_DEVICE shifted_sums add_sums(const shifted_sums& x, const shifted_sums& y) {
  return shifted_sums{add64(x.s1, y.s1), add64(x.s2, y.s2)};
}

/// Four partial sums rotated left by r (0..3): p[k] becomes p[(k + r) % 4].
FB_HOST_DEVICE void rotate_partials(shifted_sums (&p)[4], int r) {
  for (int i = 0; i < r; ++i) {
    const shifted_sums t = p[0];
    p[0] = p[1];
    p[1] = p[2];
    p[2] = p[3];
    p[3] = t;
  }
}

/// p[i % 4] = term(v[i], p[i % 4]) for i in [0, n), in index order.
template <class Term>
FB_HOST_DEVICE void add_to_partials(shifted_sums (&p)[4], const float* v, int n, const Term& term) {
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    p[0] = term(v[j], p[0]);
    p[1] = term(v[j + 1], p[1]);
    p[2] = term(v[j + 2], p[2]);
    p[3] = term(v[j + 3], p[3]);
  }
  if (j < n) p[0] = term(v[j], p[0]);
  if (j + 1 < n) p[1] = term(v[j + 1], p[1]);
  if (j + 2 < n) p[2] = term(v[j + 2], p[2]);
}

/// The same over the row a[0..region_row_values) followed by b[0..n_b): value j of the row goes to partial j % 4
/// (b's first value to partial region_row_values % 4: the partials are rotated around it), the partials then
/// combined as (0 + 1) + (2 + 3).
template <class Term>
FB_HOST_DEVICE shifted_sums row_sums(const float* a, int region_row_values, const float* b, int n_b, const Term& term) {
  shifted_sums p[4] = {};
  add_to_partials(p, a, region_row_values, term);
  rotate_partials(p, region_row_values % 4);
  add_to_partials(p, b, n_b, term);
  rotate_partials(p, (4 - region_row_values % 4) % 4);
  return add_sums(add_sums(p[0], p[1]), add_sums(p[2], p[3]));
}

/// The statistics of a row of n = region_row_values + n_b fp32 values, a[0..region_row_values) then b[0..n_b), in one pass:
/// with c the row's first value, d = y - c (fp64: exact unless the two magnitudes are more than 2^29
/// apart), S1 = sum d and S2 = sum d^2 (fp64, 4 interleaved partial sums each: row_sums); then
/// mean = c + S1/n and the biased variance (S2 - S1 (S1/n)) / n (one fused multiply-add), 1/sqrt(var
/// + eps) (rsqrt64). 1/n is the same for every row of a block, so the GPU works it out once.
///
/// Why shifted by c and not E[y^2] - E[y]^2: the subtraction cancels by S2 / (n var) = 1 + (c -
/// mean)^2 / var, at most n + 1 since c is one of the row's values ((c - mean)^2 <= n var), so the
/// variance keeps all but ~log2(n) of fp64's 53 bits (relative error below ~n^2 2^-53 ~ 2e-12 at
/// n = 128), where the raw second moment loses everything on offset rows. One pass instead of a
/// mean pass and a centred pass: the fp64 operations per value are the same three, but each thread
/// reads its row once and its dependency chains are half as long (the kernel -1.9% on an H100, -2.5%
/// on an H200, outputs bitwise equal in the probe's sample).
FB_HOST_DEVICE row_norm row_moments(const float* a, int region_row_values, const float* b, int n_b, double eps) {
  const int n = region_row_values + n_b;
  const double inv_n = 1.0 / static_cast<double>(n);
  const double c = static_cast<double>(region_row_values > 0 ? a[0] : b[0]);
  const shifted_sums s = row_sums(a, region_row_values, b, n_b, [c](float v, const shifted_sums& acc) {
    const double d = sub64(static_cast<double>(v), c);
    return shifted_sums{add64(acc.s1, d), fma(d, d, acc.s2)};
  });
  const double m1 = mul64(s.s1, inv_n);
  row_norm rn;
  rn.mean = add64(c, m1);
  rn.rstd = rsqrt64(add64(mul64(fma(-s.s1, m1, s.s2), inv_n), eps));
  return rn;
}
/// The same for n contiguous floats.
FB_HOST_DEVICE row_norm row_moments(const float* row, int n, double eps) { return row_moments(row, n, row, 0, eps); }

/// The pass's policy (conv3d::mma_fp64::conv_block). Region: columns [w_out] ln_column, their places
/// in the row buffer [w_out] int (padded to 16 bytes), then rows [ln_rows][row_stride] fp32, each
/// phase-major (phase_offset); with last_into_x the last w phase's values in x's memory, rows
/// [ln_rows][row_stride]. LayerNorm row r = h row x group_ch + channel of the block.
struct ln_policy {
  const plan& pl;
  const args& a;
  bool last_pass_into_x;
  bool rows_own_warp;  ///< plan::rows_own_warp (conv_persistent)
  /// setup_columns runs before the first pass (conv_persistent), so start_accumulators reads the
  /// biases from the region; conv_block sets the columns up after its passes, so it loads them.
  bool biases_staged;

  /// The conv bias of output channel `channel` in fp64 (exact), 0 without a bias or past C_out.
  FB_HOST_DEVICE double conv_bias(int channel) const {
    return a.bias != nullptr && channel < pl.g.c_out ? static_cast<double>(fb::fused::load_ro(a.bias + channel)) : 0.0;
  }

  FB_HOST_DEVICE ln_column* columns(unsigned char* region) const { return reinterpret_cast<ln_column*>(region); }
  FB_HOST_DEVICE double* biases(unsigned char* region) const {
    return reinterpret_cast<double*>(region + sizeof(ln_column) * static_cast<std::size_t>(pl.w_out));
  }
  FB_HOST_DEVICE int* places(unsigned char* region) const {
    return reinterpret_cast<int*>(region + sizeof(ln_column) * static_cast<std::size_t>(pl.w_out) +
                                  ln_bias_count(pl.w_out) * sizeof(double));
  }
  FB_HOST_DEVICE float* rows(unsigned char* region) const {
    return reinterpret_cast<float*>(region + ln_columns_bytes(pl.w_out));
  }

  /// A warp's accumulators at a position pass's start: each channel's conv bias (fp64: exact; 0
  /// without one), so that the store rounds y = fp32(bias + sum) once, the value PyTorch's fp32
  /// convolution rounds (args::bias). Why here and not in the store: the reads then overlap the
  /// pass's first operand loads instead of delaying its stores, and the store is a plain rounding.
  /// Why from the region where staged: a global load per channel and pass, with its branch, cost
  /// 2% of #34's default (NOTES, 2026-11-29).
  template <class W, class State>
  FB_HOST_DEVICE void start_accumulators(const W& w, State& st, const conv3d::mma_fp64::block_pos& bp, int warp,
                                         unsigned char* region) const {
    const int warp_col = warp % pl.g.warp_cols;
    const double* staged = biases_staged ? biases(region) + bp.first_channel : nullptr;
    for (int l = 0; l < W::k_lanes; ++l)
      FB_UNROLL
      for (int nt = 0; nt < conv3d::mma_fp64::k_nt; ++nt)
        FB_UNROLL
        for (int e = 0; e < 2; ++e) {  // C values e and 2 + e: the same channel (rows g and g + 8)
          const int ch = conv3d::mma_fp64::tile_channel(warp_col, nt, w.lane(l), e);
          const double bias = staged != nullptr ? staged[ch] : conv_bias(bp.first_channel + ch);
          FB_UNROLL
          for (int mt = 0; mt < conv3d::mma_fp64::k_mt; ++mt) {
            st.acc[mt][nt][l][e] = bias;
            st.acc[mt][nt][l][2 + e] = bias;
          }
        }
  }

  /// A warp's accumulators after a position pass: y = fp32(bias + sum) into the row buffer (each
  /// output of the block is one lane's value in one pass; the rows are whole after the last w
  /// phase), rounded once. Positions are worked out once per fragment row (2 per m tile), not per
  /// value.
  template <class W, class State>
  FB_HOST_DEVICE void store(const W& w, const State& st, const conv3d::mma_fp64::block_pos& bp,
                            const conv3d::mma_fp64::pass_pos& pp, int warp,
                            unsigned char* region, unsigned char* x_area) const {
    const conv3d::mma_fp64::geometry& g = pl.g;
    const int warp_row = warp / g.warp_cols, warp_col = warp % g.warp_cols;
    // x_area: the last pass of a last_into_x plan (conv_block), the last w phase's own rows.
    float* buf = x_area != nullptr ? reinterpret_cast<float*>(x_area) : rows(region) + phase_offset(g, pp.rw);
    const int stride = pl.row_stride;
    FB_UNROLL
    for (int mt = 0; mt < conv3d::mma_fp64::k_mt; ++mt)
      for (int l = 0; l < W::k_lanes; ++l)
        FB_UNROLL
        for (int h = 0; h < 2; ++h) {  // C values 2h and 2h + 1: fragment row g + 8h
          const int m = conv3d::mma_fp64::tile_position(warp_row, mt, w.lane(l), 2 * h);
          if (m >= pp.n) continue;
          const int pos = pp.m0 + m;
          float* at = buf + (pos / pp.n_qw) * pl.group_ch * stride + pos % pp.n_qw;
          FB_UNROLL
          for (int nt = 0; nt < conv3d::mma_fp64::k_nt; ++nt)
            FB_UNROLL
            for (int e = 0; e < 2; ++e) {
              const int ch = conv3d::mma_fp64::tile_channel(warp_col, nt, w.lane(l), 2 * h + e);
              if (ch < bp.n_ch) at[ch * stride] = static_cast<float>(st.acc[mt][nt][l][2 * h + e]);
            }
        }
  }

  /// gamma, beta, the biases and each w' value's place in a row, the same for every row and tile: worked out
  /// into the region's columns once per block program (conv_block: per block; conv_persistent: per
  /// resident block), read after a barrier. A place indexes from the row's first segment
  /// (phase_offset); x_area is the staged x's memory, where a split row's second segment lies.
  template <class Exec>
  FB_HOST_DEVICE void setup_columns(Exec& ex, unsigned char* region, unsigned char* x_area) const {
    const conv3d::mma_fp64::geometry& g = pl.g;
    const int n = static_cast<int>(pl.w_out);
    const int s = g.s[2], p = static_cast<int>(g.dim[2].p);
    ln_column* cols = columns(region);
    double* bias = biases(region);
    const int n_bias = static_cast<int>(ln_bias_count(pl.w_out));
    int* place = places(region);
    // From a row's first segment to its second (the same for every row: equal strides).
    const int to_b =
        pl.last_into_x ? static_cast<int>(reinterpret_cast<const float*>(x_area) - rows(region)) - pl.region_row_values : 0;
    ex.threads([&](int tid) {
      for (int ow = tid; ow < n; ow += conv3d::mma_fp64::k_threads) {
        const int rw = (ow + p) % s, qw = (ow + p) / s;
        const int j = phase_offset(g, rw) + (qw - g.order[2].first_base(rw));  // in the phase-major row
        place[ow] = j < pl.region_row_values ? j : j + to_b;
        cols[ow].gamma = static_cast<double>(fb::fused::load_ro(a.gamma + ow));
        cols[ow].beta = static_cast<double>(fb::fused::load_ro(a.beta + ow));
      }
      for (int ch = tid; ch < n_bias; ch += conv3d::mma_fp64::k_threads)  // channel ch (C_out == W'), 0 past C_out
        bias[ch] = conv_bias(ch);
    });
  }

  /// After the last w phase, the columns in place: a thread per LayerNorm row, its statistics
  /// (row_moments), then its normalised outputs in w' order, four at a time with one 16-byte store
  /// where W' is a multiple of 4 (each thread's 64 values are independent chains: the GELU's
  /// latency overlaps).
  template <class Exec>
  FB_HOST_DEVICE void finish_rows(Exec& ex, const conv3d::mma_fp64::block_pos& bp, unsigned char* region,
                                  unsigned char* x_area) const {
    const conv3d::mma_fp64::geometry& g = pl.g;
    const int n = static_cast<int>(pl.w_out);
    const ln_column* cols = columns(region);
    const int* place = places(region);
    const float* rows_a = rows(region);
    const auto* rows_b = reinterpret_cast<const float*>(x_area);
    const int64_t od = static_cast<int64_t>(bp.qd) * g.s[0] + bp.rd - g.dim[0].p;
    const auto scale = static_cast<float>(pl.scale);
    // Rows are n_out == W' floats apart: 16-byte aligned where W' is a multiple of 4 and out is.
    const bool by_four = n % 4 == 0 && reinterpret_cast<std::uintptr_t>(a.out) % 16 == 0;
    ex.threads([&](int tid) {
      for (int r = tid; r < bp.rows * pl.group_ch; r += conv3d::mma_fp64::k_threads) {
        const int row = r / pl.group_ch, ch = r % pl.group_ch;
        if (ch >= bp.n_ch) continue;
        const float* src = rows_a + r * pl.row_stride;
        const row_norm rn =
            row_moments(src, pl.region_row_values, rows_b + r * pl.row_stride, n - pl.region_row_values, pl.eps);
        const int64_t oh = static_cast<int64_t>(bp.qh0 + row) * g.s[1] + bp.rh - g.dim[1].p;
        float* dst = a.out + (((static_cast<int64_t>(bp.b) * g.c_out + bp.first_channel + ch) * g.dim[0].n_out + od) *
                                  g.dim[1].n_out + oh) * g.dim[2].n_out;
        if (by_four) {
#if defined(__CUDA_ARCH__)
#pragma unroll 2
#endif
          for (int ow = 0; ow < n; ow += 4) {
            int at[4];
            conv3d::mma_fp64::load_i4(place + ow, at);  // 16-byte aligned: places start 16-byte aligned, W' % 4 == 0
            float v[4];
            FB_UNROLL
            for (int i = 0; i < 4; ++i) {
              const ln_column c = cols[ow + i];
              v[i] = ln_gelu_scale(src[at[i]], rn.mean, rn.rstd, c.gamma, c.beta, scale);
            }
            store_f4(dst + ow, v);
          }
        } else {
          for (int ow = 0; ow < n; ++ow)
            dst[ow] = ln_gelu_scale(src[place[ow]], rn.mean, rn.rstd, cols[ow].gamma, cols[ow].beta, scale);
        }
      }
    });
  }

  /// conv_block's end: the columns, a barrier, the rows.
  template <class Exec>
  FB_HOST_DEVICE void finish(Exec& ex, const conv3d::mma_fp64::block_pos& bp, unsigned char* region,
                             unsigned char* x_area) const {
    setup_columns(ex, region, x_area);
    ex.sync();
    finish_rows(ex, bp, region, x_area);
  }
};

/// One block of the pass, in shared memory `smem` (plan's smem_bytes).
template <class Exec>
FB_HOST_DEVICE void pass_block(Exec& ex, const plan& pl, const args& a, int64_t block, unsigned char* smem) {
  const ln_policy pol{pl, a, pl.last_into_x, false, false};
  conv3d::mma_fp64::conv_block(ex, pl.g, a.x, arranged_weights(a), arranged_koff(pl, a), block, smem, pol);
}

/// The persistent program of the pass (plan::persistent), in shared memory `smem`.
template <class Exec>
FB_HOST_DEVICE void persistent_program(Exec& ex, const plan& pl, const args& a, unsigned char* smem) {
  const ln_policy pol{pl, a, pl.last_into_x, pl.rows_own_warp, true};
  conv3d::mma_fp64::conv_persistent(ex, pl.g, a.x, arranged_weights(a), arranged_koff(pl, a), smem, pol);
}

/// The host executor on a plan (run_host validates the pointers and calls it; tests call it with a
/// plan made with small chunks). Defined in fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale_host.cpp.
void run_host_plan(const plan& pl, const args& a);

}  // namespace fb::fused::convt3d_ln_gelu_scale::detail
