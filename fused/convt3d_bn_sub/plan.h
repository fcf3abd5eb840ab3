#pragma once
/// The plan (validation, geometry, workspace layout) and every block program of convt3d_bn_sub,
/// shared by run_cuda (fused/convt3d_bn_sub/convt3d_bn_sub.cu) and run_host (fused/convt3d_bn_sub/convt3d_bn_sub_host.cpp): both
/// run these programs, the GPU with one CUDA block per program instance and a barrier per
/// ex.sync(), the host thread by thread (see simt_fp32_tile.cuh).
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
///                (bn::combine_sample_moments), running buffers, scale_c = gamma_c / sqrt(var_c + eps)
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

namespace tile = fb::fused::convt3d_tile;
using tile::k_co_block;
using tile::k_co_thread;
using tile::k_threads;

/// Channel stride of the statistics pass's per-thread slots [fp64]: k_threads + 1, so that the
/// final reduction, whose half-warps read 8 channels of two warp columns at once, hits 8 different
/// bank pairs (2-way conflicts) instead of one bank 16 times (the slots of one channel are 2 KB
/// apart otherwise).
constexpr int k_m2_stride = k_threads + 1;
/// The block channels' centres of one phase (class_table_item): hi + lo fp32 pairs per class
/// combination (tile::class_combo) and channel of the block.
constexpr int k_class_floats = tile::k_class_combos * k_co_block * 2;
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
  tile::geometry g;
  int64_t k3;                  ///< k^3 taps
  int64_t spatial;             ///< D'*H'*W'
  int64_t box_a, box_b;        ///< tap_box_sums scratch doubles per (b, ci) volume
  int64_t centre_tap;          ///< the tap whose box has the most inputs: x's centre is its box mean
  double centre_count;         ///< inputs in that box (0: no tap reads any input; centres 0)
  int64_t ptab_m;              ///< phases with taps per dimension: min(k, s)
  int64_t ptab_per_bc;         ///< prefix-table doubles per (b, co): (k + ptab_m)^3
  int64_t off_box_a, off_box_b, off_box_r, off_ybar, off_m2_part, off_m2_bc, off_scale, off_centre, off_ptab,
      off_shares, off_ctab, off_wt, off_y, off_xc;
  /// The centres of every output come from class tables (J0 <= 2: tile::tap_class), fp32 hi + lo
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
  pl.g = tile::make_geometry(p.batch, p.in_channels, p.out_channels, p.depth, p.height, p.width, p.kernel_size,
                             p.stride, p.padding, k_stats_smem_bytes > k_write_smem_bytes ? k_stats_smem_bytes
                                                                                            : k_write_smem_bytes,
                             force_generic, m);
  const tile::geometry& g = pl.g;
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
  pl.box_a = box_sums::scratch_a(g.dim[0], g.dim[2]);
  pl.box_b = box_sums::scratch_b(g.dim[0], g.dim[2]);
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
  pl.ctab_items = pl.class_table ? p.batch * g.n_phases * tile::k_class_combos * g.n_co_blocks * k_co_block : 0;
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
  double* ws;  ///< aligned workspace base
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
  return reinterpret_cast<float*>(a.ws + pl.off_wt);
}

/// x's centres, fp32 [B][C_in], inside the workspace (prep writes them, the passes subtract them).
FB_HOST_DEVICE float* centres(const plan& pl, const args& a) { return reinterpret_cast<float*>(a.ws + pl.off_centre); }

/// x - c[b, ci] inside the input (prep writes it, the passes stage it): the centring of
/// centres() done once per element instead of in every block that stages it (it was a second pass
/// over every staged tile, after waiting for its copies: part of the ~14% of the statistics pass's
/// stall samples that staging took, ncu, H100). The same fp32 subtraction, so the same bits.
FB_HOST_DEVICE float* centred_x(const plan& pl, const args& a) { return reinterpret_cast<float*>(a.ws + pl.off_xc); }

/// y - ybar of every output (training: pass 1 writes it, the rows launch reads it), fp32.
FB_HOST_DEVICE float* materialised(const plan& pl, const args& a) { return reinterpret_cast<float*>(a.ws + pl.off_y); }

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

/// Output rows a warp of the rows launch loads before it stores them (memory parallelism).
constexpr int k_rows_in_flight = 8;

/// Work items of the rows launch: the (b, co, od) slices of the output, H' rows of W' floats each.
FB_HOST_DEVICE int64_t output_slices(const plan& pl) { return pl.g.batch * pl.g.c_out * pl.g.dim[0].n_out; }

/// Where a rows block reads and writes: slice (b, co, od) split once per block.
struct rows_slice {
  int64_t bc;     ///< b * C_out + co
  float scale;    ///< scale_c
  int rd;         ///< the slice's d phase
  int qd, n_d;    ///< base inside the d phase's box, outputs of that phase along d
  int64_t src;    ///< materialised offset of the (b, co) plane's d-phase box
  int64_t dst;    ///< output offset of the slice
};

FB_HOST_DEVICE rows_slice rows_slice_of(const plan& pl, const args& a, int64_t slice) {
  const tile::geometry& g = pl.g;
  const int h_out = static_cast<int>(g.dim[1].n_out), w_out = static_cast<int>(g.dim[2].n_out);
  const int s = static_cast<int>(g.dim[0].s), p = static_cast<int>(g.dim[0].p);
  rows_slice rs;
  int64_t co;
  int od;
  // 32-bit where it fits (64-bit divisions are calls on the GPU, and every thread splits the index).
  if (slice < (int64_t{1} << 31) && g.c_out < (int64_t{1} << 31)) {
    const uint32_t sl = static_cast<uint32_t>(slice), d_out = static_cast<uint32_t>(g.dim[0].n_out);
    od = static_cast<int>(sl % d_out);
    rs.bc = sl / d_out;
    co = static_cast<uint32_t>(rs.bc) % static_cast<uint32_t>(g.c_out);
  } else {
    od = static_cast<int>(slice % g.dim[0].n_out);
    rs.bc = slice / g.dim[0].n_out;
    co = rs.bc % g.c_out;
  }
  rs.scale = static_cast<float>(a.ws[pl.off_scale + co]);
  const phase_order& D = pl.order[0];
  const int rd = (od + p) % s;
  rs.rd = rd;
  rs.qd = (od + p) / s - D.first_base(rd);
  rs.n_d = D.count(rd);
  rs.src = rs.bc * pl.spatial + D.offset(rd) * static_cast<int64_t>(h_out) * w_out;
  rs.dst = (rs.bc * g.dim[0].n_out + od) * h_out * static_cast<int64_t>(w_out);
  return rs;
}

/// Row groups of a slice: k_rows_in_flight output rows each (the work item of one warp).
FB_HOST_DEVICE int rows_groups(const plan& pl) {
  return static_cast<int>((pl.g.dim[1].n_out + k_rows_in_flight - 1) / k_rows_in_flight);
}

