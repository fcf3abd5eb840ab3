#pragma once
/// The plan (validation, geometry, workspace layout) and the block programs of convt3d_ln_gelu_scale
/// (KernelBench #34), shared by run_cuda (fused/convt3d_ln_gelu_scale.cu) and run_host
/// (fused/convt3d_ln_gelu_scale_host.cpp): the GPU runs them with one CUDA block per program instance
/// and a barrier per ex.sync(), the host thread by thread (see convt3d_tile.cuh).
///
/// Launch sequence (one stream):
///   1. prep   blocks [0, B*C_in): x's centre c[b, ci] (centre_of: the mean of the (b, ci) volume
///             where it exceeds the spread, else 0; fp64 sums in a fixed order, rounded to fp32);
///             blocks after: the weights arranged per (channel block, phase) (convt3d_tile.cuh).
///   2. shares thread per (b, co, tap): V[b, co, tap] = sum_ci W[ci, co, tap] * c[b, ci] (fp64);
///      2b. (J0 <= 2) thread per (b, phase, border class combination, co): K(o) of that class
///      (class_share_item), so the epilogue reads one value per output.
///   3. pass   the convolution of x - c tile by tile (convt3d_tile.cuh, tiles by outputs: one tile covers
///             whole W' rows), with the LayerNorm/GELU/scale epilogue on chip: each phase's
///             accumulators go into a row buffer in shared memory; after the last w phase of each
///             (d, h) phase pair the block's 256 rows (16 channels x 2 d x 8 h outputs) are complete,
///             and each is normalised (row_moments: fp64 mean, then fp64 centred sum of squares),
///             passed through exact GELU, scaled and stored, one coalesced row at a time. No W' row
///             ever goes to memory unnormalised; nothing but the output is written.
///
/// Centring (as #15 does, fused/common/convt3d_bn_sub_plan.h): the fp32 sums run over x - c, so
/// their partial sums carry x's spread, not its offset (offset inputs round like centred ones);
/// the left-out share K(o) = sum of V over the taps of o that read inside the input (fp64) is
/// added back in the epilogue, y = fp32(sum + K(o)), one rounding of the output's own size, as
/// libtorch's fp32 y has. Only offset volumes are centred (|mean| > standard deviation): where x is
/// mostly zeros (sparse, border-only inputs) a centre turns exact zeros into -c, and rows that
/// libtorch gets exactly constant (every tap reading zeros: y = 0, LayerNorm gives beta) would come
/// out as rounding residues of sum + K, which the LayerNorm then scales by 1/sqrt(eps) (measured:
/// 1.1e-4 off fp64 on such a row, C_in 19, k 4, s 3, p 4, border inputs).
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fused/common/convt3d_tile.cuh"
#include "fused/common/convt_index.cuh"
#include "fused/common/plan_util.h"
#include "fused/convt3d_ln_gelu_scale.h"

