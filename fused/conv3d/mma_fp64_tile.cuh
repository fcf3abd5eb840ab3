#pragma once
/// The 3-D transposed convolution on the fp64 tensor cores (fused/arch/mma_f64.cuh): one implicit
/// GEMM per phase, written once for the CUDA kernels and the host executors (#34 now).
///
/// Decomposition (fused/math/convt_phase.cuh): output o = q s + r - p per dimension; phase
/// (rd, rh, rw) has J(rd) J(rh) J(rw) taps, and its output at bases (qd, qh, qw) sums
///   x[b, ci, qd - jd, qh - jh, qw - jw] * w[ci, co, rd + s jd, rh + s jh, rw + s jw]
/// over ci and the taps (an input index outside [0, n) reads 0). Per phase that is a GEMM with
/// M = positions (bases), N = output channels and K = taps x input channels; the products of fp32
/// values are exact in fp64, so with fp64 accumulation the order of K does not matter to ~2^-45:
/// no centring of x, no compensated sums, no per-output correction terms.
///
/// Block: one sample, one group of <= 64 output channels, one d base of phase rd and tile_h
/// consecutive h bases of phase rh, and every w base of every w phase: whole W' rows, as #34's
/// LayerNorm over W' needs. The block stages its x box once (all input channels that fit; else in
/// chunks of input channels) as fp64 in shared memory, zeros outside the input, and runs the
/// w phases one after the other on it. Its 4 warps split each w phase's positions (h row, w base) x
/// channels into 32 x 32 warp tiles, 2 m16 x 4 n8 accumulator tiles of fp64 per warp; when a
/// phase has more positions than the warps hold, it runs in several position passes.
///
/// Operands. A (positions x K) is read from the staged x through two offsets whose sum is the
/// element's place: the row offset of position m (row XW + w base), one per fragment row and lane,
/// fixed for the whole K loop; koff(k) = ci XS + (J0d-1-jd) XH XW + (J0h-1-jh) XW + (J0w-1-jw).
/// The koff tables (one per phase and chunk, in bytes, in fragment order: a lane's 4 k columns
/// t, t + 4, t + 8, t + 12 side by side) are arranged once per call in the workspace, beside the
/// weights, and copied into shared memory per (w phase, chunk). K runs taps outer, input channels
/// inner, so the 4 k of one fragment column group are 4 consecutive channels, XS doubles apart, with
/// XS = 4 mod 16: a half-warp's 16 A loads hit 16 different bank pairs. B (K x channels) comes from
/// the workspace, where the prep launch arranged the weights in fragment order
/// (arrange_weights_item): per (phase, channel group, chunk, k16 step) 8 n8 tiles x 32 lanes x 4
/// fp32 values, one 16-byte load per lane and tile, converted to fp64 in registers. Each k16 step
/// loads its own operands (warp_chunk: three blocks per SM hide the latency). K is zero-padded to
/// a multiple of 16 per (phase, chunk): padded k read koff 0 and weight 0.
///
/// The model's policy decides what happens to the accumulators (`store`, per warp after the
/// last chunk of a position pass) and after the last w phase (`finish`, block-wide). A policy with
/// `last_pass_into_x` set gets the staged x's shared memory for the block's last pass (after a
/// barrier: no warp reads x any more), so its own region need not hold that pass's accumulators.
///
/// Executors (mma_host_exec here, mma_device_exec for nvcc): `threads(f)` runs f(tid) for the
/// block's threads, `warps(f)` runs f(warp, W, warp_state) for its warps with W the warp context of
/// mma_f64.cuh (this lane on the GPU, all 32 on the host), `sync()` is the barrier. The same tiles
/// also run in resident blocks, tile after tile (conv_persistent, below: mma_host_tiles_exec and
/// mma_persistent_exec add the tile claims and the inputs' prefetch).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fused/arch/host_device.cuh"
#include "fused/arch/mma_f64.cuh"
#include "fused/arch/read_only.cuh"
#include "fused/math/convt_index.cuh"
#include "fused/math/convt_phase.cuh"

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include "fused/arch/bulk_copy.cuh"
#endif

namespace fb::fused::convt3d_mma {

constexpr int k_warps = 4;
constexpr int k_threads = 32 * k_warps;
constexpr int k_mt = 2;                     ///< m16 tiles per warp: 32 positions
constexpr int k_nt = 4;                     ///< n8 tiles per warp: 32 channels
constexpr int k_warp_m = k_mt * mma::k_m;   ///< positions per warp tile
constexpr int k_warp_n = k_nt * mma::k_n;   ///< channels per warp tile
constexpr int k_group = 64;                 ///< output channels per block (at most)
constexpr int k_group_nt = k_group / mma::k_n;  ///< n8 tiles of a group's arranged weights
/// Floats of one k16 step of a group's arranged weights: k_group_nt tiles x 32 lanes x 4 values.
constexpr int k_step_floats = k_group_nt * 32 * mma::k_b_regs;

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
  int ch0, n_ch;  ///< its output channels [ch0, ch0 + n_ch)
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
  bp.ch0 = bp.group * k_group;
  bp.n_ch = static_cast<int>(g.c_out - bp.ch0 < k_group ? g.c_out - bp.ch0 : k_group);
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
  return (cc * t + mma::k_k - 1) / mma::k_k;
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
  const int step = index / mma::k_k, t = index % mma::k_k / 4, j = index % 4;
  return koff_of(g, rd, rh, rw, cc, step * mma::k_k + t + 4 * j) * static_cast<int>(sizeof(double));
}

/// Where the koff table of (phase, chunk) starts among the arranged tables (16 ints per k16 step,
/// steps_stride steps per table).
FB_HOST_DEVICE int64_t koff_slot(const geometry& g, int rd, int rh, int rw, int chunk) {
  const int phase = (rd * g.s[1] + rh) * g.s[2] + rw;
  return (static_cast<int64_t>(phase) * g.n_chunks + chunk) * g.steps_stride * mma::k_k;
}