/// The rows launch (training), row group `group` of slice rs (b, co, od), lane `lane` of the warp
/// that holds it: out = scale_c * (y - ybar_bc), y - ybar_bc from the materialised buffer
/// (phase_block_of), for the rows group * k_rows_in_flight .. + k_rows_in_flight - 1 and the columns
/// ow = lane, lane + 32, ...: whole-sector stores in the output's order; the loads are runs of 32/s
/// consecutive floats, one per w phase. The rows' loads go out before their stores (one row at a
/// time left one load in flight per thread: a load cannot pass the store before it, which might
/// alias; the launch ran at 1.35 TB/s, ~2x its bytes' time, ncu H100). The w phase and base advance
/// without divisions. (Tried: staging a slice in shared memory with cp.async from the phase-major
/// places, then writing it in order: 301 us against 188, 268M instructions against 114M; H100,
/// 2026-11-25.) Index: the type of offsets inside a (b, co) plane: int when the plane has fewer than
/// 2^31 floats (fewer registers: the launch's occupancy is what hides its loads' latency), else
/// int64_t.
template <class Index>
FB_HOST_DEVICE void rows_group(const plan& pl, const args& a, const rows_slice& rs, int group, int lane) {
  const tile::geometry& g = pl.g;
  const int h_out = static_cast<int>(g.dim[1].n_out), w_out = static_cast<int>(g.dim[2].n_out);
  const int s = static_cast<int>(g.dim[0].s), p = static_cast<int>(g.dim[0].p);
  const float scale = rs.scale;
  const int qd = rs.qd, n_d = rs.n_d;
  const phase_order &H = pl.order[1], &W = pl.order[2];
  const float* src = materialised(pl, a) + rs.src;
  float* dst = a.out + rs.dst;
  const int oh0 = group * k_rows_in_flight;
  Index row_at[k_rows_in_flight];  // the row's part of the source offset
  Index box_row[k_rows_in_flight];
  Index n_dh[k_rows_in_flight];
  int rh = (oh0 + p) % s, qh = (oh0 + p) / s;
  FB_UNROLL
  for (int u = 0; u < k_rows_in_flight; ++u) {
    const int n_h = H.count(rh);
    n_dh[u] = static_cast<Index>(n_d) * n_h;
    row_at[u] = n_d * (H.offset(rh) * static_cast<Index>(w_out));
    box_row[u] = static_cast<Index>(qd) * n_h + (qh - H.first_base(rh));
    if (++rh == s) rh = 0, ++qh;
  }
  // The lane's source offsets for its current w phase (a lane keeps its phase while 32 % s == 0,
  // e.g. s = 2: one computation per row group).
  int rw = (lane + p) % s, qw = (lane + p) / s, cached_rw = -1;
  Index at[k_rows_in_flight];
  for (int ow = lane; ow < w_out; ow += 32) {
    if (rw != cached_rw) {
      const int n_w = W.count(rw), off_w = W.offset(rw), lo_w = W.first_base(rw);
      FB_UNROLL
      for (int u = 0; u < k_rows_in_flight; ++u) at[u] = row_at[u] + n_dh[u] * off_w + box_row[u] * n_w - lo_w;
      cached_rw = rw;
    }
    float v[k_rows_in_flight];
    FB_UNROLL
    for (int u = 0; u < k_rows_in_flight; ++u) v[u] = oh0 + u < h_out ? src[at[u] + qw] : 0.0f;
    FB_UNROLL
    for (int u = 0; u < k_rows_in_flight; ++u)
      if (oh0 + u < h_out) dst[static_cast<int64_t>(oh0 + u) * w_out + ow] = v[u] * scale;
    rw += 32 % s;
    qw += 32 / s;
    if (rw >= s) rw -= s, ++qw;
  }
}

/// The rows launch (training), slice (b, co, od): warp w of the block takes the row groups w,
/// w + k_warps, ... (rows_group). (Tried, H100 2026-11-25: resident blocks only, each warp a
/// contiguous run of (slice, group) items so that it split a slice index once: 278 us against this
/// version's 188. The 3168 warps then streamed from 3168 places in the buffer at once, where
/// consecutive blocks read neighbouring slices.)
template <class Index, class Exec>
FB_HOST_DEVICE void rows_block(Exec& ex, const plan& pl, const args& a, int64_t slice) {
  const rows_slice rs = rows_slice_of(pl, a, slice);
  const int groups = rows_groups(pl);
  ex.threads([&](int tid, typename Exec::state&) {
    for (int group = tid / 32; group < groups; group += tile::k_warps) rows_group<Index>(pl, a, rs, group, tid % 32);
  });
}

/// Work items of the staged rows launch: (slice, band) pairs, slice-major.
FB_HOST_DEVICE int64_t band_items(const plan& pl) { return output_slices(pl) * pl.band_count; }

/// Staged rows (training, when pl.band_rows > 0), one block of k_band_threads: band `item % band_count`
/// of slice `item / band_count`, out = scale_c * (y - ybar_bc) like rows_group (the same single
/// multiply: the same bits). Thread 0 copies the band's (rh, rw) pieces, each a run of consecutive
/// floats of the phase-major buffer (the band's rows of phase rh, all n_w(rw) bases of each), into
/// their slots in `stage` with `stager` (GPU: bulk copies completing on one mbarrier, which thread 0
/// waits for; host: memcpy),
/// from the 16-byte boundary below the piece in whole 16 bytes, and notes in `table` where (rh, rw)'s
/// first row starts (its w base lo_w at table + lo_w). Every warp then writes whole rows of the band
/// from shared memory: lanes ow = lane, lane + 32, ..., the w phase and base advancing without
/// divisions as in rows_group. stage: pl.band_stage_floats floats; table: s_h * s_w ints.
template <class Exec, class Stager>
FB_HOST_DEVICE void rows_band_block(Exec& ex, Stager& stager, const plan& pl, const args& a, int64_t item,
                                    float* stage, int* table) {
  const tile::geometry& g = pl.g;
  // One band per slice at the default: no 64-bit division (a called routine on the GPU).
  const int64_t slice = pl.band_count == 1 ? item : item / pl.band_count;
  const int band = static_cast<int>(item - slice * pl.band_count);
  const rows_slice rs = rows_slice_of(pl, a, slice);
  const int h_out = static_cast<int>(g.dim[1].n_out), w_out = static_cast<int>(g.dim[2].n_out);
  const int sh = static_cast<int>(g.dim[1].s), sw = static_cast<int>(g.dim[2].s);
  const int pw = static_cast<int>(g.dim[2].p);
  const phase_order& W = pl.order[2];
  const int oh0 = band * pl.band_rows;
  const int rows = pl.band_rows < h_out - oh0 ? pl.band_rows : h_out - oh0;
  const int t0 = oh0 + static_cast<int>(g.dim[1].p);  // t = oh + p_h; phase rh = t mod s_h, base t / s_h
  ex.threads([&](int tid, typename Exec::state&) {
    if (tid != 0) return;
    const float* y = materialised(pl, a);
    const int64_t plane = rs.bc * pl.spatial;  // the (b, co) plane of the phase-major buffer
    const int m = (pl.band_rows + sh - 1) / sh;
    int slot = 0;
    for (int rh = 0; rh < sh; ++rh) {
      // The band's bases of phase rh: [q_lo, q_hi), those t in [t0, t0 + rows) with t mod s_h = rh.
      const int q_lo = (t0 + sh - 1 - rh) / sh, q_hi = (t0 + rows + sh - 1 - rh) / sh;
      for (int rw = 0; rw < sw; ++rw) {
        // Where pass 1 put phase (rd, rh, rw): the piece starts at its row q_lo of the slice's qd.
        const phase_block pb = phase_block_of(pl, rs.rd, rh, rw);
        const int64_t at = plane + pb.base + (static_cast<int64_t>(rs.qd) * pb.n_h + q_lo - pb.lo_h) * pb.n_w;
        const int lead = static_cast<int>(at & 3);  // the buffer starts 16-byte aligned (off_y)
        const int len = (q_hi - q_lo) * pb.n_w;
        if (len > 0) stager.copy(stage + slot, y + (at - lead), (lead + len + 3) / 4 * 4);
        table[rh * sw + rw] = slot + lead - pb.lo_w;
        slot += static_cast<int>(band_slot_floats(m, pb.n_w));
      }
    }
    stager.arrive();
    // Only this thread waits for the copies; the others wait at the barrier below. (Measured: the
    // same time as every thread waiting, H100; try_wait suspends in hardware, it does not spin.)
    stager.wait();
  });
  ex.sync();  // the copies have landed (ordered by thread 0's wait), and the table is written
  ex.threads([&](int tid, typename Exec::state&) {
    const int warp = tid / 32, lane = tid % 32;
    // Per row and per column only additions: w_out = 63 gives a lane two elements per row, so
    // divisions per row (phase and base of t, of the lane's first column) made the launch
    // issue-bound (~100 instructions per element; ncu, H100).
    constexpr int kStep = k_band_threads / 32;  // rows between a warp's rows
    const int q0 = t0 / sh, r0 = t0 % sh;        // the band's first row: base q0, phase r0
    const int step_r = kStep % sh, step_q = kStep / sh;
    int rh = (r0 + warp) % sh, qh = q0 + (r0 + warp) / sh;
    const int rw0 = (lane + pw) % sw, qw0 = (lane + pw) / sw;
    const bool lane_keeps_phase = 32 % sw == 0;
    const int n_w0 = W.count(rw0);
    // Hoisted by hand: nvcc recomputed the division 32 / s_w and the trip count in every row.
    const int lane_step = 32 / sw, lane_cols = lane < w_out ? (w_out - lane + 31) / 32 : 0;
    float* dst = a.out + rs.dst + static_cast<int64_t>(oh0 + warp) * w_out;
    for (int j = warp; j < rows; j += kStep) {
      // The row's place among the band's rows of phase rh (whose first base is q0, or q0 + 1 when
      // rh comes before the band's first phase r0).
      const int row = qh - (rh >= r0 ? q0 : q0 + 1);
      const int* row_table = table + rh * sw;
      if (lane_keeps_phase) {  // 32 % s_w == 0 (s = 1, 2, 4, ...): one w phase per lane, bases 32/s_w apart
        const float* src = stage + row_table[rw0] + row * n_w0 + qw0;
        for (int c = 0; c < lane_cols; ++c) dst[lane + 32 * c] = src[c * lane_step] * rs.scale;
      } else {
        int rw = rw0, qw = qw0, cached_rw = -1, at = 0;
        for (int ow = lane; ow < w_out; ow += 32) {
          if (rw != cached_rw) {
            at = row_table[rw] + row * W.count(rw);
            cached_rw = rw;
          }
          dst[ow] = stage[at + qw] * rs.scale;
          rw += 32 % sw;
          qw += 32 / sw;
          if (rw >= sw) rw -= sw, ++qw;
        }
      }
      dst += kStep * static_cast<int64_t>(w_out);
      rh += step_r;
      qh += step_q;
      if (rh >= sh) rh -= sh, ++qh;
    }
  });
  ex.sync();  // the stage is free for the next item
}

