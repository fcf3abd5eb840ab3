#pragma once
/// The plan of convt3d_bn_sub (validation, geometry, workspace layout); its block programs are a
/// header per launch beside it (prep.cuh, centring.cuh, conv_pass.cuh with epilogue.cuh,
/// finalize.cuh, rows.cuh). Shared by run_cuda (convt3d_bn_sub.cu) and run_host
/// (convt3d_bn_sub_host.cpp): both run these programs, the GPU with one CUDA block per program instance and a barrier
/// per ex.sync(), the host thread by thread (see simt_fp32_tile.cuh).
///
/// Launch sequence (one stream):
///   1. prep      blocks [0, B*C_in): tap-box sums R[b, ci, tap] (tap_box_sums.cuh), x's centre;
///                blocks after: the weights arranged per (channel block, phase) (simt_fp32_tile.cuh).
///   2. centring block per (b, channel slot): ybar[b, co] = sum_ci sum_tap W R / (D'H'W'), fp64,
///                no bias (a warp's lane sums, fixed tree); the taps' shares V and the prefix
///                tables of the centring (tap_share_item, ptab_item); then (J0 <= 2) the class
///                tables: per (phase, class combination) the centre ybar - K(o) of the outputs of
///                that border class, hi + lo (class_table_item); the passes stage a phase's table
///                per block and look each output's centre up without branches (centring_block).
///   3. pass 1    (training) the convolution, tile by tile; per tile and channel the centred sum
///                sum (y - ybar)^2 over its outputs -> m2_part[b, tile, co], and every y - ybar
///                (fp32) into the workspace at off_y in phase-major order (phase_block_of).
///   4. finalize  block c: m2[b, c] = sum over tiles (fixed order); batch mean and biased variance
///                (math::batch_norm::combine_sample_moments), running buffers, scale_c = gamma_c / sqrt(var_c + eps)
///                (eval: from running_var).
///   5. training: rows  a block per band of rows of a (b, co, od) slice: out = scale_c * (y - ybar_bc)
///                from off_y, staged in shared memory by bulk copies, written in the output's
///                order (rows_band_block); rows too wide for a band: a block per slice reading
///                off_y directly (rows_block).
///      eval:     pass 2 the convolution (the scale is known before it) and
///                out = scale_c * (y - ybar_bc) straight from the accumulators (write_policy).
///
/// Why training materialises y - ybar (the output's size again, in the workspace) instead of
/// convolving twice: measured on an H100 (default config, NOTES.md 2026-11-25), a second
/// convolution cost more than writing and re-reading 252 MB, and its stores (a warp's lanes write
/// every s-th float of a row, one w phase at a time) each reached DRAM as read-modify-writes of
/// partial sectors. Pass 1 stores a phase's outputs contiguously instead (phase-major), and the
/// rows launch reads and writes whole sectors.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "fused/arch/pdl.cuh"
#include "fused/conv3d/simt_fp32_tile.cuh"
#include "fused/convt3d_bn_sub/convt3d_bn_sub.h"
#include "fused/math/batch_norm.cuh"
#include "fused/math/convt_index.cuh"
#include "fused/math/tap_box_sums.cuh"
#include "fused/runtime/plan_util.h"