/// Work item `item` of the koff tables' arrangement (one entry; items in slot order): the tables
/// depend on the phase and the chunk alone, so they are worked out once per call, not per block.
FB_HOST_DEVICE void arrange_koff_item(const geometry& g, int* tables, int64_t item) {
  const int per_table = g.steps_stride * mma::k_k;
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
  const int64_t co = static_cast<int64_t>(group) * k_group + nt * mma::k_n + mma::b_col(lane, 0);
  const int64_t k = g.dim[0].k;
  float* dst = wt + ((weight_slot(g, rd, rh, rw, group, chunk) + step) * k_group_nt + nt) * 32 * mma::k_b_regs +
               lane * mma::k_b_regs;
  for (int v = 0; v < mma::k_b_regs; ++v) {
    k_entry e;
    float value = 0.0f;
    // Steps past the phase's own (steps_stride is for the most taps) hold only k past K: zeros.
    if (co < g.c_out && k_entry_of(g, rd, rh, rw, cc, step * mma::k_k + mma::b_row(lane, v), e)) {
      const int64_t ci = static_cast<int64_t>(chunk) * g.chunk_ci + e.ci;
      const int64_t kd = rd + g.s[0] * e.jd, kh = rh + g.s[1] * e.jh, kw = rw + g.s[2] * e.jw;
      value = w[(((ci * g.c_out + co) * k + kd) * k + kh) * k + kw];
    }
    dst[v] = value;
  }
}

/// Staging of the x box, per warp and round: k_stage_planes planes (a channel's d line: xh h lines
/// x xw columns, contiguous in shared memory) at once, k_stage_elems of each plane per lane; all
/// their loads are in flight before the first store.
constexpr int k_stage_planes = 4;
constexpr int k_stage_elems = 4;

/// Thread tid's share of staging chunk c of block bp's x box into xs (fp64, zeros outside the
/// input). Warps take the box's planes (channel ci, d line ud) in turn; lanes take the elements of a
/// plane in order (e = lane + 32 k: h line e / xw, column e % xw). An element's offsets, in its
/// input plane and in the box plane, are the same for every plane of the block: worked out once
/// per 128 elements, so a plane costs one address and its loads and stores. Offsets inside a chunk
/// are 32-bit (the plans require a sample's input to have < 2^31 elements); validity is kept as
/// flags, not as null pointers, so the loads and stores are predicated without 64-bit compares.
FB_HOST_DEVICE void stage_x_planes(const geometry& g, const float* x, const block_pos& bp, int c, int tid, double* xs) {
  const int lane = tid % 32, warp = tid / 32;
  const int cc = chunk_channels(g, c);
  const int d_in = static_cast<int>(g.dim[0].n_in), h_in = static_cast<int>(g.dim[1].n_in);
  const int w_in = static_cast<int>(g.dim[2].n_in);
  const int64_t plane_in = static_cast<int64_t>(h_in) * w_in;
  const int id0 = bp.qd - (g.j0[0] - 1), ih0 = bp.qh0 - (g.j0[1] - 1), iw0 = g.qw_min - (g.j0[2] - 1);
  const float* x_chunk = opaque(x + (bp.b * g.c_in + static_cast<int64_t>(c) * g.chunk_ci) * d_in * plane_in);
  const int plane_elems = g.xh * g.xw, planes = cc * g.xd;
  for (int e0 = 0; e0 < plane_elems; e0 += 32 * k_stage_elems) {
    uint32_t src_off[k_stage_elems];  // in the input plane (unsigned: one wide multiply-add per address)
    bool in_input[k_stage_elems];     // inside the input's h and w range (else a zero)
    bool in_plane[k_stage_elems];     // inside the box plane
    FB_UNROLL
    for (int k = 0; k < k_stage_elems; ++k) {
      const int e = e0 + lane + 32 * k;
      const int uh = e / g.xw, uw = e - uh * g.xw;
      const int ih = ih0 + uh, iw = iw0 + uw;
      in_plane[k] = e < plane_elems;
      in_input[k] = in_plane[k] && ih >= 0 && ih < h_in && iw >= 0 && iw < w_in;
      src_off[k] = in_input[k] ? static_cast<uint32_t>(ih * w_in + iw) : 0u;
    }
    // This warp's planes warp, warp + k_warps, ...: (ci, ud) stepped on with carries.
    int ci = 0, ud = warp;
    auto carry = [&] {
      while (ud >= g.xd) {
        ud -= g.xd;
        ++ci;
      }
    };
    carry();
    for (int first = warp; first < planes; first += k_stage_planes * k_warps) {
      uint32_t src[k_stage_planes];  // the plane's first float in x_chunk
      int dst[k_stage_planes];       // this lane's first double of the plane in xs
      bool live[k_stage_planes];     // a plane of the chunk
      bool in_d[k_stage_planes];     // its d line inside the input (else zeros)
      FB_UNROLL
      for (int q = 0; q < k_stage_planes; ++q) {
        if (q > 0) {
          ud += k_warps;
          carry();
        }
        const int id = id0 + ud;
        live[q] = ci < cc;
        in_d[q] = live[q] && id >= 0 && id < d_in;
        src[q] = in_d[q] ? static_cast<uint32_t>((ci * d_in + id) * plane_in) : 0u;
        dst[q] = ci * g.x_ci_stride + ud * plane_elems + e0 + lane;
      }
      ud += k_warps;
      carry();
      float v[k_stage_planes][k_stage_elems];
      FB_UNROLL
      for (int q = 0; q < k_stage_planes; ++q)
        FB_UNROLL
        for (int k = 0; k < k_stage_elems; ++k)
          v[q][k] = in_d[q] && in_input[k] ? load_ro(x_chunk + (src[q] + src_off[k])) : 0.0f;
      FB_UNROLL
      for (int q = 0; q < k_stage_planes; ++q)
        FB_UNROLL
        for (int k = 0; k < k_stage_elems; ++k)
          if (live[q] && in_plane[k]) xs[dst[q] + 32 * k] = static_cast<double>(v[q][k]);
    }
  }
}