/// Offset [doubles] of phase pp's prefix table inside a (b, co) region of the tables: the phases
/// with taps (r < min(k, s) per dimension) in order, each (Jd+1) x (Jh+1) x (Jw+1).
FB_HOST_DEVICE int64_t ptab_phase_offset(const plan& pl, const tile::phase_pos& pp) {
  const tile::geometry& g = pl.g;
  const int64_t side = g.dim[0].k + pl.ptab_m;  // sum over r < m of (J(r) + 1)
  int64_t pre[3], len[3];
  for (int d = 0; d < 3; ++d) {
    pre[d] = 0;
    for (int64_t r = 0; r < pp.r[d]; ++r) pre[d] += g.dim[d].taps(r) + 1;
    len[d] = g.dim[d].taps(pp.r[d]) + 1;
  }
  return pre[0] * side * side + len[0] * (pre[1] * side + len[1] * pre[2]);
}

/// Threads of a prep block. Prep's volume steps are chains of dependent loads and fp64 additions per
/// thread, and its 272 blocks (default config) run 2 per SM: at 256 threads a warp issued every
/// ~12 cycles (ncu, H100, 2026-11-25) and the launch took 25 us for 17 MB. More warps per volume
/// shorten each thread's chain.
constexpr int k_prep_threads = 512;

/// Blocks of the prep launch: one per (b, ci) volume, then one per (channel block, phase).
FB_HOST_DEVICE int64_t prep_blocks(const plan& pl) {
  return pl.g.batch * pl.g.c_in + pl.g.n_co_blocks * pl.g.n_phases;
}

/// Prep block (k_prep_threads threads): the tap-box sums of one (b, ci) volume, or one (channel
/// block, phase) of weights.
template <class Exec>
FB_HOST_DEVICE void prep_block(Exec& ex, const plan& pl, const args& a, int64_t block) {
  const tile::geometry& g = pl.g;
  const int64_t volumes = g.batch * g.c_in;
  if (block >= volumes) {
    tile::arrange_weights_block(ex, g, a.weight, arranged_weights(pl, a), block - volumes,
                                k_prep_threads);
    return;
  }
  const float* xv = a.x + block * g.dim[0].n_in * g.dim[1].n_in * g.dim[2].n_in;
  double* sa = a.ws + pl.off_box_a + block * pl.box_a;
  double* sb = a.ws + pl.off_box_b + block * pl.box_b;
  double* r = a.ws + pl.off_box_r + block * pl.k3;
  ex.threads([&](int tid, typename Exec::state&) {
    // The floats after y's end up to the next 16 bytes: rows_band_block's last copy reads them.
    if (block == 0 && tid < (4 - pl.y_floats % 4) % 4) materialised(pl, a)[pl.y_floats + tid] = 0.0f;
    box_sums::step_h(g.dim[0], g.dim[1], g.dim[2], xv, sa, tid, k_prep_threads);
  });
  ex.sync();
  ex.threads([&](int tid, typename Exec::state&) { box_sums::step_w(g.dim[0], g.dim[2], sa, sb, tid, k_prep_threads); });
  ex.sync();
  ex.threads([&](int tid, typename Exec::state&) { box_sums::step_d(g.dim[0], sb, r, tid, k_prep_threads); });
  ex.sync();
  ex.threads([&](int tid, typename Exec::state&) {
    if (tid != 0) return;
    centres(pl, a)[block] =
        pl.centre_count > 0.0 ? static_cast<float>(r[pl.centre_tap] / pl.centre_count) : 0.0f;
  });
  ex.sync();
  // The volume minus its centre (centred_x), 4 floats at a time where the volumes are 16-byte aligned.
  const int64_t n = g.dim[0].n_in * g.dim[1].n_in * g.dim[2].n_in;
  float* xc = centred_x(pl, a) + block * n;
  ex.threads([&](int tid, typename Exec::state&) {
    const float c = centres(pl, a)[block];
    const bool vec = n % 4 == 0 && reinterpret_cast<std::uintptr_t>(a.x) % 16 == 0;
    const int64_t n4 = vec ? n / 4 : 0;
    for (int64_t e = tid; e < n4; e += k_prep_threads) {
      float v[4];
      tile::load_ro4(xv + 4 * e, v);
      FB_UNROLL
      for (int u = 0; u < 4; ++u) v[u] = v[u] - c;
      tile::store4(xc + 4 * e, v);
    }
    for (int64_t e = 4 * n4 + tid; e < n; e += k_prep_threads) xc[e] = tile::load_ro(xv + e) - c;
  });
}