namespace fb::fused::convt3d_bn_sub::detail {

using conv3d::simt_fp32::k_co_block;
using conv3d::simt_fp32::k_co_thread;
using conv3d::simt_fp32::k_threads;

/// Channel stride of the statistics pass's per-thread slots [fp64]: k_threads + 1, so that the
/// final reduction, whose half-warps read 8 channels of two warp columns at once, hits 8 different
/// bank pairs (2-way conflicts) instead of one bank 16 times (the slots of one channel are 2 KB
/// apart otherwise).
constexpr int k_m2_stride = k_threads + 1;
/// The block channels' centres of one phase (class_table_item): hi + lo fp32 pairs per class
/// combination (conv3d::simt_fp32::class_combo) and channel of the block.
constexpr int k_class_floats = conv3d::simt_fp32::k_class_combos * k_co_block * 2;
/// Shared memory of the statistics pass's own region: per-thread fp64 partials [k_co_thread][k_m2_stride],
/// the block's slice sums [k_threads / k_co_block][k_co_block] (fp64), the centres of the current
/// phase (k_class_floats) and where its outputs go (stats_policy::phase_place, 16 bytes), both
/// double-buffered by phase parity.
constexpr std::size_t k_stats_smem_bytes = sizeof(double) * (k_co_thread * k_m2_stride + k_threads) +
                                           sizeof(float) * 2 * k_class_floats + 2 * 16;
/// The writing pass's region: the scale per block channel, then the centres as in pass 1 (fp32).
constexpr std::size_t k_write_smem_bytes = sizeof(float) * (4 * k_co_block + 2 * k_class_floats);

/// Everything derived from a problem. Workspace offsets count doubles from the aligned base.
struct plan {
  conv3d::simt_fp32::geometry g;
  int64_t k3;                  ///< k^3 taps
  int64_t spatial;             ///< D'*H'*W'
  int64_t box_a, box_b;        ///< tap_box_sums scratch doubles per (b, ci) volume
  int64_t centre_tap;          ///< the tap whose box has the most inputs: x's centre is its box mean
  double centre_count;         ///< inputs in that box (0: no tap reads any input; centres 0)
  int64_t ptab_m;              ///< phases with taps per dimension: min(k, s)
  int64_t ptab_per_bc;         ///< prefix-table doubles per (b, co): (k + ptab_m)^3
  int64_t off_box_a, off_box_b, off_box_r, off_ybar, off_m2_part, off_m2_bc, off_scale, off_centre, off_ptab,
      off_shares, off_ctab, off_wt, off_y, off_xc;
  /// The centres of every output come from class tables (J0 <= 2: conv3d::simt_fp32::tap_class), fp32 hi + lo
  /// pairs [B][s^3 phases][k_class_combos][n_co_blocks * k_co_block] at off_ctab; otherwise (J0 > 2)
  /// each output's centre is computed where it is used (centre_at).
  bool class_table;
  int64_t ctab_items;
  phase_order order[3];  ///< phase-major order per dimension (d, h, w) of the materialised buffer
  int64_t xc_floats;  ///< x - c[b, ci] (fp32, x's size) at off_xc: the passes stage it as it is
  int64_t y_floats;  ///< training: B*C_out*D'H'W' floats of y - ybar at off_y (phase-major); eval: 0
  /// The staged rows launch (training, rows_band_block): output rows per band, bands per (b, co, od)
  /// slice, shared floats of a band. band_rows == 0: a row does not fit (or s_h * s_w > k_band_max_pieces),
  /// and the rows launch reads the buffer directly (rows_block).
  int band_rows, band_count, band_stage_floats;
  int64_t n_doubles;
  std::size_t workspace_bytes;
  std::size_t smem_stats_bytes, smem_write_bytes;  ///< dynamic shared memory of pass 1 and pass 2
  bool training;
  double eps, momentum;
};

/// The staged rows launch (rows_band_block): a block copies a band of output rows of one (b, co, od)
/// slice into shared memory, one bulk copy per (h phase, w phase) piece, then writes the band in the
/// output's order. Why: the rows launch reading the buffer with per-thread loads kept ~24 KB per SM
/// in flight (8 loads per thread, 3 blocks of 256), about what 3 TB/s needs at DRAM latency, and
/// ran at 2.68 TB/s (188 us for 504 MB, H100); a bulk copy puts a whole 16 KB band in flight with one
/// instruction per piece.
constexpr int k_band_threads = 128;
constexpr int k_band_max_floats = 8192;  ///< shared floats of one band (32 KB)
constexpr int k_band_max_pieces = 64;    ///< s_h * s_w pieces at most (their table is in shared memory)

/// Shared floats of a piece's slot: up to m rows of n_w floats, plus up to 3 before them (the copy
/// starts at the 16-byte boundary below the piece) and 3 after (its length rounds up to 16 bytes).
FB_HOST_DEVICE int64_t band_slot_floats(int64_t m, int64_t n_w) { return (m * n_w + 6 + 3) / 4 * 4; }

/// Shared floats of a band of `rows` output rows: s_h rows of slots, each slot (rh, rw) sized for
/// the most rows of phase rh that `rows` consecutive output rows hold, ceil(rows / s_h).
inline int64_t band_stage_floats(const plan& pl, int64_t rows) {
  const int64_t sh = pl.g.dim[1].s, m = (rows + sh - 1) / sh;
  int64_t per_rh = 0;
  for (int rw = 0; rw < pl.g.dim[2].s; ++rw) per_rh += band_slot_floats(m, pl.order[2].count(rw));
  return sh * per_rh;
}

/// The most rows a band can hold within k_band_max_floats (binary search: the stage grows with rows).
inline void plan_bands(plan& pl) {
  pl.band_rows = pl.band_count = pl.band_stage_floats = 0;
  if (!pl.training || pl.g.dim[1].s * pl.g.dim[2].s > k_band_max_pieces) return;
  int64_t lo = 0, hi = pl.g.dim[1].n_out;  // lo fits (0 rows: vacuously), find the largest that fits
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (band_stage_floats(pl, mid) <= k_band_max_floats) lo = mid;
    else hi = mid - 1;
  }
  if (lo == 0) return;
  pl.band_rows = static_cast<int>(lo);
  pl.band_count = static_cast<int>((pl.g.dim[1].n_out + lo - 1) / lo);
  pl.band_stage_floats = static_cast<int>(band_stage_floats(pl, lo));
}