/// A w phase's position pass: positions [m0, m0 + n) of the block's (row, w base) pairs of phase rw,
/// position m = row n_qw + (qw - first base).
struct pass_pos {
  int rw;
  int n_qw;     ///< w bases of phase rw
  int qw0;      ///< its first w base
  int m0, n;    ///< the pass's positions
};

/// Where a warp tile's C values go: value v of `lane` in tiles (mt, nt) is the pass's position
/// tile_position and the block's channel tile_channel (outputs only where position < n and channel
/// < n_ch).
FB_HOST_DEVICE int tile_position(int warp_row, int mt, int lane, int v) {
  return warp_row * k_warp_m + mt * mma::k_m + mma::c_row(lane, v);
}
FB_HOST_DEVICE int tile_channel(int warp_col, int nt, int lane, int v) {
  return warp_col * k_warp_n + nt * mma::k_n + mma::c_col(lane, v);
}

/// A warp's accumulators, kept across the chunks of a position pass: [mt][nt][lane slot][value].
template <class W>
struct warp_state {
  double acc[k_mt][k_nt][W::k_lanes][mma::k_c_regs];
};

/// Four fp32 values, the unit of the arranged weights (one 16-byte load on the GPU).
struct f4 {
  float v[4];
};
FB_HOST_DEVICE f4 load_f4(const float* p) {
  f4 r;
  load_ro4(p, r.v);
  return r;
}

/// Byte offsets in the staged x of the A rows a lane holds (fragment rows g and g + 8 of each m
/// tile: values 0 and 1 of a_row), for the positions of pass pp; positions past the pass read
/// position 0's column (their results are never stored).
template <class W>
FB_HOST_DEVICE void a_row_offsets(const W& w, const geometry& g, const pass_pos& pp, int first,
                                  int (&off)[k_mt][W::k_lanes][2]) {
  FB_UNROLL
  for (int mt = 0; mt < k_mt; ++mt)
    for (int l = 0; l < W::k_lanes; ++l)
      FB_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int m = first + mt * mma::k_m + mma::a_row(w.lane(l), h);
        const int pos = pp.m0 + m;
        const int row = m < pp.n ? pos / pp.n_qw : 0, col = m < pp.n ? pos % pp.n_qw : 0;
        off[mt][l][h] = (row * g.xw + (pp.qw0 - g.qw_min) + col) * static_cast<int>(sizeof(double));
      }
}

/// The fp64 at byte `offset` of shared memory block `base` (the staged x). On the GPU one shared
/// load from a 32-bit address, base's shared address + offset: one add per load (the compiler
/// otherwise rebuilds the address from an element index, a multiply-add and an add per load).
FB_HOST_DEVICE double load_staged(const unsigned char* base, int offset) {
#if defined(__CUDA_ARCH__)
  double v;
  const auto addr = static_cast<uint32_t>(__cvta_generic_to_shared(base)) + static_cast<uint32_t>(offset);
  asm volatile("ld.shared.f64 %0, [%1];" : "=d"(v) : "r"(addr));
  return v;
#else
  return *reinterpret_cast<const double*>(base + offset);
#endif
}

/// A lane's operands of one k16 step before the MMAs: A from the staged x (fp64), B as loaded
/// (fp32, converted when used).
template <class W>
struct a_operands {
  double a[k_mt][W::k_lanes][mma::k_a_regs];
};
template <class W>
struct b_operands {
  f4 b[k_nt][W::k_lanes];
};

/// Loads step `step`'s A: per lane one 16-byte load of its 4 koffs (k columns t, t + 4, t + 8,
/// t + 12), then 16 fp64 loads at row offset + koff.
template <class W>
FB_HOST_DEVICE void load_a(const W& w, a_operands<W>& o, const unsigned char* xs, const int* koff, int step,
                           const int (&a_off)[k_mt][W::k_lanes][2]) {
  for (int l = 0; l < W::k_lanes; ++l) {
    int ko[4];
    load_i4(koff + step * mma::k_k + (w.lane(l) % 4) * 4, ko);
    FB_UNROLL
    for (int j = 0; j < 4; ++j)
      FB_UNROLL
      for (int mt = 0; mt < k_mt; ++mt)
        FB_UNROLL
        for (int h = 0; h < 2; ++h)
          o.a[mt][l][2 * j + h] = load_staged(xs, a_off[mt][l][h] + ko[j]);
  }
}

/// Loads a step's B: 4 16-byte loads from `b_step` (the step's arranged weights of the warp's
/// channels).
template <class W>
FB_HOST_DEVICE void load_b(const W& w, b_operands<W>& o, const float* b_step) {
  for (int l = 0; l < W::k_lanes; ++l)
    FB_UNROLL
    for (int nt = 0; nt < k_nt; ++nt) o.b[nt][l] = load_f4(b_step + (nt * 32 + w.lane(l)) * mma::k_b_regs);
}

/// The step's 8 MMAs (B converted to fp64 here: exact).
template <class W>
FB_HOST_DEVICE void mma_step(const W& w, warp_state<W>& st, const a_operands<W>& oa, const b_operands<W>& ob) {
  double b[k_nt][W::k_lanes][mma::k_b_regs];
  FB_UNROLL
  for (int nt = 0; nt < k_nt; ++nt)
    for (int l = 0; l < W::k_lanes; ++l)
      FB_UNROLL
      for (int v = 0; v < mma::k_b_regs; ++v) b[nt][l][v] = static_cast<double>(ob.b[nt][l].v[v]);
  FB_UNROLL
  for (int mt = 0; mt < k_mt; ++mt)
    FB_UNROLL
    for (int nt = 0; nt < k_nt; ++nt) w.mma(st.acc[mt][nt], oa.a[mt], b[nt]);
}