/// Lanes that share one mean: each sums every 32nd (ci, tap) product of the item, then a fixed tree.
constexpr int k_mean_lanes = 32;
/// Loads a lane of the means launch has in flight (mean_lane_sum).
constexpr int k_mean_loads = 8;

/// Lane `lane`'s share of ybar[b, co] for item = b * C_out + co: the fp64 FMA sum of W * R over the
/// flat (ci, tap) indices lane, lane + 32, ... (W in its own [ci][co][tap] order). A warp per item:
/// a thread per item left 512 items at the default on 2 blocks, 91 us of serial fp64 FMAs (measured).
FB_HOST_DEVICE double mean_lane_sum(const plan& pl, const args& a, int64_t item, int lane) {
  const tile::geometry& g = pl.g;
  const int64_t b = item / g.c_out, co = item % g.c_out;
  const double* r = a.ws + pl.off_box_r + b * g.c_in * pl.k3;
  // The lane's (ci, tap) advance without divisions, and its loads go out k_mean_loads at a time
  // before the FMAs that use them (same FMA order): one division and one load per FMA made the
  // means launch a chain of dependent round trips (F2F waiting on its load: most of its ncu
  // samples, H100).
  const int64_t n = g.c_in * pl.k3;
  int64_t ci = lane / pl.k3, t = lane % pl.k3;
  double acc = 0.0;
  for (int64_t j0 = lane; j0 < n; j0 += k_mean_lanes * k_mean_loads) {
    float w[k_mean_loads];
    double rv[k_mean_loads];
    FB_UNROLL
    for (int u = 0; u < k_mean_loads; ++u) {
      const int64_t j = j0 + u * k_mean_lanes;
      w[u] = j < n ? tile::load_ro(a.weight + (ci * g.c_out + co) * pl.k3 + t) : 0.0f;
      rv[u] = j < n ? r[j] : 0.0;
      t += k_mean_lanes;
      while (t >= pl.k3) t -= pl.k3, ++ci;
    }
    FB_UNROLL
    for (int u = 0; u < k_mean_loads; ++u)
      if (j0 + u * k_mean_lanes < n) acc = fma(static_cast<double>(w[u]), rv[u], acc);
  }
  return acc;
}

/// ybar[b, co] from the 32 lane sums, added in the fixed tree the device's shuffles use (offsets 16,
/// 8, 4, 2, 1 into lane 0), over D'H'W'. Without the conv bias (it cancels in the output; finalize
/// adds it for running_mean).
FB_HOST_DEVICE double mean_from_lanes(const plan& pl, double (&lanes)[k_mean_lanes]) {
  for (int off = k_mean_lanes / 2; off > 0; off /= 2)
    for (int l = 0; l < off; ++l) lanes[l] += lanes[l + off];
  return lanes[0] / static_cast<double>(pl.spatial);
}

/// Prefix tables of the centring per (b, co): one per phase with taps, ptab_m^3.
FB_HOST_DEVICE int64_t ptab_per_bc_phases(const plan& pl) { return pl.ptab_m * pl.ptab_m * pl.ptab_m; }

/// The centring's share of tap t for (b, co) = bc: V[b, co, t] = sum_ci W[ci, co, t] * c[b, ci] (fp64
/// FMAs, ci ascending; see ptab_item), into the workspace at off_shares. A thread per tap: one
/// thread per prefix table computing its taps' shares in turn, C_in loads each, was the longest
/// chain of dependent loads of the launches before the passes (means, 20 us at the default; H100).
FB_HOST_DEVICE void tap_share_item(const plan& pl, const args& a, int64_t bc, int64_t t) {
  const tile::geometry& g = pl.g;
  const int64_t b = bc / g.c_out, co = bc % g.c_out;
  const float* w = a.weight + co * pl.k3 + t;
  const float* cs = centres(pl, a) + b * g.c_in;
  double v = 0.0;
  for (int64_t ci0 = 0; ci0 < g.c_in; ci0 += k_mean_loads) {  // loads first (mean_lane_sum says why)
    float wv[k_mean_loads], cv[k_mean_loads];
    FB_UNROLL
    for (int u = 0; u < k_mean_loads; ++u) {
      const bool in = ci0 + u < g.c_in;
      wv[u] = in ? tile::load_ro(w + (ci0 + u) * g.c_out * pl.k3) : 0.0f;
      cv[u] = in ? cs[ci0 + u] : 0.0f;
    }
    FB_UNROLL
    for (int u = 0; u < k_mean_loads; ++u)
      if (ci0 + u < g.c_in) v = fma(static_cast<double>(wv[u]), static_cast<double>(cv[u]), v);
  }
  a.ws[pl.off_shares + bc * pl.k3 + t] = v;
}

/// The centring of y. The passes convolve x - c (c = centres(), per (b, ci)) instead of x, so
/// the fp32 sums have terms of x's spread, not of its offset (inputs at +2: 3.6x smaller rounding);
/// the part left out, K(o) = sum over the taps of o that read inside the input of
/// V[b, co, tap] = sum_ci W[ci, co, tap] * c[b, ci], is exact in fp64 and goes into the centre that
/// the epilogues subtract: y - ybar = (sum of the centred products) - (ybar - K(o)). Over a phase's
/// taps K is a box sum: along each dimension the taps that read inside the input form an interval
/// (valid_taps), all J of them away from the borders. Table item (b, co, phase with taps): the
/// inclusive prefix sums P[a][b][c] = sum of V over jd < a, jh < b, jw < c, (Jd+1)(Jh+1)(Jw+1)
/// doubles at ptab_phase_offset; V from fp64 FMAs over ci ascending, P by inclusion-exclusion
/// (additions only: no contraction can differ between compilers).
FB_HOST_DEVICE void ptab_item(const plan& pl, const args& a, int64_t item) {
  const tile::geometry& g = pl.g;
  const int64_t m = pl.ptab_m, per_bc_phases = ptab_per_bc_phases(pl);
  const int64_t bc = item / per_bc_phases, tp = item % per_bc_phases;
  const int64_t s = g.dim[0].s, k = g.dim[0].k;
  tile::phase_pos pp = tile::phase_of(g, ((tp / (m * m)) * s + (tp / m) % m) * s + tp % m);
  double* P = a.ws + pl.off_ptab + bc * pl.ptab_per_bc + ptab_phase_offset(pl, pp);
  const double* V = a.ws + pl.off_shares + bc * pl.k3;  // tap_share_item, earlier in the same block
  const int64_t nb = pp.jh + 1, nc = pp.jw + 1;
  auto at = [&](int64_t i, int64_t j, int64_t l) -> double& { return P[(i * nb + j) * nc + l]; };
  for (int64_t i = 0; i <= pp.jd; ++i)
    for (int64_t j = 0; j <= pp.jh; ++j)
      for (int64_t l = 0; l <= pp.jw; ++l) {
        if (i == 0 || j == 0 || l == 0) {
          at(i, j, l) = 0.0;
          continue;
        }
        const int64_t td = pp.r[0] + (i - 1) * s, th = pp.r[1] + (j - 1) * s, tw = pp.r[2] + (l - 1) * s;
        const double v = V[(td * k + th) * k + tw];
        at(i, j, l) = ((((((v + at(i - 1, j, l)) + at(i, j - 1, l)) + at(i, j, l - 1)) - at(i - 1, j - 1, l)) -
                        at(i - 1, j, l - 1)) -
                       at(i, j - 1, l - 1)) +
                      at(i - 1, j - 1, l - 1);
      }
}