/// Validates (std::invalid_argument naming field and rule) and derives the plan. force_generic
/// makes the passes use the generic tap loop (tests compare it with the unrolled one).
inline plan make_plan(const problem& p, bool force_generic = false) {
  using fb::fused::detail::require;
  constexpr const char* m = "convt3d_bn_sub";
  fb::fused::detail::require_convt3d_sizes(p, m);
  require(p.eps > 0.0, m, "eps", "must be > 0 (x1e9)", static_cast<int64_t>(p.eps * 1e9));
  require(p.momentum >= 0.0 && p.momentum <= 1.0, m, "momentum", "must be in [0, 1] (x1e9)",
          static_cast<int64_t>(p.momentum * 1e9));

  plan pl{};
  pl.g = conv3d::simt_fp32::make_geometry(
      p.batch, p.in_channels, p.out_channels, p.depth, p.height, p.width, p.kernel_size, p.stride, p.padding,
      k_stats_smem_bytes > k_write_smem_bytes ? k_stats_smem_bytes : k_write_smem_bytes, force_generic, m);
  const conv3d::simt_fp32::geometry& g = pl.g;
  pl.k3 = p.kernel_size * p.kernel_size * p.kernel_size;
  pl.spatial = g.dim[0].n_out * g.dim[1].n_out * g.dim[2].n_out;
  if (p.training)  // PyTorch: "Expected more than 1 value per channel when training"
    require(p.batch * pl.spatial > 1, m, "batch", "training needs B*D'*H'*W' > 1; B*D'*H'*W'", p.batch * pl.spatial);
  require(g.n_blocks < (int64_t{1} << 31), m, "batch", "too large (blocks of the grid must be < 2^31); blocks",
          g.n_blocks);
  require(g.wt_floats < (int64_t{1} << 31), m, "in_channels*out_channels*kernel_size^3",
          "too large (arranged weights must be < 2^31 floats)", g.wt_floats);
  // The centring launch: a block per (b, channel slot).
  require(p.batch * g.n_co_blocks * k_co_block < (int64_t{1} << 31), m, "batch*out_channels",
          "too large (blocks of the centring launch must be < 2^31)", p.batch * p.out_channels);
  // x's centre per (b, ci): the mean over the box of the tap with the most inputs (the whole
  // volume, or most of it; any value is exact, the mean makes x - c small).
  pl.centre_tap = 0;
  pl.centre_count = 0.0;
  for (int64_t t = 0; t < pl.k3; ++t) {
    const int64_t tap[3] = {t / (p.kernel_size * p.kernel_size), (t / p.kernel_size) % p.kernel_size,
                            t % p.kernel_size};
    double n = 1.0;
    for (int d = 0; d < 3; ++d)
      n *= static_cast<double>(
          convt_tap_interval(g.dim[d].n_in, g.dim[d].n_out, p.stride, p.padding, tap[d]).size());
    if (n > pl.centre_count) pl.centre_count = n, pl.centre_tap = t;
  }
  pl.ptab_m = p.kernel_size < p.stride ? p.kernel_size : p.stride;
  pl.ptab_per_bc = (p.kernel_size + pl.ptab_m) * (p.kernel_size + pl.ptab_m) * (p.kernel_size + pl.ptab_m);
  pl.box_a = math::box_sums::scratch_a(g.dim[0], g.dim[2]);
  pl.box_b = math::box_sums::scratch_b(g.dim[0], g.dim[2]);
  const int64_t volumes = p.batch * p.in_channels;
  pl.off_box_a = 0;
  pl.off_box_b = pl.off_box_a + volumes * pl.box_a;
  pl.off_box_r = pl.off_box_b + volumes * pl.box_b;
  pl.off_ybar = pl.off_box_r + volumes * pl.k3;
  pl.off_m2_part = pl.off_ybar + p.batch * p.out_channels;
  pl.off_m2_bc = pl.off_m2_part + p.batch * g.tiles_per_sample * p.out_channels;
  pl.off_scale = pl.off_m2_bc + p.batch * p.out_channels;
  pl.off_centre = pl.off_scale + p.out_channels;  // fp32 [B][C_in]
  pl.off_ptab = pl.off_centre + (volumes + 1) / 2;
  pl.class_table = g.j0 <= 2;
  // The prefix tables only where there are no class tables (centre_at reads them).
  pl.off_shares = pl.off_ptab + (pl.class_table ? 0 : p.batch * p.out_channels * pl.ptab_per_bc);
  pl.ctab_items =
      pl.class_table ? p.batch * g.n_phases * conv3d::simt_fp32::k_class_combos * g.n_co_blocks * k_co_block : 0;
  pl.off_ctab = ((pl.off_shares + p.batch * p.out_channels * pl.k3 + 1) / 2) * 2;  // 16-byte aligned
  pl.off_wt = pl.off_ctab + pl.ctab_items;  // one double (two floats) per item: stays 16-byte aligned
  require(pl.ctab_items < (int64_t{1} << 31), m, "batch*out_channels*stride^3",
          "too large (class-table items must be < 2^31)", pl.ctab_items);
  for (int d = 0; d < 3; ++d) pl.order[d] = phase_order_of(g.dim[d]);
  pl.y_floats = p.training ? p.batch * p.out_channels * pl.spatial : 0;
  pl.off_y = ((pl.off_wt + (g.wt_floats + 1) / 2 + 1) / 2) * 2;  // 16-byte aligned
  pl.xc_floats = volumes * g.dim[0].n_in * g.dim[1].n_in * g.dim[2].n_in;
  // 16-byte aligned, and the floats between y's end and it (rows_band_block's copies may read up to
  // 3 of them) zeroed by prep.
  pl.off_xc = ((pl.off_y + (pl.y_floats + 1) / 2 + 1) / 2) * 2;
  pl.n_doubles = pl.off_xc + (pl.xc_floats + 1) / 2;
  pl.workspace_bytes = fb::fused::detail::workspace_bytes_for(pl.n_doubles);
  const std::size_t conv_bytes = static_cast<std::size_t>(g.smem_conv_floats) * sizeof(float);
  pl.smem_stats_bytes = conv_bytes + k_stats_smem_bytes;
  pl.smem_write_bytes = conv_bytes + k_write_smem_bytes;
  pl.training = p.training;
  plan_bands(pl);
  pl.eps = p.eps;
  pl.momentum = p.momentum;
  return pl;
}