namespace fb::fused::convt3d_ln_gelu_scale::detail {

namespace tile = fb::fused::convt3d_tile;
using tile::k_co_block;
using tile::k_co_thread;
using tile::k_threads;

/// Rows of the output a block holds at once: its channels x d outputs x h outputs of one (d, h) phase
/// pair (one row per thread in the statistics step).
constexpr int k_block_rows = k_co_block * tile::k_tile_qd * tile::k_tile_qh;
static_assert(k_block_rows == k_threads, "one row per thread in the statistics step");

/// The largest W' (== C_out) a block holds: 256 rows of it in shared memory (133 KB at 128).
constexpr int64_t k_max_row = 128;

/// Everything derived from a problem.
struct plan {
  tile::geometry g;
  int64_t w_out;       ///< W' == C_out: the LayerNorm row length
  int row_stride;      ///< floats per row in the row buffer: W' rounded up to odd (conflict-free rows)
  int64_t k3;          ///< k^3 taps
  int64_t volume;      ///< D*H*W: inputs per (b, ci)
  /// Workspace offsets [doubles from the aligned base]: per-thread partial sums of the centres
  /// [B*C_in][2][k_threads] (sums, sums of squares), the centres (fp32 [B][C_in]), the shares V [B][C_out][k^3] and the
  /// arranged weights (fp32, 16-byte aligned).
  int64_t off_part, off_centre, off_v, off_ktab, off_wt;
  /// K(o) of every output comes from a class table (J0 <= 2, tile::tap_class): fp64
  /// [B][s^3 phases][k_class_combos][C_out] at off_ktab (class_share_item); otherwise (J0 > 2) each
  /// output's K(o) is summed where it is used (centre_share).
  bool class_table;
  int64_t ktab_items;
  int64_t n_doubles;
  std::size_t workspace_bytes;
  std::size_t smem_bytes;  ///< dynamic shared memory of the pass
  double eps, scale;
};

/// Shared memory of the LayerNorm region: per row its mean and 1/sqrt(var + eps) (fp64), then
/// the rows [k_block_rows][row_stride] (fp32).
inline std::size_t ln_region_bytes(int row_stride) {
  return sizeof(double) * 2 * k_block_rows + sizeof(float) * static_cast<std::size_t>(k_block_rows) * row_stride;
}

/// Validates (std::invalid_argument naming field and rule) and derives the plan. force_generic
/// makes the pass use the generic tap loop (tests compare it with the unrolled one).
inline plan make_plan(const problem& p, bool force_generic = false) {
  using fb::fused::detail::require;
  constexpr const char* m = "convt3d_ln_gelu_scale";
  fb::fused::detail::require_convt3d_sizes(p, m);
  const int64_t w_out = convt_output_size(p.width, p.kernel_size, p.stride, p.padding, 0);
  require(w_out == p.out_channels, m, "width",
          "gives W' = (width-1)*stride - 2*padding + kernel_size, which must equal out_channels "
          "(LayerNorm(out_channels) normalises the last dim); W'",
          w_out);
  require(w_out <= k_max_row, m, "out_channels",
          "must be <= 128 (a block holds 256 whole rows of W' = out_channels in shared memory)", w_out);
  require(p.eps > 0.0 && std::isfinite(p.eps), m, "eps", "must be finite and > 0 (x1e9)",
          static_cast<int64_t>(p.eps * 1e9));
  require(std::isfinite(p.scaling_factor), m, "scaling_factor", "must be finite", 0);

  plan pl{};
  pl.w_out = w_out;
  pl.row_stride = static_cast<int>(w_out | 1);
  // One tile covers all W' outputs of a row: w_sub sub-tiles of 32 bases, 32 * s outputs each.
  tile::tile_options opt;
  opt.by_outputs = true;
  opt.one_chunk_first = true;
  opt.compensated = true;  // short, compensated group sums: the LayerNorm can amplify the conv's rounding
  opt.w_sub = ceil_div(w_out, tile::k_tile_qw * p.stride);
  pl.g = tile::make_geometry(p.batch, p.in_channels, p.out_channels, p.depth, p.height, p.width, p.kernel_size,
                             p.stride, p.padding, ln_region_bytes(pl.row_stride), force_generic, m, opt);
  const tile::geometry& g = pl.g;
  require(g.n_tile[2] == 1, m, "width", "must give one tile per W' row (internal); tiles", g.n_tile[2]);
  require(g.n_blocks < (int64_t{1} << 31), m, "batch", "too large (blocks of the grid must be < 2^31); blocks",
          g.n_blocks);
  require(g.wt_floats < (int64_t{1} << 31), m, "in_channels*out_channels*kernel_size^3",
          "too large (arranged weights must be < 2^31 floats)", g.wt_floats);
  pl.k3 = p.kernel_size * p.kernel_size * p.kernel_size;
  pl.volume = p.depth * p.height * p.width;
  const int64_t volumes = p.batch * p.in_channels;
  require(volumes + g.n_co_blocks * g.n_phases < (int64_t{1} << 31), m, "batch*in_channels",
          "too large (prep blocks must be < 2^31)", volumes);
  require(p.batch * p.out_channels * pl.k3 < (int64_t{1} << 31), m, "batch*out_channels*kernel_size^3",
          "too large (share threads must be < 2^31)", p.batch * p.out_channels * pl.k3);
  pl.off_part = 0;
  pl.off_centre = pl.off_part + volumes * 2 * k_threads;
  pl.off_v = pl.off_centre + (volumes + 1) / 2;
  pl.class_table = g.j0 <= 2;
  pl.ktab_items = pl.class_table ? p.batch * g.n_phases * tile::k_class_combos * p.out_channels : 0;
  require(pl.ktab_items < (int64_t{1} << 31), m, "batch*out_channels*stride^3",
          "too large (class-table items must be < 2^31)", pl.ktab_items);
  pl.off_ktab = pl.off_v + p.batch * p.out_channels * pl.k3;
  pl.off_wt = ((pl.off_ktab + pl.ktab_items + 1) / 2) * 2;
  pl.n_doubles = pl.off_wt + (g.wt_floats + 1) / 2;
  pl.workspace_bytes = fb::fused::detail::workspace_bytes_for(pl.n_doubles);
  pl.smem_bytes = static_cast<std::size_t>(g.smem_conv_floats) * sizeof(float) + ln_region_bytes(pl.row_stride);
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
};

/// The call's pointers, each checked, as args (workspace: the caller's pointer, aligned here). One
/// check for the CUDA path and the host executor, as #15's bind. The conv bias cancels in the
/// LayerNorm: it is never read, so it may be null.
inline args bind(const float* x, const float* weight, const float* gamma, const float* beta, float* out,
                 void* workspace) {
  using fb::fused::detail::require_ptr;
  constexpr const char* m = "convt3d_ln_gelu_scale";
  require_ptr(x, m, "x");
  require_ptr(weight, m, "weight");
  require_ptr(gamma, m, "gamma");
  require_ptr(beta, m, "beta");
  require_ptr(out, m, "out");
  require_ptr(workspace, m, "workspace");
  return args{x, weight, gamma, beta, out, fb::fused::detail::aligned_workspace(workspace)};
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

/// The arranged weights and x's centres inside the workspace.
FB_HOST_DEVICE float* arranged_weights(const plan& pl, const args& a) {
  return reinterpret_cast<float*>(a.ws + pl.off_wt);
}
FB_HOST_DEVICE float* centres(const plan& pl, const args& a) { return reinterpret_cast<float*>(a.ws + pl.off_centre); }

/// Blocks of the prep launch: one per (b, ci) volume, then one per (channel block, phase).
FB_HOST_DEVICE int64_t prep_blocks(const plan& pl) {
  return pl.g.batch * pl.g.c_in + pl.g.n_co_blocks * pl.g.n_phases;
}

/// x's centre for a volume of n values with fp64 sum and sum of squares: the mean where the volume
/// is offset (mean^2 > variance, the variance here only decides), else 0 (no centring).
FB_HOST_DEVICE float centre_of(double sum, double sum_sq, double n) {
  const double mean = sum / n;
  const double var = sub64(sum_sq / n, mul64(mean, mean));
  return mul64(mean, mean) > var ? static_cast<float>(mean) : 0.0f;
}

/// Prep block: the centre of one (b, ci) volume (thread t sums the elements t, t + 256, ... and
/// their squares in fp64, then thread 0 adds the 256 partials in order), or one (channel block,
/// phase) of weights.
template <class Exec>
FB_HOST_DEVICE void prep_block(Exec& ex, const plan& pl, const args& a, int64_t block) {
  const int64_t volumes = pl.g.batch * pl.g.c_in;
  if (block >= volumes) {
    tile::arrange_weights_block(ex, pl.g, a.weight, arranged_weights(pl, a), block - volumes);
    return;
  }
  const float* xv = a.x + block * pl.volume;
  double* part = a.ws + pl.off_part + block * 2 * k_threads;
  ex.threads([&](int tid, typename Exec::state&) {
    double acc = 0.0, acc_sq = 0.0;
    for (int64_t e = tid; e < pl.volume; e += k_threads) {
      const double v = static_cast<double>(tile::load_ro(xv + e));
      acc = add64(acc, v);
      acc_sq = fma(v, v, acc_sq);
    }
    part[tid] = acc;
    part[k_threads + tid] = acc_sq;
  });
  ex.sync();
  ex.threads([&](int tid, typename Exec::state&) {
    if (tid != 0) return;
    double acc = 0.0, acc_sq = 0.0;
    for (int t = 0; t < k_threads; ++t) {
      acc = add64(acc, part[t]);
      acc_sq = add64(acc_sq, part[k_threads + t]);
    }
    centres(pl, a)[block] = centre_of(acc, acc_sq, static_cast<double>(pl.volume));
  });
}

/// Threads of the shares launch: one per (b, co, tap).
FB_HOST_DEVICE int64_t share_items(const plan& pl) { return pl.g.batch * pl.g.c_out * pl.k3; }

/// V[b, co, tap] = sum over ci ascending of W[ci, co, tap] * c[b, ci] (fp64 FMAs).
FB_HOST_DEVICE void share_item(const plan& pl, const args& a, int64_t item) {
  const tile::geometry& g = pl.g;
  const int64_t tap = item % pl.k3, bc = item / pl.k3;
  const int64_t co = bc % g.c_out, b = bc / g.c_out;
  const float* w = a.weight + co * pl.k3 + tap;
  const float* c = centres(pl, a) + b * g.c_in;
  double v = 0.0;
  for (int64_t ci = 0; ci < g.c_in; ++ci)
    v = fma(static_cast<double>(tile::load_ro(w + ci * g.c_out * pl.k3)), static_cast<double>(c[ci]), v);
  a.ws[pl.off_v + item] = v;
}

/// K(o): the sum of V[b, co, .] over the taps of phase pp that read inside the input at bases
/// (qd, qh, qw), in the order jd, jh, jw ascending.
FB_HOST_DEVICE double centre_share(const plan& pl, const args& a, int b, int64_t co, const tile::phase_pos& pp,
                                   int qd, int qh, int qw) {
  const tile::geometry& g = pl.g;
  int ld, hd, lh, hh, lw, hw;
  tile::valid_taps(g.dim[0], qd, pp.jd, ld, hd);
  tile::valid_taps(g.dim[1], qh, pp.jh, lh, hh);
  tile::valid_taps(g.dim[2], qw, pp.jw, lw, hw);
  const int k = static_cast<int>(g.dim[0].k), s = static_cast<int>(g.dim[0].s);
  const double* v = a.ws + pl.off_v + (static_cast<int64_t>(b) * g.c_out + co) * pl.k3;
  double sum = 0.0;
  for (int jd = ld; jd < hd; ++jd)
    for (int jh = lh; jh < hh; ++jh)
      for (int jw = lw; jw < hw; ++jw)
        sum = add64(sum, tile::load_ro_d(v + ((pp.r[0] + jd * s) * k + pp.r[1] + jh * s) * k + pp.r[2] + jw * s));
  return sum;
}

/// Class-table item (b, phase, class combination, co): K(o) of the outputs of channel co in that
/// phase whose valid taps are the box of the combination's classes (tile::class_taps): V summed
/// over the box in centre_share's order (jd, jh, jw ascending), so the same bits as centre_share
/// at such an output. The epilogue then reads one value per output instead of summing up to 8
/// (measured: those per-output sums were the largest part of the epilogue's samples, H100 ncu).
FB_HOST_DEVICE void class_share_item(const plan& pl, const args& a, int64_t item) {
  const tile::geometry& g = pl.g;
  const int64_t co = item % g.c_out;
  const int combo = static_cast<int>((item / g.c_out) % tile::k_class_combos);
  const int64_t ph = (item / (g.c_out * tile::k_class_combos)) % g.n_phases;
  const int64_t b = item / (g.c_out * tile::k_class_combos * g.n_phases);
  const tile::phase_pos pp = tile::phase_of(g, ph);
  int ld, hd, lh, hh, lw, hw;
  tile::class_box(combo, pp, ld, hd, lh, hh, lw, hw);
  const int k = static_cast<int>(g.dim[0].k), s = static_cast<int>(g.dim[0].s);
  const double* v = a.ws + pl.off_v + (b * g.c_out + co) * pl.k3;
  double sum = 0.0;
  for (int jd = ld; jd < hd; ++jd)
    for (int jh = lh; jh < hh; ++jh)
      for (int jw = lw; jw < hw; ++jw)
        sum = add64(sum, v[((pp.r[0] + jd * s) * k + pp.r[1] + jh * s) * k + pp.r[2] + jw * s]);
  a.ws[pl.off_ktab + item] = sum;
}

/// K(o) of output (co, bases qd, qh, qw) of phase pp: from the class table, or summed (J0 > 2).
FB_HOST_DEVICE double share_of(const plan& pl, const args& a, int b, int64_t co, const tile::phase_pos& pp, int qd,
                               int qh, int qw) {
  if (!pl.class_table) return centre_share(pl, a, b, co, pp, qd, qh, qw);
  const int64_t row = (static_cast<int64_t>(b) * pl.g.n_phases + pp.index) * tile::k_class_combos +
                      tile::class_combo(pl.g, pp, qd, qh, qw);
  return tile::load_ro_d(a.ws + pl.off_ktab + row * pl.g.c_out + co);
}

/// A row's LayerNorm statistics: its mean and 1/sqrt(var + eps), var biased.
struct row_norm {
  double mean, rstd;
};

/// The statistics of the n fp32 values row[0], row[stride], ...: the fp64 sum in index order (exact
/// up to 2^-53 relative per step: n <= 128 values of 24 bits), the mean, then the biased variance
/// from the centred values (never E[y^2] - E[y]^2, which cancels on offset rows).
FB_HOST_DEVICE row_norm row_moments(const float* row, int n, double eps) {
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum = add64(sum, static_cast<double>(row[i]));
  row_norm rn;
  rn.mean = sum / static_cast<double>(n);
  double m2 = 0.0;
  for (int i = 0; i < n; ++i) {
    const double d = sub64(static_cast<double>(row[i]), rn.mean);
    m2 = fma(d, d, m2);
  }
  rn.rstd = 1.0 / sqrt(add64(m2 / static_cast<double>(n), eps));
  return rn;
}

/// Exact GELU, 0.5 u (1 + erf(u / sqrt 2)), in fp64 (erf: the platform's, CUDA's on the GPU and the C
/// library's on the host, both within 2 fp64 ulp: after the rounding to fp32 they differ only where
/// the exact value lies within ~1e-16 relative of a rounding boundary).
FB_HOST_DEVICE double gelu_erf(double u) {
  const double h = mul64(0.5, u);
  return fma(h, erf(mul64(u, 0.70710678118654752440)), h);
}

/// One output: scale * GELU(gamma * (y - mean) * rstd + beta), fp64 inside, rounded once to fp32.
FB_HOST_DEVICE float ln_gelu_scale(float y, const row_norm& rn, float gamma, float beta, double scale) {
  const double z = mul64(sub64(static_cast<double>(y), rn.mean), rn.rstd);
  const double u = fma(z, static_cast<double>(gamma), static_cast<double>(beta));
  return static_cast<float>(mul64(gelu_erf(u), scale));
}

/// The pass's policy (convt3d_tile.cuh conv_tile_block). Region: norms [k_block_rows] row_norm, then
/// rows [k_block_rows][row_stride] fp32. Row index ((channel of the block * k_tile_qd + warp's d) *
/// k_tile_qh + warp's h * k_rows + r): the rows of one (d, h) phase pair; column w'.
struct ln_policy {
  const plan& pl;
  const args& a;

  FB_HOST_DEVICE static row_norm* norms(float* region) { return reinterpret_cast<row_norm*>(region); }
  FB_HOST_DEVICE static float* rows(float* region) { return region + 4 * k_block_rows; }

  template <class Exec>
  FB_HOST_DEVICE void prologue(Exec&, const tile::block_pos&, float*) const {}
  FB_HOST_DEVICE void phase_begin(int, const tile::block_pos&, const tile::phase_pos&, float*) const {}

  /// The thread's outputs y = fp32(sum + K(o)) into the row buffer (every output of the tile is one
  /// thread's in one phase and sub-tile: the rows of a (d, h) phase pair are complete after its
  /// last w phase).
  template <class State>
  FB_HOST_DEVICE void epilogue(int tid, State& st, const tile::block_pos& bp, const tile::phase_pos& pp,
                               const tile::thread_outputs& o, float* region) const {
    if (!o.active) return;
    const tile::thread_pos t = tile::thread_of(tid);
    float* buf = rows(region);
    const int cl0 = o.co0 - bp.cob * k_co_block;
    FB_UNROLL
    for (int c = 0; c < k_co_thread; ++c) {
      if (c >= o.n_co) break;
      const int row0 = ((cl0 + c) * tile::k_tile_qd + t.wd) * tile::k_tile_qh + t.wh * tile::k_rows;
      FB_UNROLL
      for (int r = 0; r < tile::k_rows; ++r)
        if (o.row_ok[r]) {
          const double k_o = share_of(pl, a, bp.b, o.co0 + c, pp, o.qd, o.qh0 + r, o.qw);
          buf[(row0 + r) * pl.row_stride + o.ow] = static_cast<float>(add64(static_cast<double>(st.acc.v[r][c]), k_o));
        }
    }
  }

  /// Row `row` of the block in phase pair pp: its output (co, od, oh); false when it has none.
  FB_HOST_DEVICE bool row_output(const tile::block_pos& bp, const tile::phase_pos& pp, int row, int64_t& co, int& od,
                                 int& oh) const {
    const tile::geometry& g = pl.g;
    const int s = static_cast<int>(g.dim[0].s), p = static_cast<int>(g.dim[0].p);
    const int hr = row % tile::k_tile_qh;
    const int wd = (row / tile::k_tile_qh) % tile::k_tile_qd;
    const int cl = row / (tile::k_tile_qh * tile::k_tile_qd);
    co = static_cast<int64_t>(bp.cob) * k_co_block + cl;
    od = (bp.q0[0] + wd) * s + pp.r[0] - p;
    oh = (bp.q0[1] + hr) * s + pp.r[1] - p;
    return co < g.c_out && od >= 0 && od < g.dim[0].n_out && oh >= 0 && oh < g.dim[1].n_out;
  }

  /// After the last w phase of a (d, h) phase pair: statistics (a thread per row), then the
  /// normalised rows written (a warp per row, lanes along w': 128-byte coalesced stores). The next
  /// epilogue writes the buffer only after the next staging barrier, which every thread reaches
  /// after its reads here.
  template <class Exec>
  FB_HOST_DEVICE void phase_end(Exec& ex, const tile::block_pos& bp, const tile::phase_pos& pp, float* region) const {
    if (pp.r[2] != static_cast<int>(pl.g.dim[2].s) - 1) return;
    ex.sync();
    const int n = static_cast<int>(pl.w_out);
    ex.threads([&](int tid, typename Exec::state&) {
      int64_t co;
      int od, oh;
      if (!row_output(bp, pp, tid, co, od, oh)) return;
      norms(region)[tid] = row_moments(rows(region) + tid * pl.row_stride, n, pl.eps);
    });
    ex.sync();
    ex.threads([&](int tid, typename Exec::state&) {
      const tile::geometry& g = pl.g;
      const int lane = tid & 31, warp = tid >> 5;
      for (int row = warp; row < k_block_rows; row += tile::k_warps) {
        int64_t co;
        int od, oh;
        if (!row_output(bp, pp, row, co, od, oh)) continue;
        const row_norm rn = norms(region)[row];
        const float* src = rows(region) + row * pl.row_stride;
        float* dst = a.out + (((static_cast<int64_t>(bp.b) * g.c_out + co) * g.dim[0].n_out + od) * g.dim[1].n_out + oh) *
                                 g.dim[2].n_out;
        for (int w = lane; w < n; w += 32)
          dst[w] = ln_gelu_scale(src[w], rn, tile::load_ro(a.gamma + w), tile::load_ro(a.beta + w), pl.scale);
      }
    });
  }

  template <class Exec>
  FB_HOST_DEVICE void finish(Exec&, const tile::block_pos&, float*) const {}
};

/// One block of the pass, in shared memory `smem` (plan's smem_bytes). kChunked must equal
/// pl.g.n_ci_chunks > 1.
template <int kJ0, bool kChunked, class Exec>
FB_HOST_DEVICE void pass_block(Exec& ex, const plan& pl, const args& a, int64_t block, float* smem) {
  const ln_policy pol{pl, a};
  tile::conv_tile_block<kJ0, kChunked, 1, /*kComp=*/true>(ex, pl.g, a.x, centres(pl, a), arranged_weights(pl, a),
                                                          block, smem, pol);
}

/// The host executor on a plan (run_host validates the pointers and calls it; tests call it with a
/// plan made with force_generic or smaller chunks). Defined in fused/convt3d_ln_gelu_scale_host.cpp.
void run_host_plan(const plan& pl, const args& a);

}  // namespace fb::fused::convt3d_ln_gelu_scale::detail