/// ybar as an unevaluated fp32 sum hi + lo (|lo| <= ulp(hi)/2): y - hi is exact or rounded
/// relative to the difference, so the centring loses nothing to the mean's fp32 rounding even when
/// the mean is large against the spread (offset inputs).
FB_HOST_DEVICE void split_mean(double ybar, float& hi, float& lo) {
  hi = static_cast<float>(ybar);
  lo = static_cast<float>(ybar - static_cast<double>(hi));
}

/// K over the box of taps [ld, hd) x [lh, hh) x [lw, hw) of phase pp (which has taps), channel co of
/// sample b: the 8 corners of the phase's prefix table, in one fixed order (inclusion-exclusion).
FB_HOST_DEVICE double box_share(const plan& pl, const args& a, int b, int64_t co, const tile::phase_pos& pp, int ld,
                                int hd, int lh, int hh, int lw, int hw) {
  const tile::geometry& g = pl.g;
  const double* P = a.ws + pl.off_ptab + (static_cast<int64_t>(b) * g.c_out + co) * pl.ptab_per_bc +
                    ptab_phase_offset(pl, pp);
  const int nb = pp.jh + 1, nc = pp.jw + 1;
  auto at = [&](int i, int j, int l) { return tile::load_ro(P + (i * nb + j) * nc + l); };
  return ((((((at(hd, hh, hw) - at(ld, hh, hw)) - at(hd, lh, hw)) - at(hd, hh, lw)) + at(ld, lh, hw)) +
           at(ld, hh, lw)) +
          at(hd, lh, lw)) -
         at(ld, lh, lw);
}

/// The centre ybar - K(o) of output channel co at bases (qd, qh, qw) of phase pp, as hi + lo:
/// K(o) from the phase's prefix table (8 corners of the box of valid taps). Plans with class tables
/// (J0 <= 2) take the same values from class_table_item; this is the J0 > 2 path.
FB_HOST_DEVICE void centre_at(const plan& pl, const args& a, int b, const tile::phase_pos& pp, int64_t co, int qd,
                              int qh, int qw, float& hi, float& lo) {
  const tile::geometry& g = pl.g;
  double k_sum = 0.0;
  if (pp.taps > 0) {
    int ld, hd, lh, hh, lw, hw;
    tile::valid_taps(g.dim[0], qd, pp.jd, ld, hd);
    tile::valid_taps(g.dim[1], qh, pp.jh, lh, hh);
    tile::valid_taps(g.dim[2], qw, pp.jw, lw, hw);
    k_sum = box_share(pl, a, b, co, pp, ld, hd, lh, hh, lw, hw);
  }
  split_mean(a.ws[pl.off_ybar + static_cast<int64_t>(b) * g.c_out + co] - k_sum, hi, lo);
}

/// Class-table item (b, phase ph, class combination, channel slot co of n_co_blocks * k_co_block): the
/// centre ybar - K(o) of every output of channel co in that phase whose valid taps are the box of
/// the combination's classes (tile::class_taps), as hi + lo (split_mean). K(o) is the sum of the
/// box's taps' shares (tap_share_item, written earlier in the same centring block: read through the
/// coherent path), fp64, jd, jh, jw ascending: at most 8 terms (J <= 2 per dimension where there are
/// class tables). (It was taken from the prefix tables by inclusion-exclusion, as centre_at does for
/// J0 > 2: a thread per table filling (J+1)^3 entries one after another, each reading the ones
/// before it, was the longest chain of the launches before the passes; H100, 2026-11-25.) 0 where
/// the box is empty or the phase has no taps; slots past C_out hold 0. ybar: ybar[b, co].
FB_HOST_DEVICE void class_table_item(const plan& pl, const args& a, int64_t b, int64_t ph, int combo, int64_t co,
                                      double ybar) {
  const tile::geometry& g = pl.g;
  const int64_t co_pad = g.n_co_blocks * k_co_block;
  const int64_t item = ((b * g.n_phases + ph) * tile::k_class_combos + combo) * co_pad + co;
  float* out = reinterpret_cast<float*>(a.ws + pl.off_ctab) + 2 * item;
  float hi = 0.0f, lo = 0.0f;
  if (co < g.c_out) {
    const tile::phase_pos pp = tile::phase_of(g, ph);
    const int64_t s = g.dim[0].s, k = g.dim[0].k;
    const double* V = a.ws + pl.off_shares + (b * g.c_out + co) * pl.k3;
    double k_sum = 0.0;
    int ld, hd, lh, hh, lw, hw;
    tile::class_box(combo, pp, ld, hd, lh, hh, lw, hw);
    if (pp.taps > 0)
      for (int jd = ld; jd < hd; ++jd)
        for (int jh = lh; jh < hh; ++jh)
          for (int jw = lw; jw < hw; ++jw)
            k_sum += V[((pp.r[0] + jd * s) * k + (pp.r[1] + jh * s)) * k + (pp.r[2] + jw * s)];
    split_mean(ybar - k_sum, hi, lo);
  }
  out[0] = hi;
  out[1] = lo;
}

/// Blocks of the centring launch: one per (sample, channel slot of n_co_blocks * k_co_block).
FB_HOST_DEVICE int64_t centring_blocks(const plan& pl) { return pl.g.batch * pl.g.n_co_blocks * k_co_block; }

/// Shared memory of a centring block [doubles]: the mean's lane sums, then ybar.
constexpr int k_centring_smem_doubles = k_mean_lanes + 1;

/// Centring block (b, channel slot co): everything the passes' epilogues need about (b, co) before
/// the convolution, in one launch (it was three: means, prefix tables, class tables; 20 + 8 us at the
/// default, mostly chains of dependent loads, H100): (1) the 32 lane sums of ybar (mean_lane_sum)
/// and, on the other threads, the taps' shares (tap_share_item); (2) ybar from the lane sums (the
/// fixed tree of mean_from_lanes); (3) with class tables (J0 <= 2), the entries of channel slot co
/// for every phase and combination (class_table_item; slots past C_out only write their zeros),
/// else the prefix tables that centre_at reads, a thread per phase with taps (ptab_item).
/// smem: k_centring_smem_doubles.
template <class Exec>
FB_HOST_DEVICE void centring_block(Exec& ex, const plan& pl, const args& a, int64_t block, double* smem) {
  const tile::geometry& g = pl.g;
  const int64_t co_pad = g.n_co_blocks * k_co_block;
  const int64_t b = block / co_pad, co = block % co_pad;
  const bool has_channel = co < g.c_out;
  const int64_t bc = b * g.c_out + co;
  double* lanes = smem;
  double* ybar = smem + k_mean_lanes;
  static_assert(k_threads > k_mean_lanes, "threads past the mean's lanes compute the taps' shares");
  ex.threads([&](int tid, typename Exec::state&) {
    if (!has_channel) return;
    if (tid < k_mean_lanes)
      lanes[tid] = mean_lane_sum(pl, a, bc, tid);
    else
      for (int64_t t = tid - k_mean_lanes; t < pl.k3; t += k_threads - k_mean_lanes) tap_share_item(pl, a, bc, t);
  });
  ex.sync();
  ex.threads([&](int tid, typename Exec::state&) {
    if (!has_channel) return;
    if (tid == 0) {
      double l[k_mean_lanes];
      for (int i = 0; i < k_mean_lanes; ++i) l[i] = lanes[i];
      *ybar = mean_from_lanes(pl, l);
      a.ws[pl.off_ybar + bc] = *ybar;
    }
    if (pl.class_table) return;
    const int64_t per_bc = ptab_per_bc_phases(pl);
    for (int64_t tp = tid; tp < per_bc; tp += k_threads) ptab_item(pl, a, bc * per_bc + tp);
  });
  if (!pl.class_table) return;
  ex.sync();
  ex.threads([&](int tid, typename Exec::state&) {
    const double yb = has_channel ? *ybar : 0.0;
    for (int64_t e = tid; e < g.n_phases * tile::k_class_combos; e += k_threads)
      class_table_item(pl, a, b, e / tile::k_class_combos, static_cast<int>(e % tile::k_class_combos), co, yb);
  });
}