/// One warp's share of one chunk: its 32 x 32 tile of the pass's positions x the block's channels,
/// K of the chunk in steps of 16, each step loading its own operands. Every n8 tile of the warp
/// runs: the arranged weights are zero past C_out, so no MMA is predicated. Warps whose tile holds
/// no position or channel do nothing.
///
/// Not pipelined in the warp: with three blocks per SM (168 registers) the other warps of the
/// scheduler hide the loads' latency. Measured on an H100 at the default: B loaded one step ahead
/// 3.487 ms, this loop 3.485 ms; A and B one step ahead (two operand sets) spill in the loop at
/// 168 registers (not timed there).
template <class W>
FB_HOST_DEVICE void warp_chunk(const W& w, warp_state<W>& st, const geometry& g, const block_pos& bp, const pass_pos& pp,
                               int warp, const unsigned char* xs, const int* koff, const float* wt_slot, int steps) {
  const int warp_row = warp / g.warp_cols, warp_col = warp % g.warp_cols;
  const int first = warp_row * k_warp_m;
  if (first >= pp.n || warp_col * k_warp_n >= bp.n_ch || steps <= 0) return;
  int a_off[k_mt][W::k_lanes][2];
  a_row_offsets(w, g, pp, first, a_off);
  const float* b_step = wt_slot + warp_col * k_nt * 32 * mma::k_b_regs;
  a_operands<W> oa;
  b_operands<W> ob;
  for (int step = 0; step < steps; ++step, b_step += k_step_floats) {
    load_b(w, ob, b_step);
    load_a(w, oa, xs, koff, step, a_off);
    mma_step(w, st, oa, ob);
  }
}

/// Every warp's accumulators to zero (a position pass's start).
template <class Exec>
FB_HOST_DEVICE void zero_accumulators(Exec& ex) {
  ex.warps([&](int, const auto&, auto& st) {
    for (auto& per_mt : st.acc)
      for (auto& per_nt : per_mt)
        for (auto& per_lane : per_nt)
          for (double& v : per_lane) v = 0.0;
  });
}

/// One block of the convolution with policy `pol` (see the file's header). Shared memory `smem`:
/// staged x (fp64), the koff table (int), then the policy's region at g.region_offset.
template <class Exec, class Policy>
FB_HOST_DEVICE void conv_block(Exec& ex, const geometry& g, const float* x, const float* wt, const int* koff_tables,
                               int64_t block, unsigned char* smem, const Policy& pol) {
  const block_pos bp = block_of(g, block);
  if (bp.rows == 0) return;
  double* xs = reinterpret_cast<double*>(smem);
  int* koff = reinterpret_cast<int*>(smem + g.x_bytes);
  unsigned char* region = smem + g.region_offset;
  const int cap = g.warp_rows * k_warp_m;  // positions of one pass
  bool first_use = true;
  bool staged_all = false;  // every channel staged (one chunk): staged once for the block
  for (int rw = 0; rw < g.s[2]; ++rw) {
    pass_pos pp;
    pp.rw = rw;
    pp.n_qw = g.order[2].count(rw);
    pp.qw0 = g.order[2].first_base(rw);
    const int positions = bp.rows * pp.n_qw;
    for (pp.m0 = 0; pp.m0 < positions; pp.m0 += cap) {
      pp.n = imin(cap, positions - pp.m0);
      zero_accumulators(ex);
      for (int c = 0; c < g.n_chunks; ++c) {
        if (!first_use) ex.sync();  // the previous chunk's x and koff are no longer read
        first_use = false;
        if (!staged_all) {
          ex.threads([&](int tid) { stage_x_planes(g, x, bp, c, tid, xs); });
          staged_all = g.n_chunks == 1;
        }
        const int cc = chunk_channels(g, c);
        const int steps = steps_of(g, bp.rd, bp.rh, rw, cc);
        // The table depends on (rw, chunk) only: a later pass of the same w phase and one chunk
        // reuses it.
        if (g.n_chunks > 1 || pp.m0 == 0)
          ex.threads([&](int tid) {
            const int* table = koff_tables + koff_slot(g, bp.rd, bp.rh, rw, c);
            for (int k = tid; k < steps * mma::k_k; k += k_threads) koff[k] = load_ro(table + k);
          });
        ex.sync();
        const float* slot = wt + weight_slot(g, bp.rd, bp.rh, rw, bp.group, c) * k_step_floats;
        ex.warps([&](int warp, const auto& w, auto& st) { warp_chunk(w, st, g, bp, pp, warp, smem, koff, slot, steps); });
      }
      unsigned char* x_area = nullptr;  // the staged x's memory, free in the block's last pass
      if (pol.last_pass_into_x && rw == g.s[2] - 1 && pp.m0 + cap >= positions) {
        ex.sync();  // every warp's k16 loop is done with x
        x_area = smem;
      }
      ex.warps([&](int warp, const auto& w, auto& st) { pol.store(w, st, bp, pp, warp, region, x_area); });
    }
  }
  ex.sync();
  pol.finish(ex, bp, region, smem);
}

// ---------------------------------------------------------------------------------------------
// The persistent program: the same tiles, one after another in a block that stays resident.
// ---------------------------------------------------------------------------------------------