/// The pointers of one call (kernel argument, with the plan).
struct args {
  const float* x;
  const float* weight;
  const float* conv_bias;  ///< null: no bias
  const float* gamma;
  float* running_mean;
  float* running_var;
  int64_t* num_batches_tracked;
  float* out;
  double* workspace;  ///< aligned workspace base
};

/// The call's pointers, each checked (beta too: it cancels in the output, but a caller passing null
/// has made a mistake), as args (workspace: the caller's pointer, aligned here). One check for the
/// CUDA path and the host executor, as convt3d_scale_bn_gap's bind.
inline args bind(const float* x, const float* weight, const float* conv_bias, const float* gamma, const float* beta,
                 float* running_mean, float* running_var, int64_t* num_batches_tracked, float* out, void* workspace) {
  using fb::fused::detail::require_ptr;
  constexpr const char* m = "convt3d_bn_sub";
  require_ptr(x, m, "x");
  require_ptr(weight, m, "weight");
  require_ptr(gamma, m, "gamma");
  require_ptr(beta, m, "beta");
  require_ptr(running_mean, m, "running_mean");
  require_ptr(running_var, m, "running_var");
  require_ptr(num_batches_tracked, m, "num_batches_tracked");
  require_ptr(out, m, "out");
  require_ptr(workspace, m, "workspace");
  return args{x,           weight,      conv_bias, gamma, running_mean,
              running_var, num_batches_tracked, out,       fb::fused::detail::aligned_workspace(workspace)};
}