/// Copies phase pp's centres of the block's channels (every class combination) into tab, the
/// k_class_floats of the phase's parity buffer (asynchronous: the caller waits before the barrier
/// that opens the phase). Thread tid copies float4s tid, tid + k_threads, ...
FB_HOST_DEVICE void stage_class_table(const plan& pl, const args& a, int tid, const tile::block_pos& bp,
                                      const tile::phase_pos& pp, float* tab) {
  const tile::geometry& g = pl.g;
  const int64_t co_pad = g.n_co_blocks * k_co_block;
  const float* src = reinterpret_cast<const float*>(a.ws + pl.off_ctab) +
                     2 * (((static_cast<int64_t>(bp.b) * g.n_phases + pp.index) * tile::k_class_combos) * co_pad +
                          static_cast<int64_t>(bp.cob) * k_co_block);
  constexpr int kPerCombo = 2 * k_co_block / 4;  // float4s per class combination
  for (int e = tid; e < tile::k_class_combos * kPerCombo; e += k_threads) {
    const int combo = e / kPerCombo, part = e % kPerCombo;
    tile::copy_async_f128(tab + combo * 2 * k_co_block + 4 * part, src + combo * 2 * co_pad + 4 * part);
  }
}

/// The centres (hi, lo) of the k_co_thread channels starting at block channel cbase for class
/// combination combo, from a staged class table (16-byte aligned: cbase is a multiple of 8).
FB_HOST_DEVICE void class_centres(const float* tab, int combo, int cbase, float (&hi)[k_co_thread],
                                  float (&lo)[k_co_thread]) {
  const float* e = tab + (combo * k_co_block + cbase) * 2;
#if defined(__CUDA_ARCH__)
  FB_UNROLL
  for (int u = 0; u < k_co_thread / 2; ++u) {
    const float4 q = reinterpret_cast<const float4*>(e)[u];
    hi[2 * u] = q.x;
    lo[2 * u] = q.y;
    hi[2 * u + 1] = q.z;
    lo[2 * u + 1] = q.w;
  }
#else
  for (int c = 0; c < k_co_thread; ++c) {
    hi[c] = e[2 * c];
    lo[c] = e[2 * c + 1];
  }
#endif
}

/// centre_at for plans without class tables (J0 > 2: the generic tap loop), out of line: it is
/// reached from unrolled places in every pass kernel, and inlined there it would be copied into
/// each of them.
FB_HOST_DEVICE_OUT_OF_LINE void centre_at_out_of_line(const plan& pl, const args& a, int b,
                                                      const tile::phase_pos& pp, int64_t co, int qd, int qh, int qw,
                                                      float& hi, float& lo) {
  centre_at(pl, a, b, pp, co, qd, qh, qw, hi, lo);
}

/// The centres (hi, lo) of a thread's outputs in row r, channels co0 .. co0 + k_co_thread - 1 (0
/// past n_co): from the phase's staged class table tab, or computed (plans without tables).
/// kTables: the plan is known to have class tables (the unrolled variants, J0 <= 2), so the kernel
/// holds no code for the other path (with it, ptxas kept registers for a call and spilled).
/// combo_dw: the d and w part of the thread's class combination (tile::class_combo_dw, once per phase).
template <bool kTables>
FB_HOST_DEVICE void row_centres(const plan& pl, const args& a, const tile::block_pos& bp, const tile::phase_pos& pp,
                                const tile::thread_outputs& o, int r, int combo_dw, const float* tab, int cbase,
                                float (&hi)[k_co_thread], float (&lo)[k_co_thread]) {
  if constexpr (!kTables) {
    if (!pl.class_table) {
      FB_UNROLL
      for (int c = 0; c < k_co_thread; ++c) {
        hi[c] = 0.0f;
        lo[c] = 0.0f;
        if (c < o.n_co) centre_at_out_of_line(pl, a, bp.b, pp, o.co0 + c, o.qd, o.qh0 + r, o.qw, hi[c], lo[c]);
      }
      return;
    }
  }
  class_centres(tab, tile::class_combo_at(pl.g, pp, combo_dw, o.qh0 + r), cbase, hi, lo);
}

/// Pass 1's policy: every output's d = y - ybar = ((sum of centred products) - hi) - lo (hi + lo:
/// the output's centre, row_centres) goes to the materialised buffer (phase_block_of), and per
/// thread and channel the fp32 sum over its k_rows outputs of one phase of d^2 is added to an fp64
/// slot (the thread's own: no barrier); at the end the block sums
/// its 128 slots per channel in 16 fixed slices, then the slices in order, into m2_part[b, tile,
/// co]. Its shared memory (region): m2s [k_co_thread][k_m2_stride] fp64, red [k_threads] fp64, then
/// the class tables of two phases (k_class_floats fp32 each).
template <bool kTables>
struct stats_policy {
  const plan& pl;
  const args& a;

  FB_HOST_DEVICE static double* m2s(float* region) { return reinterpret_cast<double*>(region); }
  FB_HOST_DEVICE static double* red(float* region) { return m2s(region) + k_co_thread * k_m2_stride; }
  /// The class tables of the phases of parity 0 and 1 (k_class_floats each).
  FB_HOST_DEVICE static float* tables(float* region) { return reinterpret_cast<float*>(red(region) + k_threads); }
  /// Where the block's outputs of a phase go in the materialised buffer: output (qd, qh, qw) of
  /// block channel cb at at0 + cb * plane + (qd * n_h + qh) * n_w + qw (phase_block_of, with the
  /// block's sample and first channel folded into at0). Thread 0 derives it in phase_begin for the
  /// whole block: per thread it was ~100 instructions of 64-bit products per phase, a sixth of the
  /// epilogue's (ncu source view, H100, 2026-11-25).
  struct phase_place {
    int64_t at0;
    int n_h, n_w;
  };
  static_assert(sizeof(phase_place) == 16, "k_stats_smem_bytes holds two of them");
  FB_HOST_DEVICE static phase_place* places(float* region) {
    return reinterpret_cast<phase_place*>(tables(region) + 2 * k_class_floats);
  }

  template <class Exec>
  FB_HOST_DEVICE void prologue(Exec& ex, const tile::block_pos&, float* region) const {
    ex.threads([&](int tid, typename Exec::state&) {
      for (int c = 0; c < k_co_thread; ++c) m2s(region)[c * k_m2_stride + tid] = 0.0;
    });
  }