/// Where the persistent program serves a plan (persistent_fits), each block runs tile after tile:
/// on the GPU one block per resident slot (three per SM at the default), the first tile its
/// blockIdx.x and each next one from an atomic counter (tiles take different times; a static share
/// ended 0.77 ms apart on an H100), on the host a contiguous range of tiles per program. A tile is
/// conv_block's block, computed by the same code in the same order (the same bits): the w phases'
/// k16 loops (one chunk, one position pass each), the stores, the policy's rows. What changes is
/// what a block does between tiles: the policy's per-column work (pol.setup_columns) is done once,
/// and on the GPU the next tile's inputs in shared memory, its x box (fp32, zeros outside the
/// input: one TMA tensor copy into the part of x's memory the policy's rows leave free) and the
/// koff tables of its phase pair (one bulk copy), are fetched while this tile's rows are finished
/// and the box converted to fp64 after them (mma_persistent_exec); the next tile's number is asked
/// for at the start of this one's k16 loops. A tile's barriers: after its inputs, before the last w
/// phase's stores into x's memory, after the rows are whole, and one in the box's conversion.
/// Measured on an H100 at the default: 3.320 -> 3.189 ms (-3.9%) against the block kernel.
///
/// Executor hooks beyond conv_block's: first_tile(); claim_next_tile(tile), publish_claim() before
/// a barrier and claimed_tile() after it (the block's next tile; >= n_blocks when none);
/// stage_tile (fetch a tile's inputs and convert its box now), prefetch_tile (start fetching them,
/// once nothing reads x's memory or the koff tables), commit_tile (finish, and convert the box once
/// the rows are read).
template <class Exec, class Policy>
FB_HOST_DEVICE void conv_persistent(Exec& ex, const geometry& g, const float* x, const float* wt, const int* koff_tables,
                                    unsigned char* smem, const Policy& pol) {
  int64_t tile = ex.first_tile();
  if (tile >= g.n_blocks) return;
  int* koff = reinterpret_cast<int*>(smem + g.x_bytes);  // every w phase's table, one after another
  unsigned char* region = smem + g.region_offset;
  const int per_table = g.steps_stride * mma::k_k;
  pol.setup_columns(ex, region, smem);
  block_pos bp = block_of(g, tile);
  ex.stage_tile(g, x, koff_tables, bp, smem);
  for (;;) {
    ex.sync();  // x, the koff tables and the columns in place
    ex.claim_next_tile(tile);  // the GPU's atomic is answered while the k16 loops run
    // Where every warp finishes the rows it stored itself (pol.rows_own_warp), the rows-whole
    // point is no barrier for the warps that do not issue the next tile's copies: they go on to
    // their rows; the claim is published at the barrier before the last w phase's stores.
    const bool own_rows = pol.rows_own_warp && bp.rows > 0;
    if (bp.rows > 0) {
      for (int rw = 0; rw < g.s[2]; ++rw) {
        pass_pos pp;
        pp.rw = rw;
        pp.n_qw = g.order[2].count(rw);
        pp.qw0 = g.order[2].first_base(rw);
        pp.m0 = 0;
        pp.n = bp.rows * pp.n_qw;  // one position pass (persistent_fits)
        zero_accumulators(ex);
        const int steps = steps_of(g, bp.rd, bp.rh, rw, static_cast<int>(g.c_in));
        const float* slot = wt + weight_slot(g, bp.rd, bp.rh, rw, bp.group, 0) * k_step_floats;
        ex.warps([&](int warp, const auto& w, auto& st) {
          warp_chunk(w, st, g, bp, pp, warp, smem, koff + rw * per_table, slot, steps);
        });
        unsigned char* x_area = nullptr;
        if (pol.last_pass_into_x && rw == g.s[2] - 1) {
          if (own_rows) ex.publish_claim();
          ex.sync();  // every warp's k16 loop is done with x
          x_area = smem;
        }
        ex.warps([&](int warp, const auto& w, auto& st) { pol.store(w, st, bp, pp, warp, region, x_area); });
      }
    }
    if (own_rows) {
      ex.rows_arrive();  // the issuing warp waits for every warp's stores; the others go on
    } else {
      ex.publish_claim();
      ex.sync();  // the rows whole; nobody reads the staged x or the koff tables; the next tile known
    }
    const int64_t next = ex.claimed_tile();
    const bool more = next < g.n_blocks;
    block_pos next_bp{};
    if (more) {
      next_bp = block_of(g, next);
      ex.prefetch_tile(g, x, koff_tables, next_bp, smem);
    }
    if (bp.rows > 0) pol.finish_rows(ex, bp, region, smem);
    if (!more) return;
    ex.commit_tile(g, x, koff_tables, next_bp, smem);
    bp = next_bp;
    tile = next;
  }
}

/// The koff tables of tile bp's (d, h) phase pair, every w phase's one after another (one chunk:
/// consecutive in the arranged tables), persistent_koff_bytes of them.
FB_HOST_DEVICE const int* pair_koff_tables(const geometry& g, const int* koff_tables, const block_pos& bp) {
  return koff_tables + koff_slot(g, bp.rd, bp.rh, 0, 0);
}

/// The fp32 box of a tile as the GPU's tensor copy lands it: per (channel, d line, h line) a line
/// of box_width floats starting at w = box_w_start (rounded down to a multiple of 4 floats: a
/// tensor copy's innermost start must be 16-byte aligned, else the copy faults), the box's first
/// column box_w_skip floats in. Lines follow each other; d lines, then channels.
FB_HOST_DEVICE int box_w_start(const geometry& g) {
  const int iw0 = g.qw_min - (g.j0[2] - 1);
  return iw0 >= 0 ? iw0 / 4 * 4 : -((-iw0 + 3) / 4 * 4);
}
FB_HOST_DEVICE int box_w_skip(const geometry& g) { return g.qw_min - (g.j0[2] - 1) - box_w_start(g); }
FB_HOST_DEVICE int box_width(const geometry& g) { return (g.xw + box_w_skip(g) + 3) / 4 * 4; }
FB_HOST_DEVICE std::size_t box_bytes(const geometry& g) {
  return static_cast<std::size_t>(g.c_in) * g.xd * g.xh * box_width(g) * sizeof(float);
}

/// The fp32 box is converted into the fp64 staged x in rounds: per round each warp k_commit_planes
/// planes (channel, d line) and each lane k_commit_elems of a plane's elements, all read before
/// any is written (a barrier between). Rounds go plane groups outer, element groups inner. 16 planes
/// per warp: the default's box (64 planes of 99 values) in one round, 64 floats per thread (the
/// finish's registers are free by then): a tile's barriers 7 -> 5, measured on an H100 against 8
/// planes (two rounds): 3.178 -> 3.158 ms.
constexpr int k_commit_planes = 16;
constexpr int k_commit_elems = 4;

