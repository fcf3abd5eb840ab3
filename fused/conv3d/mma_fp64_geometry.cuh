#pragma once
/// The fp64 tensor-core convolution's geometry (fused/conv3d/mma_fp64_tile.cuh): the warp and
/// block tiles, shared-memory tiers, the problem's geometry, where a block works, the K rows and
/// their koff tables, and the weights' arrangement in fragment order.

#include <cstddef>
#include <cstdint>
#include "fused/arch/host_device.cuh"
#include "fused/arch/mma_f64.cuh"
#include "fused/arch/read_only.cuh"
#include "fused/math/convt_index.cuh"
#include "fused/math/convt_phase.cuh"

namespace fb::fused::conv3d::mma_fp64 {

constexpr int k_warps = 4;
constexpr int k_threads = 32 * k_warps;
constexpr int k_mt = 2;                     ///< m16 tiles per warp: 32 positions
constexpr int k_nt = 4;                     ///< n8 tiles per warp: 32 channels
constexpr int k_warp_m = k_mt * arch::mma::k_m;   ///< positions per warp tile
constexpr int k_warp_n = k_nt * arch::mma::k_n;   ///< channels per warp tile
constexpr int k_group = 64;                 ///< output channels per block (at most)
constexpr int k_group_nt = k_group / arch::mma::k_n;  ///< n8 tiles of a group's arranged weights
/// Floats of one k16 step of a group's arranged weights: k_group_nt tiles x 32 lanes x 4 values.
constexpr int k_step_floats = k_group_nt * 32 * arch::mma::k_b_regs;

/// Shared memory a block may use: three blocks per SM (Hopper: 228 KB per SM, 1 KB reserved per
/// block) where the tile fits with every input channel staged at once, else two, else one. The
/// kernels' register budget is set for three (k_blocks_per_sm).
constexpr int k_blocks_per_sm = 3;
constexpr std::size_t k_smem_three_per_sm_bytes = 75 * 1024;
constexpr std::size_t k_smem_two_per_sm_bytes = 113 * 1024;
constexpr std::size_t k_smem_max_bytes = 227 * 1024;
/// Those budgets in order (make_geometry's tiers), and the tier a block of `bytes` falls in.
constexpr std::size_t k_smem_budgets[3] = {k_smem_three_per_sm_bytes, k_smem_two_per_sm_bytes, k_smem_max_bytes};
inline int smem_tier(std::size_t bytes) {
  int tier = 0;
  while (tier < 3 && bytes > k_smem_budgets[tier]) ++tier;
  return tier;
}

/// Everything the kernels need about the problem and its tiling (a POD kernel argument).
struct geometry {
  int64_t batch, c_in, c_out;
  phase_dim dim[3];      ///< d, h, w
  phase_order order[3];  ///< per dimension: each phase's first base, count, offset
  int s[3];              ///< strides
  int j0[3];             ///< the most taps of any phase per dimension, ceil(k / s)
  int n_phases;          ///< s^3
  int n_groups;          ///< channel groups of <= k_group
  int warp_cols;         ///< warps along the channels (1 when C_out <= 32, else 2)
  int warp_rows;         ///< warps along the positions: k_warps / warp_cols
  int tile_h;            ///< h bases (rows) per block
  int qw_min;            ///< the smallest w base of any output
  int xd, xh, xw;        ///< staged x box per channel: J0d x (tile_h + J0h - 1) x (w bases + J0w - 1)
  int x_ci_stride;       ///< doubles per staged channel: xd xh xw rounded up to 4 mod 16
  int chunk_ci;          ///< input channels staged at once
  int n_chunks;
  int steps_stride;      ///< k16 steps reserved per (phase, group, chunk) in the arranged weights
  int qd_slots;          ///< the most d bases of any d phase
  int h_tiles;           ///< the most h tiles of any h phase
  int64_t n_blocks;
  int64_t wt_items;      ///< threads of the arrangement: one per (slot, step, n8 tile, lane)
  int64_t wt_floats;     ///< arranged weights
  int64_t koff_ints;     ///< arranged koff tables: one per (phase, chunk), steps_stride x 16 ints
  std::size_t x_bytes;        ///< shared memory of the staged x; the koff table follows it
  std::size_t region_offset;  ///< the policy's region starts here (16-byte aligned)
};

FB_HOST_DEVICE int imin(int a, int b) { return a < b ? a : b; }

/// Where a block works.
struct block_pos {
  int b, group, rd, rh;
  int qd;     ///< its d base (phase rd)
  int qh0;    ///< its first h base (phase rh)
  int rows;   ///< h bases it holds: <= tile_h; 0 for a block with nothing to do
  int first_channel, n_ch;  ///< its output channels [first_channel, first_channel + n_ch)
};

/// Block `block`: the channel group varies fastest, then the (d, h) phase pair, then the h tile,
/// the d base and the sample (consecutive blocks read overlapping x from L2). Slots past a phase's
/// bases are empty blocks (rows 0): the phases of one dimension differ by at most one base.
FB_HOST_DEVICE block_pos block_of(const geometry& g, int64_t block) {
  // n_blocks < 2^31 (make_plan): 32-bit divisions, a fraction of the cost of 64-bit ones.
  int rest = static_cast<int>(block);
  block_pos bp;
  bp.group = rest % g.n_groups;
  rest /= g.n_groups;
  const int pairs = g.s[0] * g.s[1];
  const int pair = rest % pairs;
  rest /= pairs;
  bp.rd = pair / g.s[1];
  bp.rh = pair % g.s[1];
  const int ht = rest % g.h_tiles;
  rest /= g.h_tiles;
  const int qi = rest % g.qd_slots;
  bp.b = rest / g.qd_slots;
  bp.qd = g.order[0].first_base(bp.rd) + qi;
  bp.qh0 = g.order[1].first_base(bp.rh) + ht * g.tile_h;
  const int left_h = g.order[1].count(bp.rh) - ht * g.tile_h;
  bp.rows = qi < g.order[0].count(bp.rd) && left_h > 0 ? imin(g.tile_h, left_h) : 0;
  bp.first_channel = bp.group * k_group;
  bp.n_ch = static_cast<int>(g.c_out - bp.first_channel < k_group ? g.c_out - bp.first_channel : k_group);
  return bp;
}

/// Taps of phase r along dimension d (32-bit: k and s are small).
FB_HOST_DEVICE int taps_of(const geometry& g, int d, int r) {
  const int k = static_cast<int>(g.dim[d].k);
  return r < k ? (k - r + g.s[d] - 1) / g.s[d] : 0;
}

/// Input channels of chunk c.
FB_HOST_DEVICE int chunk_channels(const geometry& g, int c) {
  const int64_t left = g.c_in - static_cast<int64_t>(c) * g.chunk_ci;
  return left < g.chunk_ci ? static_cast<int>(left) : g.chunk_ci;
}

/// k16 steps of phase (rd, rh, rw) in a chunk of cc channels: ceil(cc T / 16).
FB_HOST_DEVICE int steps_of(const geometry& g, int rd, int rh, int rw, int cc) {
  const int t = taps_of(g, 0, rd) * taps_of(g, 1, rh) * taps_of(g, 2, rw);
  return (cc * t + arch::mma::k_k - 1) / arch::mma::k_k;
}

/// The k16 steps [begin, end) of a phase's K that a block runs.
struct step_range {
  int begin, end;
};

/// The steps of phase (bp.rd, bp.rh, rw) in a chunk of cc channels that hold a K row whose d tap
/// lands inside the input for block bp's d base: K runs taps outer with jd outermost, and the d taps
/// that fall outside the input (input line qd - jd < 0 or >= D) at a d border are a leading or
/// trailing block of K whose A rows are the staged box's zero lines. Their products are exact zeros,
/// so leaving out every step that holds only such rows (and padding past K) changes no sum: +0 added
/// to an fp64 accumulator leaves it as it is, but for -0 + +0 (a bias of -0 with every other product
/// zero; the output is then a zero either way). For these d taps it also matches PyTorch where a
/// weight is inf or NaN (its transposed convolution never multiplies a weight by a padding zero);
/// the h and w borders still multiply by the box's zeros. At the default problem 2 of a d phase's
/// 32 bases have one of their 2 d taps outside: 1/32 of the MMAs.
FB_HOST_DEVICE step_range live_steps(const geometry& g, const block_pos& bp, int rw, int cc) {
  const int jd_n = taps_of(g, 0, bp.rd);
  const int d_in = static_cast<int>(g.dim[0].n_in);
  const int lo = bp.qd - d_in + 1 > 0 ? bp.qd - d_in + 1 : 0;  // the first jd with qd - jd < D
  const int hi = imin(jd_n, bp.qd + 1);                          // past the last jd with qd - jd >= 0
  if (lo >= hi) return {0, 0};                                    // no d tap inside: no product at all
  const int per_jd = taps_of(g, 1, bp.rh) * taps_of(g, 2, rw) * cc;  // K rows of one d tap
  const int steps = steps_of(g, bp.rd, bp.rh, rw, cc);
  return {lo * per_jd / arch::mma::k_k, imin(steps, (hi * per_jd + arch::mma::k_k - 1) / arch::mma::k_k)};
}

/// The arranged-weight slot of (phase, group, chunk): k16 steps of k_step_floats each.
FB_HOST_DEVICE int64_t weight_slot(const geometry& g, int rd, int rh, int rw, int group, int chunk) {
  const int phase = (rd * g.s[1] + rh) * g.s[2] + rw;
  return ((static_cast<int64_t>(phase) * g.n_groups + group) * g.n_chunks + chunk) * g.steps_stride;
}

/// Row k of phase (rd, rh, rw)'s K in chunk c: taps outer (jd, jh, jw), channels inner. Returns
/// false for the zero padding past K.
struct k_entry {
  int ci;          ///< channel inside the chunk
  int jd, jh, jw;  ///< the tap of each dimension
};
FB_HOST_DEVICE bool k_entry_of(const geometry& g, int rd, int rh, int rw, int cc, int k, k_entry& e) {
  const int jd_n = taps_of(g, 0, rd), jh_n = taps_of(g, 1, rh), jw_n = taps_of(g, 2, rw);
  if (k >= cc * jd_n * jh_n * jw_n) return false;
  e.ci = k % cc;
  const int t = k / cc;
  e.jw = t % jw_n;
  e.jh = (t / jw_n) % jh_n;
  e.jd = t / (jw_n * jh_n);
  return true;
}

/// The staged-x offset of row k (koff), in doubles: 0 for padding.
FB_HOST_DEVICE int koff_of(const geometry& g, int rd, int rh, int rw, int cc, int k) {
  k_entry e;
  if (!k_entry_of(g, rd, rh, rw, cc, k, e)) return 0;
  return e.ci * g.x_ci_stride + ((g.j0[0] - 1 - e.jd) * g.xh + (g.j0[1] - 1 - e.jh)) * g.xw + (g.j0[2] - 1 - e.jw);
}

/// Entry `index` of the koff table of (phase, chunk), in the A fragment's order: per k16 step, per
/// t = lane % 4, the byte offsets of the 4 k columns t, t + 4, t + 8, t + 12 that lane reads
/// (a_col of values 0, 2, 4, 6), so a lane gets its 4 with one 16-byte shared-memory load.
FB_HOST_DEVICE int koff_table_entry(const geometry& g, int rd, int rh, int rw, int cc, int index) {
  const int step = index / arch::mma::k_k, t = index % arch::mma::k_k / 4, j = index % 4;
  return koff_of(g, rd, rh, rw, cc, step * arch::mma::k_k + t + 4 * j) * static_cast<int>(sizeof(double));
}

/// Where the koff table of (phase, chunk) starts among the arranged tables (16 ints per k16 step,
/// steps_stride steps per table).
FB_HOST_DEVICE int64_t koff_slot(const geometry& g, int rd, int rh, int rw, int chunk) {
  const int phase = (rd * g.s[1] + rh) * g.s[2] + rw;
  return (static_cast<int64_t>(phase) * g.n_chunks + chunk) * g.steps_stride * arch::mma::k_k;
}

/// Work item `item` of the koff tables' arrangement (one entry; items in slot order): the tables
/// depend on the phase and the chunk alone, so they are worked out once per call, not per block.
FB_HOST_DEVICE void arrange_koff_item(const geometry& g, int* tables, int64_t item) {
  const int per_table = g.steps_stride * arch::mma::k_k;
  const int index = static_cast<int>(item % per_table);
  const int64_t table = item / per_table;
  const int chunk = static_cast<int>(table % g.n_chunks);
  const int phase = static_cast<int>(table / g.n_chunks);
  const int rw = phase % g.s[2], rh = (phase / g.s[2]) % g.s[1], rd = phase / (g.s[2] * g.s[1]);
  tables[item] = koff_table_entry(g, rd, rh, rw, chunk_channels(g, chunk), index);
}

/// The 4 ints at p (16-byte aligned): one shared-memory load on the GPU.
FB_HOST_DEVICE void load_i4(const int* p, int (&v)[4]) {
#if defined(__CUDA_ARCH__)
  const int4 q = *reinterpret_cast<const int4*>(p);
  v[0] = q.x;
  v[1] = q.y;
  v[2] = q.z;
  v[3] = q.w;
#else
  for (int i = 0; i < 4; ++i) v[i] = p[i];
#endif
}

/// Work item of the weight arrangement: (slot step, n8 tile, lane) of one (phase, group, chunk);
/// writes the lane's 4 B values of that tile and step (0 past K and past C_out).
FB_HOST_DEVICE void arrange_weights_item(const geometry& g, const float* w, float* wt, int64_t item) {
  const int lane = static_cast<int>(item % 32);
  const int nt = static_cast<int>((item / 32) % k_group_nt);
  int64_t rest = item / (32 * k_group_nt);
  const int step = static_cast<int>(rest % g.steps_stride);
  rest /= g.steps_stride;
  const int chunk = static_cast<int>(rest % g.n_chunks);
  rest /= g.n_chunks;
  const int group = static_cast<int>(rest % g.n_groups);
  const int phase = static_cast<int>(rest / g.n_groups);
  const int rw = phase % g.s[2], rh = (phase / g.s[2]) % g.s[1], rd = phase / (g.s[2] * g.s[1]);
  const int cc = chunk_channels(g, chunk);
  const int64_t co = static_cast<int64_t>(group) * k_group + nt * arch::mma::k_n + arch::mma::b_col(lane, 0);
  const int64_t k = g.dim[0].k;
  float* dst = wt + ((weight_slot(g, rd, rh, rw, group, chunk) + step) * k_group_nt + nt) * 32 * arch::mma::k_b_regs +
               lane * arch::mma::k_b_regs;
  for (int v = 0; v < arch::mma::k_b_regs; ++v) {
    k_entry e;
    float value = 0.0f;
    // Steps past the phase's own (steps_stride is for the most taps) hold only k past K: zeros.
    if (co < g.c_out && k_entry_of(g, rd, rh, rw, cc, step * arch::mma::k_k + arch::mma::b_row(lane, v), e)) {
      const int64_t ci = static_cast<int64_t>(chunk) * g.chunk_ci + e.ci;
      const int64_t kd = rd + g.s[0] * e.jd, kh = rh + g.s[1] * e.jh, kw = rw + g.s[2] * e.jw;
      value = w[(((ci * g.c_out + co) * k + kd) * k + kh) * k + kw];
    }
    dst[v] = value;
  }
}

}  // namespace fb::fused::conv3d::mma_fp64