  FB_HOST_DEVICE void phase_begin(int tid, const tile::block_pos& bp, const tile::phase_pos& pp, float* region) const {
    // Pass 1 is a dependent launch of the centring launch (its blocks stage x and the first weights
    // while centring finishes): the class tables are the first thing it reads from it.
    wait_for_preceding_launch();
    if (pl.class_table) stage_class_table(pl, a, tid, bp, pp, tables(region) + (pp.index & 1) * k_class_floats);
    if (tid == 0) {
      const phase_block pb = phase_block_of(pl, pp.r[0], pp.r[1], pp.r[2]);
      phase_place& pc = places(region)[pp.index & 1];
      pc.at0 = (static_cast<int64_t>(bp.b) * pl.g.c_out + static_cast<int64_t>(bp.cob) * k_co_block) * pl.spatial +
               pb.base - (static_cast<int64_t>(pb.lo_d) * pb.n_h + pb.lo_h) * pb.n_w - pb.lo_w;
      pc.n_h = pb.n_h;
      pc.n_w = pb.n_w;
    }
  }

  template <class State>
  FB_HOST_DEVICE void epilogue(int tid, State& st, const tile::block_pos& bp, const tile::phase_pos& pp,
                               const tile::thread_outputs& o, float* region) const {
    if (!o.active) return;
    const int cbase = o.co0 - bp.cob * k_co_block;
    const float* tab = tables(region) + (pp.index & 1) * k_class_floats;
    float part[k_co_thread];
    FB_UNROLL
    for (int c = 0; c < k_co_thread; ++c) part[c] = 0.0f;
    // This thread's outputs in the materialised buffer: row r of channel c at at + r * n_w + c * plane.
    const tile::geometry& g = pl.g;
    const phase_place pc = places(region)[pp.index & 1];
    const int64_t plane = pl.spatial;
    const int64_t at = pc.at0 + cbase * plane + (static_cast<int64_t>(o.qd) * pc.n_h + o.qh0) * pc.n_w + o.qw;
    const int combo_dw = pl.class_table ? tile::class_combo_dw(g, pp, o.qd, o.qw) : 0;
    // The rows, with a store predicate per channel only where the thread's channels pass C_out
    // (kAllChannels false). The class combination's d and w part once per phase, not per row: the
    // per-row class and store address arithmetic were ~2/3 of this epilogue's ~690 instructions per
    // phase and warp (ncu source view, H100, 2026-11-25).
    auto rows = [&](auto all_channels) {
      constexpr bool kAllChannels = decltype(all_channels)::value;
      FB_UNROLL
      for (int r = 0; r < tile::k_rows; ++r) {
        if (!o.row_ok[r]) continue;
        float h[k_co_thread], l[k_co_thread];
        row_centres<kTables>(pl, a, bp, pp, o, r, combo_dw, tab, cbase, h, l);
        float* p = materialised(pl, a) + (at + r * pc.n_w);  // row r exists: the offset is >= 0
        FB_UNROLL
        for (int c = 0; c < k_co_thread; ++c) {
          const float d = (st.acc.v[r][c] - h[c]) - l[c];
          part[c] = tile::fma32(d, d, part[c]);
          if (kAllChannels || c < o.n_co) *p = d;
          p += plane;
        }
      }
    };
    if (o.n_co >= k_co_thread)
      rows(std::true_type{});
    else
      rows(std::false_type{});
    FB_UNROLL
    for (int c = 0; c < k_co_thread; ++c)
      if (c < o.n_co) m2s(region)[c * k_m2_stride + tid] += static_cast<double>(part[c]);
  }

  template <class Exec>
  FB_HOST_DEVICE void phase_end(Exec&, const tile::block_pos&, const tile::phase_pos&, float*) const {}

  template <class Exec>
  FB_HOST_DEVICE void finish(Exec& ex, const tile::block_pos& bp, float* region) const {
    constexpr int kSlices = k_threads / k_co_block;           // 16
    constexpr int kPerChannel = k_threads / tile::k_warps_c;  // 128 thread slots hold one channel
    constexpr int kPerSlice = kPerChannel / kSlices;          // 8
    ex.sync();
    ex.threads([&](int tid, typename Exec::state&) {
      const int cb = tid % k_co_block, slice = tid / k_co_block;
      const int wc = cb / k_co_thread, c = cb % k_co_thread;
      double acc = 0.0;
      for (int e = slice * kPerSlice; e < (slice + 1) * kPerSlice; ++e) {
        const int warp = wc + tile::k_warps_c * (e / 32);
        acc += m2s(region)[c * k_m2_stride + warp * 32 + (e % 32)];
      }
      red(region)[slice * k_co_block + cb] = acc;
    });
    ex.sync();
    ex.threads([&](int tid, typename Exec::state&) {
      if (tid >= k_co_block) return;
      const int64_t co = static_cast<int64_t>(bp.cob) * k_co_block + tid;
      if (co >= pl.g.c_out) return;
      double acc = 0.0;
      for (int sl = 0; sl < kSlices; ++sl) acc += red(region)[sl * k_co_block + tid];
      a.ws[pl.off_m2_part + (static_cast<int64_t>(bp.b) * pl.g.tiles_per_sample + bp.tile) * pl.g.c_out + co] = acc;
    });
  }
};

/// Pass 2's policy (eval mode: the scale is known before the convolution): out = scale_c * (y -
/// ybar_bc) = scale_c * ((sum of centred products) - hi - lo), as fma(sum - hi, scale, -lo*scale),
/// hi + lo the output's centre (as in pass 1). Its shared
/// memory (region): scale [k_co_block], then hi [2][k_co_block] and -lo*scale [2][k_co_block] (fp32).
template <bool kTables>
struct write_policy {
  const plan& pl;
  const args& a;

  FB_HOST_DEVICE static float* scale(float* region) { return region; }
  /// The class tables of the phases of parity 0 and 1, after the scale (16-byte aligned).
  FB_HOST_DEVICE static float* tables(float* region) { return region + 4 * k_co_block; }

  template <class Exec>
  FB_HOST_DEVICE void prologue(Exec& ex, const tile::block_pos& bp, float* region) const {
    ex.threads([&](int tid, typename Exec::state&) {
      wait_for_preceding_launch();  // a dependent launch of finalize, whose scale it reads first
      if (tid >= k_co_block) return;
      const int64_t co = static_cast<int64_t>(bp.cob) * k_co_block + tid;
      scale(region)[tid] = co < pl.g.c_out ? static_cast<float>(a.ws[pl.off_scale + co]) : 0.0f;
    });
  }

  FB_HOST_DEVICE void phase_begin(int tid, const tile::block_pos& bp, const tile::phase_pos& pp, float* region) const {
    if (pl.class_table) stage_class_table(pl, a, tid, bp, pp, tables(region) + (pp.index & 1) * k_class_floats);
  }