/// Where the fp32 box lies in shared memory: the top of x's memory, 128-byte aligned (the tensor
/// copy's destination), so that it stays clear of the policy's rows at the bottom.
FB_HOST_DEVICE std::size_t box_offset(const geometry& g) {
  const std::size_t b = box_bytes(g);
  return b <= g.x_bytes ? (g.x_bytes - b) / 128 * 128 : 0;
}

/// True where converting the box in place is safe: no round writes an fp64 value over fp32 values
/// a later round still reads (x's fp64 planes grow faster than the box's fp32 lines, both from
/// their starts: checked round by round, the writes so far against the earliest read to come).
inline bool box_converts_in_place(const geometry& g) {
  const int planes = static_cast<int>(g.c_in) * g.xd, plane_elems = g.xh * g.xw;
  const int round_planes = k_warps * k_commit_planes, round_elems = 32 * k_commit_elems;
  const int bw = box_width(g), skip = box_w_skip(g);
  const std::size_t base = box_offset(g);
  auto written_end = [&](int p, int e) {  // one past the last byte of fp64 element e of plane p
    const int ci = p / g.xd, ud = p % g.xd;
    return (static_cast<std::size_t>(ci) * g.x_ci_stride + static_cast<std::size_t>(ud) * plane_elems + e + 1) *
           sizeof(double);
  };
  auto read_start = [&](int p, int e) {  // the first byte of fp32 element e of plane p
    const int uh = e / g.xw, uw = e % g.xw;
    return base + (static_cast<std::size_t>(p) * g.xh * bw + static_cast<std::size_t>(uh) * bw + skip + uw) *
                      sizeof(float);
  };
  std::vector<std::size_t> wrote, reads;  // per round in order: its last write's end, its first read
  for (int p0 = 0; p0 < planes; p0 += round_planes)
    for (int e0 = 0; e0 < plane_elems; e0 += round_elems) {
      wrote.push_back(written_end(imin(p0 + round_planes, planes) - 1, imin(e0 + round_elems, plane_elems) - 1));
      reads.push_back(read_start(p0, e0));
    }
  std::size_t wrote_max = 0, reads_min = static_cast<std::size_t>(-1);
  std::vector<std::size_t> later_min(reads.size() + 1, reads_min);
  for (std::size_t r = reads.size(); r-- > 0;) later_min[r] = reads[r] < later_min[r + 1] ? reads[r] : later_min[r + 1];
  for (std::size_t r = 0; r < wrote.size(); ++r) {
    wrote_max = wrote[r] > wrote_max ? wrote[r] : wrote_max;
    if (wrote_max > later_min[r + 1]) return false;
  }
  return true;
}

/// Whether the persistent program serves a geometry whose policy keeps `rows_bytes` at the start of
/// x's memory during the finish: one chunk of input channels (x staged once per tile), one
/// position pass per w phase, W a multiple of 4 floats (the tensor map's row pitch is a multiple of
/// 16 bytes), box dimensions of at most 256 (the tensor copy's limit), the box clear of the rows and
/// convertible in place. The caller also needs x 16-byte aligned (run time) and the koff tables of
/// every w phase beside x (persistent_koff_bytes).
inline bool persistent_fits(const geometry& g, std::size_t rows_bytes) {
  if (g.n_chunks != 1 || g.dim[2].n_in % 4 != 0) return false;
  const int cap = g.warp_rows * k_warp_m;
  for (int rw = 0; rw < g.s[2]; ++rw)
    if (g.tile_h * g.order[2].count(rw) > cap) return false;
  if (box_width(g) > 256 || g.xh > 256 || g.xd > 256 || g.c_in > 256) return false;
  if (box_bytes(g) > g.x_bytes || box_offset(g) < rows_bytes) return false;
  return box_converts_in_place(g);
}

/// Shared memory of the koff tables of every w phase (the persistent program keeps them all).
FB_HOST_DEVICE std::size_t persistent_koff_bytes(const geometry& g) {
  return static_cast<std::size_t>(g.s[2]) * g.steps_stride * mma::k_k * sizeof(int);
}
/// What the persistent kernel adds to its dynamic shared memory: its static variables (the
/// stager's mbarrier, the claimed tile) and the dynamic area's 128-byte alignment.
constexpr std::size_t k_persistent_static_bytes = 256;

/// Warps along the channels for C_out output channels: 1 when C_out <= 32, else 2 (the rest of a
/// block's k_warps go along the positions).
FB_HOST_DEVICE int warp_cols_for(int64_t c_out) { return c_out > k_warp_n ? 2 : 1; }
/// Positions one pass of a block holds: its warps along the positions x 32.
FB_HOST_DEVICE int pass_positions(int64_t c_out) { return k_warps / warp_cols_for(c_out) * k_warp_m; }