/// The arranged weights inside the workspace.
FB_HOST_DEVICE float* arranged_weights(const plan& pl, const args& a) {
  return reinterpret_cast<float*>(a.workspace + pl.off_wt);
}

/// x's centres, fp32 [B][C_in], inside the workspace (prep writes them, the passes subtract them).
FB_HOST_DEVICE float* centres(const plan& pl, const args& a) {
  return reinterpret_cast<float*>(a.workspace + pl.off_centre);
}

/// x - c[b, ci] inside the input (prep writes it, the passes stage it): the centring of
/// centres() done once per element instead of in every block that stages it (it was a second pass
/// over every staged tile, after waiting for its copies: part of the ~14% of the statistics pass's
/// stall samples that staging took, ncu, H100). The same fp32 subtraction, so the same bits.
FB_HOST_DEVICE float* centred_x(const plan& pl, const args& a) {
  return reinterpret_cast<float*>(a.workspace + pl.off_xc);
}

/// y - ybar of every output (training: pass 1 writes it, the rows launch reads it), fp32.
FB_HOST_DEVICE float* materialised(const plan& pl, const args& a) {
  return reinterpret_cast<float*>(a.workspace + pl.off_y);
}

/// Where phase (rd, rh, rw) keeps its outputs inside a (b, co) plane of the materialised buffer.
/// The plane is in phase-major order: phases in (rd, rh, rw) order, each a dense box of its outputs
/// [base d][base h][base w] (phase_order::count per dimension). So the outputs a warp holds in one
/// phase (32 consecutive w bases of a row, then the next rows) are consecutive floats: whole
/// sectors per store, where the output's own order puts them s floats apart and leaves every
/// sector to be completed by another phase (read-modify-write in DRAM; measured on an H100,
/// probes/store_sectors). Output (qd, qh, qw) of the phase sits at
/// base + ((qd - lo_d) * n_h + (qh - lo_h)) * n_w + (qw - lo_w).
struct phase_block {
  int64_t base;        ///< offset of the phase's box in the plane
  int n_h, n_w;        ///< its outputs along h and w
  int lo_d, lo_h, lo_w;  ///< the first base of each dimension
};

FB_HOST_DEVICE phase_block phase_block_of(const plan& pl, int rd, int rh, int rw) {
  const phase_order &D = pl.order[0], &H = pl.order[1], &W = pl.order[2];
  const int64_t h_out = pl.g.dim[1].n_out, w_out = pl.g.dim[2].n_out;
  phase_block pb;
  pb.n_h = H.count(rh);
  pb.n_w = W.count(rw);
  pb.lo_d = D.first_base(rd);
  pb.lo_h = H.first_base(rh);
  pb.lo_w = W.first_base(rw);
  // The phases before (rd, rh, rw): all with a smaller rd, then those of rd with a smaller rh, then
  // those of (rd, rh) with a smaller rw.
  pb.base = D.offset(rd) * h_out * w_out +
            D.count(rd) * (H.offset(rh) * w_out + static_cast<int64_t>(pb.n_h) * W.offset(rw));
  return pb;
}

/// The host executor on a plan (run_host validates the pointers and calls it; tests call it with a
/// plan made with force_generic). Defined in fused/convt3d_bn_sub/convt3d_bn_sub_host.cpp.
void run_host_plan(const plan& pl, const args& a);

}  // namespace fb::fused::convt3d_bn_sub::detail