  template <class State>
  FB_HOST_DEVICE void epilogue(int, State& st, const tile::block_pos& bp, const tile::phase_pos& pp,
                               const tile::thread_outputs& o, float* region) const {
    if (!o.active || o.n_co <= 0) return;
    const tile::geometry& g = pl.g;
    const int64_t w_out = g.dim[2].n_out;
    const int64_t hw = g.dim[1].n_out * w_out;
    const int64_t plane = g.dim[0].n_out * hw;
    float* base = a.out + (static_cast<int64_t>(bp.b) * g.c_out + o.co0) * plane + o.od * hw + o.ow;
    const int cbase = o.co0 - bp.cob * k_co_block;
    const float* tab = tables(region) + (pp.index & 1) * k_class_floats;
    // A warp's lanes write every s-th float of a row, so each 32-byte sector is written in parts by
    // the row's w phases, which follow one another in the phase loop (r_w innermost). Measured on an
    // H100 (ncu, default config): pass 2 moved ~3x the output's bytes through DRAM and took 488 us
    // against pass 1's 240; storing all but the last w phase with L2 evict_last brought it to 429 us
    // (DRAM still ~2.5x: partial sectors are still filled from DRAM). Full-sector stores are the fix.
    // (32-bit: a 64-bit remainder is a call to a division routine on the GPU.)
    const int sw = static_cast<int>(g.dim[2].s);
    const bool keep_in_l2 = (o.ow + static_cast<int>(g.dim[2].p)) % sw != sw - 1;
    const uint64_t policy = tile::l2_evict_last_policy();
    float s[k_co_thread];
    FB_UNROLL
    for (int c = 0; c < k_co_thread; ++c) s[c] = scale(region)[cbase + c];
    // Addresses advance by a channel's plane per column: one 64-bit addition per store (the
    // products per store made this epilogue ~900 instructions per phase and warp, ncu on the H100).
    const int combo_dw = pl.class_table ? tile::class_combo_dw(g, pp, o.qd, o.qw) : 0;
    FB_UNROLL
    for (int r = 0; r < tile::k_rows; ++r) {
      if (!o.row_ok[r]) continue;
      float h[k_co_thread], l[k_co_thread];
      row_centres<kTables>(pl, a, bp, pp, o, r, combo_dw, tab, cbase, h, l);
      float* p = base + static_cast<int64_t>(o.oh[r]) * w_out;
      FB_UNROLL
      for (int c = 0; c < k_co_thread; ++c) {
        if (c < o.n_co) tile::store_out(p, tile::fma32(st.acc.v[r][c] - h[c], s[c], -(l[c] * s[c])), keep_in_l2, policy);
        p += plane;
      }
    }
  }

  template <class Exec>
  FB_HOST_DEVICE void phase_end(Exec&, const tile::block_pos&, const tile::phase_pos&, float*) const {}

  template <class Exec>
  FB_HOST_DEVICE void finish(Exec&, const tile::block_pos&, float*) const {}
};

/// Finalize's shared memory [doubles]: k_finalize_samples lane sums per warp lane, then the
/// channel's ybar and m2 of up to k_finalize_samples samples.
constexpr int k_finalize_samples = 32;  ///< samples per round of the tile sums (4 per warp)
constexpr int k_finalize_smem_doubles = k_threads * (k_finalize_samples / tile::k_warps) + 2 * k_finalize_samples;

/// Finalize block c: the channel's per-sample centred sums, its batch statistics, running buffers
/// and scale (training); the scale from running_var (eval). smem: k_finalize_smem_doubles.
/// m2[b, c] = sum over tiles of m2_part[b, tile, c]: in rounds of k_finalize_samples samples, warp
/// w takes 4 of them, lane l sums the tiles l, l + 32, ... of each (in order) and lane 0 adds the
/// 32 lane sums in order. (A thread per sample adding all its tiles, and one thread combining the
/// samples from global memory, was a chain of dependent L2 round trips: 21 us, ncu, H100.)
template <class Exec>
FB_HOST_DEVICE void finalize_block(Exec& ex, const plan& pl, const args& a, int64_t c, double* smem) {
  const tile::geometry& g = pl.g;
  constexpr int kPerWarp = k_finalize_samples / tile::k_warps;
  double* lanes = smem;                              // [warp][sample of the warp][lane]
  double* ybar_s = smem + k_threads * kPerWarp;      // the round's samples (kept when B fits one round)
  double* m2_s = ybar_s + k_finalize_samples;
  const bool one_round = g.batch <= k_finalize_samples;
  if (pl.training) {
    for (int64_t b0 = 0; b0 < g.batch; b0 += k_finalize_samples) {
      ex.threads([&](int tid, typename Exec::state&) {
        const int warp = tid / 32, lane = tid % 32;
        FB_UNROLL
        for (int u = 0; u < kPerWarp; ++u) {
          const int64_t b = b0 + warp * kPerWarp + u;
          double acc = 0.0;
          if (b < g.batch) {
            const double* part = a.ws + pl.off_m2_part + b * g.tiles_per_sample * g.c_out + c;
            for (int64_t t = lane; t < g.tiles_per_sample; t += 32) acc += part[t * g.c_out];
          }
          lanes[(warp * kPerWarp + u) * 32 + lane] = acc;
        }
      });
      ex.sync();
      ex.threads([&](int tid, typename Exec::state&) {
        if (tid >= k_finalize_samples) return;
        const int64_t b = b0 + tid;
        if (b >= g.batch) return;
        double acc = 0.0;
        for (int l = 0; l < 32; ++l) acc += lanes[tid * 32 + l];
        a.ws[pl.off_m2_bc + b * g.c_out + c] = acc;
        if (one_round) {
          m2_s[tid] = acc;
          ybar_s[tid] = a.ws[pl.off_ybar + b * g.c_out + c];
        }
      });
      ex.sync();
    }
  }
  ex.threads([&](int tid, typename Exec::state&) {
    if (tid != 0) return;
    const double gamma = static_cast<double>(a.gamma[c]);
    double var = 0.0;
    if (pl.training) {
      // From shared memory when the batch fits one round (the default), else from the workspace.
      bn::channel_moments mo =
          one_round ? bn::combine_sample_moments(ybar_s, m2_s, g.batch, 1, static_cast<double>(pl.spatial))
                    : bn::combine_sample_moments(a.ws + pl.off_ybar + c, a.ws + pl.off_m2_bc + c, g.batch, g.c_out,
                                                 static_cast<double>(pl.spatial));
      var = mo.var_biased;
      if (a.conv_bias != nullptr) mo.mean += static_cast<double>(a.conv_bias[c]);  // the true batch mean
      bn::update_running(a.running_mean, a.running_var, c, mo, static_cast<double>(g.batch * pl.spatial),
                         pl.momentum);
      if (c == 0) *a.num_batches_tracked += 1;
    } else {
      var = static_cast<double>(a.running_var[c]);
    }
    // Only the scale is needed: beta and the mean cancel against the per-(b, c) mean subtraction.
    a.ws[pl.off_scale + c] = bn::normalisation(0.0, var, gamma, 0.0, pl.eps).scale;
  });
}

/// One block of pass 1 (kStats) or pass 2, in shared memory `smem` (plan's smem_*_bytes).
/// kChunked must equal pl.g.n_ci_chunks > 1.
template <int kJ0, bool kChunked, bool kStats, class Exec>
FB_HOST_DEVICE void pass_block(Exec& ex, const plan& pl, const args& a, int64_t block, float* smem) {
  if constexpr (kStats) {
    const stats_policy<kJ0 != 0> pol{pl, a};
    tile::conv_tile_block<kJ0, kChunked>(ex, pl.g, centred_x(pl, a), nullptr, arranged_weights(pl, a), block, smem,
                                         pol);
  } else {
    const write_policy<kJ0 != 0> pol{pl, a};
    tile::conv_tile_block<kJ0, kChunked>(ex, pl.g, centred_x(pl, a), nullptr, arranged_weights(pl, a), block, smem,
                                         pol);
  }
}

/// The host executor on a plan (run_host validates the pointers and calls it; tests call it with a
/// plan made with force_generic). Defined in fused/convt3d_bn_sub/convt3d_bn_sub_host.cpp.
void run_host_plan(const plan& pl, const args& a);

}  // namespace fb::fused::convt3d_bn_sub::detail