/// Sizes the tile for a problem. `region_bytes_per_row(rows)` is the policy's shared memory for a
/// block of `rows` h bases; max_chunk_ci (tests) caps the channels staged at once. Returns false
/// (and leaves g partly set) when not even one channel of one h row fits: the kernel is too large
/// for the tile (the caller rejects the problem).
template <class RegionBytes>
bool make_geometry(geometry& g, int64_t batch, int64_t c_in, int64_t c_out, int64_t depth, int64_t height,
                   int64_t width, int64_t k, int64_t s, int64_t p, RegionBytes region_bytes_per_rows,
                   int64_t max_chunk_ci = 0) {
  g = geometry{};
  g.batch = batch;
  g.c_in = c_in;
  g.c_out = c_out;
  const int64_t n_in[3] = {depth, height, width};
  int64_t t_max = 1;
  for (int d = 0; d < 3; ++d) {
    g.dim[d] = phase_dim{n_in[d], convt_output_size(n_in[d], k, s, p, 0), k, s, p};
    g.order[d] = phase_order_of(g.dim[d]);
    g.s[d] = static_cast<int>(s);
    g.j0[d] = static_cast<int>(g.dim[d].max_taps());
    t_max *= g.j0[d];
  }
  g.n_phases = static_cast<int>(s * s * s);
  g.n_groups = static_cast<int>((c_out + k_group - 1) / k_group);
  g.warp_cols = warp_cols_for(c_out);
  g.warp_rows = k_warps / g.warp_cols;
  g.qw_min = static_cast<int>(g.dim[2].q_min());
  int n_qw_max = 1, n_qh_max = 1, n_qd_max = 1;
  for (int r = 0; r < s; ++r) {
    n_qw_max = g.order[2].count(r) > n_qw_max ? g.order[2].count(r) : n_qw_max;
    n_qh_max = g.order[1].count(r) > n_qh_max ? g.order[1].count(r) : n_qh_max;
    n_qd_max = g.order[0].count(r) > n_qd_max ? g.order[0].count(r) : n_qd_max;
  }
  const int cap = g.warp_rows * k_warp_m;
  int tile_h = cap / n_qw_max < 1 ? 1 : cap / n_qw_max;
  tile_h = tile_h < n_qh_max ? tile_h : n_qh_max;
  g.xw = static_cast<int>(g.dim[2].q_count()) + g.j0[2] - 1;
  g.xd = g.j0[0];
  for (;;) {
    g.tile_h = tile_h;
    g.xh = tile_h + g.j0[1] - 1;
    const int64_t box = static_cast<int64_t>(g.xd) * g.xh * g.xw;
    g.x_ci_stride = static_cast<int>(box + ((4 - box % 16) + 16) % 16);
    const std::size_t region = region_bytes_per_rows(tile_h);
    for (const std::size_t budget : k_smem_budgets) {
      // Channels that fit beside the region and their koff table (16 * steps ints, steps for t_max
      // taps). Three blocks per SM only with every channel at once: chunks restage x per w phase.
      int64_t cc = max_chunk_ci > 0 && max_chunk_ci < c_in ? max_chunk_ci : c_in;
      const int64_t cc_min = budget == k_smem_three_per_sm_bytes ? cc : 1;
      for (; cc >= cc_min; cc = cc > 8 ? cc * 7 / 8 : cc - 1) {
        const int64_t steps = (cc * t_max + mma::k_k - 1) / mma::k_k;
        const std::size_t xb = static_cast<std::size_t>(cc) * g.x_ci_stride * sizeof(double);
        const std::size_t kb = static_cast<std::size_t>(steps) * mma::k_k * sizeof(int);
        const std::size_t off = (xb + kb + 15) / 16 * 16;
        if (off + region <= budget && steps < (int64_t{1} << 24)) {
          g.chunk_ci = static_cast<int>(cc);
          g.n_chunks = static_cast<int>((c_in + cc - 1) / cc);
          g.steps_stride = static_cast<int>(steps);
          g.x_bytes = xb;
          g.region_offset = off;
          g.qd_slots = n_qd_max;
          g.h_tiles = (n_qh_max + tile_h - 1) / tile_h;
          g.n_blocks = batch * g.n_groups * (s * s) * g.h_tiles * g.qd_slots;
          g.wt_items = static_cast<int64_t>(g.n_phases) * g.n_groups * g.n_chunks * g.steps_stride * k_group_nt * 32;
          g.wt_floats = g.wt_items * mma::k_b_regs;
          g.koff_ints = static_cast<int64_t>(g.n_phases) * g.n_chunks * g.steps_stride * mma::k_k;
          return true;
        }
      }
    }
    if (tile_h == 1) return false;
    tile_h = tile_h / 2;
  }
}

/// Shared memory of a block: x, koff and the policy's region.
inline std::size_t smem_bytes(const geometry& g, std::size_t region_bytes) { return g.region_offset + region_bytes; }

/// The host executor of conv_block: threads one after another, warps with all 32 lanes (mma
/// emulated), barriers do nothing (between two barriers everything is a function of the thread or
/// warp index and shared memory).
struct mma_host_exec {
  std::vector<warp_state<mma::host_warp>> states = std::vector<warp_state<mma::host_warp>>(k_warps);
  template <class F>
  void threads(F&& f) {
    for (int t = 0; t < k_threads; ++t) f(t);
  }
  template <class F>
  void warps(F&& f) {
    const mma::host_warp w{};
    for (int i = 0; i < k_warps; ++i) f(i, w, states[static_cast<std::size_t>(i)]);
  }
  void sync() {}
};

/// The host executor of conv_persistent: tiles [lo, hi) one after another, each box staged
/// straight from x in fp64 (the values the GPU's tensor copy and conversion give: x, or zero
/// outside the input) and the pair's koff tables copied.
struct mma_host_tiles_exec : mma_host_exec {
  int64_t lo = 0, hi = 0, claimed = 0;
  int64_t first_tile() const { return lo; }
  void claim_next_tile(int64_t tile) { claimed = tile + 1 < hi ? tile + 1 : INT64_MAX; }
  void publish_claim() {}
  void rows_arrive() {}
  int64_t claimed_tile() const { return claimed; }
  void stage_tile(const geometry& g, const float* x, const int* koff_tables, const block_pos& bp, unsigned char* smem) {
    const int* tables = pair_koff_tables(g, koff_tables, bp);
    int* koff = reinterpret_cast<int*>(smem + g.x_bytes);
    const int n = static_cast<int>(persistent_koff_bytes(g) / sizeof(int));
    threads([&](int tid) {
      stage_x_planes(g, x, bp, 0, tid, reinterpret_cast<double*>(smem));
      for (int k = tid; k < n; k += k_threads) koff[k] = load_ro(tables + k);
    });
  }
  void prefetch_tile(const geometry&, const float*, const int*, const block_pos&, unsigned char*) {}
  void commit_tile(const geometry& g, const float* x, const int* koff_tables, const block_pos& bp,
                   unsigned char* smem) {
    stage_tile(g, x, koff_tables, bp, smem);
  }
};

#if defined(__CUDACC__)
/// The GPU executor of conv_block: this thread's share; warp_state in its registers.
struct mma_device_exec {
  warp_state<mma::device_lane> st;
  template <class F>
  __device__ void threads(F&& f) {
    f(static_cast<int>(threadIdx.x));
  }
  template <class F>
  __device__ void warps(F&& f) {
    const mma::device_lane w{static_cast<int>(threadIdx.x % 32)};
    f(static_cast<int>(threadIdx.x / 32), w, st);
  }
  __device__ void sync() { __syncthreads(); }
};

/// The GPU executor of conv_persistent: tiles from blockIdx.x, then from the launch's counter
/// (thread 0 asks at a tile's start and publishes the answer before the rows-whole barrier); a
/// tile's inputs by thread 0, completing on the stager's mbarrier: its koff tables by one bulk copy
/// and its box by one TMA tensor copy (`box_map`: x as a 5-D tensor W, H, D, C_in, batch; box
/// box_width x xh x xd x C_in x 1, zeros outside) into `box` (box_offset in x's memory), then the
/// box converted to fp64 in rounds.
struct mma_persistent_exec : mma_device_exec {
  const void* box_map;
  unsigned* tile_counter;  ///< zeroed before the launch
  unsigned* claimed;       ///< shared: the tile thread 0 claimed
  float* box;
  fb::fused::device::bulk_stager stager;
  unsigned asked = 0;  ///< thread 0: the counter's answer

  __device__ int64_t first_tile() const { return blockIdx.x; }
  __device__ void claim_next_tile(int64_t) {
    if (threadIdx.x == 0) asked = atomicAdd(tile_counter, 1u);
  }
  __device__ void publish_claim() {
    if (threadIdx.x == 0) *claimed = gridDim.x + asked;
  }
  __device__ int64_t claimed_tile() const { return *claimed; }
  /// The rows-whole point where each warp finishes only rows it stored (conv_persistent): every
  /// warp arrives on named barrier 1; warp 0, whose thread 0 issues the next tile's copies into
  /// memory the k16 loops read, waits for all of them; the others go on to their rows.
  __device__ void rows_arrive() {
    __syncwarp();
    if (threadIdx.x < 32) asm volatile("bar.sync 1, %0;" ::"r"(k_threads) : "memory");
    else asm volatile("bar.arrive 1, %0;" ::"r"(k_threads) : "memory");
  }
  __device__ void prefetch_tile(const geometry& g, const float*, const int* koff_tables, const block_pos& bp,
                                unsigned char* smem) {
    if (threadIdx.x != 0) return;
    stager.hand_to_async_proxy();
    stager.copy_bytes(smem + g.x_bytes, pair_koff_tables(g, koff_tables, bp),
                      static_cast<std::uint32_t>(persistent_koff_bytes(g)));
    stager.tensor_copy_5d(box, box_map, box_w_start(g), bp.qh0 - (g.j0[1] - 1), bp.qd - (g.j0[0] - 1), 0, bp.b,
                          static_cast<std::uint32_t>(box_bytes(g)));
  }
  /// Waits for the box, then converts it: each round reads its values into registers, a barrier
  /// (the first one also ends every thread's finish: x's rows are read), writes them as fp64
  /// (box_converts_in_place: no round overwrites what a later one reads); the last round's
  /// barrier after the writes is the caller's. Each thread waits on the mbarrier itself: the box
  /// is visible to it without a barrier.
  __device__ void commit_tile(const geometry& g, const float*, const int*, const block_pos&, unsigned char* smem) {
    auto* xs = reinterpret_cast<double*>(smem);
    stager.wait();
    const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
    const int planes = static_cast<int>(g.c_in) * g.xd, plane_elems = g.xh * g.xw;
    const int bw = box_width(g), skip = box_w_skip(g);
    for (int p0 = 0; p0 < planes; p0 += k_warps * k_commit_planes)
      for (int e0 = 0; e0 < plane_elems; e0 += 32 * k_commit_elems) {
        int from[k_commit_elems];
        FB_UNROLL
        for (int k = 0; k < k_commit_elems; ++k) {
          const int e = e0 + lane + 32 * k, uh = e / g.xw;
          from[k] = uh * bw + skip + (e - uh * g.xw);
        }
        float v[k_commit_planes][k_commit_elems];
        FB_UNROLL
        for (int q = 0; q < k_commit_planes; ++q) {
          const int p = p0 + warp + k_warps * q;
          FB_UNROLL
          for (int k = 0; k < k_commit_elems; ++k)
            v[q][k] = p < planes && e0 + lane + 32 * k < plane_elems ? box[p * g.xh * bw + from[k]] : 0.0f;
        }
        __syncthreads();
        FB_UNROLL
        for (int q = 0; q < k_commit_planes; ++q) {
          const int p = p0 + warp + k_warps * q, ci = p / g.xd;
          const int to = ci * g.x_ci_stride + (p - ci * g.xd) * plane_elems + e0 + lane;
          FB_UNROLL
          for (int k = 0; k < k_commit_elems; ++k)
            if (p < planes && e0 + lane + 32 * k < plane_elems) xs[to + 32 * k] = static_cast<double>(v[q][k]);
        }
        if (p0 + k_warps * k_commit_planes < planes || e0 + 32 * k_commit_elems < plane_elems) __syncthreads();
      }
  }
  __device__ void stage_tile(const geometry& g, const float* x, const int* koff_tables, const block_pos& bp,
                             unsigned char* smem) {
    prefetch_tile(g, x, koff_tables, bp, smem);
    commit_tile(g, x, koff_tables, bp, smem);
  }
};
#endif

}  // namespace fb::fused::convt3d_mma
