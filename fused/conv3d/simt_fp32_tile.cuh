#pragma once
/// The 3-D transposed convolution as a block-tiled, phase-uniform direct convolution on the fp32
/// SIMT units, written once for #15's CUDA kernels and host executor (#34 runs on the fp64 tensor
/// cores instead: fused/conv3d/mma_fp64_tile.cuh).
///
/// Decomposition (fused/math/convt_phase.cuh): an output (od, oh, ow) is (q, r) per dimension,
/// o = q*s + r - p. A block tile is a box of bases q (k_tile_qd x k_tile_qh x k_tile_qw) of one
/// sample and k_co_block output channels, over ALL s^3 phases: its outputs are a contiguous box of
/// the output, and the input it reads is the base box widened by J0 - 1 = ceil(k/s) - 1 lines below
/// in each dimension (input index i = q - j), staged once in shared memory with zeros outside the
/// input (so taps that fall outside contribute an exact 0 and the tap loop needs no bounds tests).
///
/// Inside a block every warp works on the same phase at the same time (the phase loop is
/// block-synchronous, because the phase's weights are staged per phase): a warp's lanes are 32
/// consecutive bases along w, so the tap loop is uniform, the weights are broadcast loads, and the
/// x reads are 32 consecutive floats (conflict-free). A thread holds two register tiles of k_rows
/// bases along h times k_co_thread output channels (32 fp32 values each: the accumulators and a
/// partial sum, see "Two-level accumulation" below): per tap it loads k_rows x values and 2 float4
/// weights for 32 FMAs. When J0 <= 2 (the #15 default: k=3, s=2) the tile layout is compile-time
/// and each phase's tap loop is fully unrolled (J per dimension in {1,2}: 8 variants), so all
/// shared-memory offsets are immediates and consecutive h taps reuse the x values already in
/// registers; otherwise one generic loop runs (same FMA order, see below).
///
/// Weights are pre-arranged once per call (arrange_weights_block) into [co block][phase][ci][tap of
/// the phase][k_co_block], zero-padded beyond C_out, so a phase's weights are one contiguous
/// float4 copy and padded channels need no tests.
///
/// The block program (conv_tile_block) is written against an executor: on the GPU `threads(f)` is
/// f(threadIdx.x, this thread's registers) and `sync()` is __syncthreads(); the host executor runs
/// f for every thread of the block in turn and `sync()` does nothing (everything between two
/// barriers is a function of the thread index and shared memory only). So the host executes the
/// kernel's own tiling, indexing, staging and FMA order, and gets bitwise the same sums.
///
/// Two-level accumulation. An output sums C_in x taps products. One fp32 accumulator for all of
/// them (the first version) rounds like a running sum of length n = C_in * taps: with inputs
/// offset by +2 and C_in 61, k 6, s 2 (n = 1647) its error was 5.6e-4 after BatchNorm where
/// libtorch's fp32 result (a GEMM over C_in per tap, then the taps added) was 1.0e-4 off fp64.
/// Now the products are summed in groups (group_of: G whole channels, or in the generic loop
/// S d-slabs of one channel when a channel has more taps than a group holds) into the partial
/// tile `part`, and each finished group is added to `acc` (one FADD per accumulator). The group
/// length is chosen per geometry (group_products_for) so that the rounding figure, products per
/// group + groups, is least for the phase with the most taps: never above libtorch's C_in + taps.
///
/// FMA order per accumulator: ci ascending (chunks change only what is staged: a group that spans
/// two chunks carries its partial over), then jd, jw, jh ascending, each group's products into
/// part starting from 0, each finished group's part added to acc (zero at the phase's start), in
/// both the unrolled and the generic loop: the variants and any chunking produce identical bits
/// (tested on the host).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fused/arch/host_device.cuh"
#include "fused/arch/read_only.cuh"
#include "fused/math/convt_phase.cuh"


namespace fb::fused::convt3d_tile {

// ---------------------------------------------------------------------------------------------
// Compile-time tile shape. Fixed constants (not derived from the device), so the decomposition and
// every rounding are the same on every GPU and in the host executor.
// ---------------------------------------------------------------------------------------------
constexpr int k_threads = 256;
constexpr int k_warps = k_threads / 32;
constexpr int k_rows = 4;         ///< bases along h per thread (register tile)
constexpr int k_co_thread = 8;    ///< output channels per thread (register tile): 2 float4 weights
constexpr int k_warps_d = 2;      ///< warps along d: one base each
constexpr int k_warps_h = 2;      ///< warps along h: k_rows bases each
constexpr int k_warps_c = 2;      ///< warps along the channels: k_co_thread channels each
constexpr int k_tile_qd = k_warps_d;
constexpr int k_tile_qh = k_warps_h * k_rows;
constexpr int k_tile_qw = 32;     ///< one base per lane
constexpr int k_co_block = k_warps_c * k_co_thread;
static_assert(k_warps_d * k_warps_h * k_warps_c == k_warps, "every warp has one (d, h, channel) sub-tile");
static_assert(k_co_thread % 4 == 0, "weights are loaded as float4");

/// Shared-memory budget of a block with two blocks per SM (Hopper: 228 KB per SM, 1 KB reserved per
/// block); problems that need more run one block per SM up to k_smem_max_bytes.
constexpr std::size_t k_smem_two_per_sm_bytes = 110 * 1024;
constexpr std::size_t k_smem_max_bytes = 227 * 1024;

/// The L2 cache policy "evict last" (store_out's keep_in_l2), made once per epilogue rather than
/// per store; the host has no such thing (0).
FB_HOST_DEVICE uint64_t l2_evict_last_policy() {
#if defined(__CUDA_ARCH__)
  uint64_t policy;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
#else
  return 0;
#endif
}

/// Stores an output value; `keep_in_l2` asks L2 to evict the line last (policy from
/// l2_evict_last_policy: a cache hint on the GPU, nothing on the host). The value stored is the
/// same either way.
FB_HOST_DEVICE void store_out(float* p, float v, bool keep_in_l2, uint64_t policy) {
#if defined(__CUDA_ARCH__)
  if (keep_in_l2) {
    asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(p), "f"(v), "l"(policy) : "memory");
    return;
  }
#else
  (void)keep_in_l2;
  (void)policy;
#endif
  *p = v;
}

/// Fused multiply-add with one rounding on both sides (FFMA on the GPU, fmaf on the host): written
/// explicitly so that neither compiler's contraction choices can make host and device differ.
/// (The host executor compiles its block loops a second time for CPUs with FMA, where fmaf is one
/// instruction instead of a libm call: fused/convt3d_bn_sub/convt3d_bn_sub_host.cpp.)
FB_HOST_DEVICE float fma32(float a, float b, float c) { return fmaf(a, b, c); }

/// fp32 addition, never contracted with anything (FADD on the GPU).
FB_HOST_DEVICE float add32(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

/// Everything the kernels need about the problem and its tiling (a POD kernel argument).
struct geometry {
  phase_dim dim[3];          ///< d, h, w
  int64_t batch, c_in, c_out;
  int64_t j0;                ///< most taps of a phase per dimension: ceil(k/s) (cubic kernel)
  int64_t n_phases;          ///< s^3; phase ph = (rd*s + rh)*s + rw
  int64_t n_tile[3];         ///< tiles per dimension: ceil(q_count / tile extent)
  int64_t tiles_per_sample;  ///< n_tile[0] * n_tile[1] * n_tile[2]
  int64_t n_co_blocks;       ///< ceil(c_out / k_co_block)
  int64_t n_blocks;          ///< batch * tiles_per_sample * n_co_blocks
  int64_t ci_chunk;          ///< input channels staged at once
  int64_t n_ci_chunks;       ///< ceil(c_in / ci_chunk); 1 means x is staged once per block
  int64_t group_products;    ///< most products per partial sum (two-level accumulation: group_products_for)
  int64_t wt_floats;         ///< arranged weights: n_co_blocks * c_in * k^3 * k_co_block
  int64_t wt_co_block_floats;  ///< those of one channel block: c_in * k^3 * k_co_block (no division per phase)
  // x tile in shared memory: [ci][xd][xh][xw], row stride xw (floats)
  int xd, xh, xw, x_plane, x_ci;
  int smem_w_offset;         ///< floats: the phase's weights [ci][tap][k_co_block] after the x tile
  int w_buffer_floats;       ///< floats of one weight buffer: ci_chunk * J0^3 * k_co_block
  int w_buffers;             ///< 2: the next phase's weights load while this phase computes (one chunk only)
  int smem_conv_floats;      ///< x tile + weight buffers, rounded up to 4 floats (policy regions follow)
  int variant;               ///< 1 or 2: compile-time layout and unrolled taps for that J0; 0: generic
};

/// Where a block works: sample, channel block, tile, and the first base of its tile per dimension.
/// 32-bit: make_geometry bounds every extent, and fewer live registers leave room for the tile.
struct block_pos {
  int b, cob, tile;
  int q0[3];
};

/// Block `block` of the grid; the channel block varies fastest (consecutive blocks read the same x
/// tile from L2), then the tile, then the sample.
FB_HOST_DEVICE block_pos block_of(const geometry& g, int64_t block) {
  block_pos bp;
  bp.cob = static_cast<int>(block % g.n_co_blocks);
  const int64_t rest = block / g.n_co_blocks;
  bp.tile = static_cast<int>(rest % g.tiles_per_sample);
  bp.b = static_cast<int>(rest / g.tiles_per_sample);
  const int64_t tw = bp.tile % g.n_tile[2];
  const int64_t th = (bp.tile / g.n_tile[2]) % g.n_tile[1];
  const int64_t td = bp.tile / (g.n_tile[2] * g.n_tile[1]);
  bp.q0[0] = static_cast<int>(g.dim[0].q_min() + td * k_tile_qd);
  bp.q0[1] = static_cast<int>(g.dim[1].q_min() + th * k_tile_qh);
  bp.q0[2] = static_cast<int>(g.dim[2].q_min() + tw * k_tile_qw);
  return bp;
}

/// One phase of the loop: its residues, taps per dimension and where its weights start.
struct phase_pos {
  int r[3];
  int jd, jh, jw;  ///< taps per dimension (0 when the phase has none: k < s)
  int taps;        ///< jd * jh * jw
  int group;       ///< input channels per partial sum; 0: partial sums of `slabs` d-slabs (group_of)
  int slabs;       ///< d-slabs (jh * jw taps each) per partial sum when group is 0
  int index;       ///< the phase ph
};

/// The partial sums of a phase (two-level accumulation: every output sums its products in partial
/// sums of at most g.group_products products, each then added to the output's accumulator).
/// When a whole channel's taps fit (taps <= group_products): groups of G channels, the channels
/// [m*G, (m+1)*G) counted from channel 0 of the input (pp.group = G). Otherwise (only where
/// J0 > 2: the generic loop) each channel's taps split into groups of S consecutive d-slabs
/// (jd = m*S ..; pp.group = 0, pp.slabs = S). Phases with fewer taps get longer groups, up to the
/// same length, so their rounding stays below that of the phase with the most taps.
FB_HOST_DEVICE void group_of(const geometry& g, phase_pos& pp) {
  pp.group = 0;
  pp.slabs = 0;
  if (pp.taps == 0) {
    pp.group = 1;
    return;
  }
  // 32-bit divisions (group_products_for's lengths stay below 2^30): this runs per phase in every thread,
  // and 64-bit ones are calls to a division routine on the GPU.
  const int products = static_cast<int>(g.group_products);
  if (products >= pp.taps) {
    const int gr = products / pp.taps;
    pp.group = gr > g.c_in ? static_cast<int>(g.c_in) : gr;
  } else {
    const int sl = products / (pp.jh * pp.jw);
    pp.slabs = sl < 1 ? 1 : sl;
  }
}

/// Taps of residue r along a dimension, without a division: with k = (J0 - 1) s + m, 1 <= m <= s,
/// J(r) = ceil((k - r)/s) is J0 for r < m and J0 - 1 for m <= r < s (0 when k < s <= r: then J0 = 1).
FB_HOST_DEVICE int taps_of_residue(const geometry& g, int r) {
  const int j0 = static_cast<int>(g.j0);
  const int m = static_cast<int>(g.dim[0].k) - (j0 - 1) * static_cast<int>(g.dim[0].s);
  return r < m ? j0 : j0 - 1;
}

/// The taps per dimension, their product and the partial-sum groups of a phase whose residues are set.
FB_HOST_DEVICE void taps_and_groups_of(const geometry& g, phase_pos& pp) {
  pp.jd = taps_of_residue(g, pp.r[0]);
  pp.jh = taps_of_residue(g, pp.r[1]);
  pp.jw = taps_of_residue(g, pp.r[2]);
  pp.taps = pp.jd * pp.jh * pp.jw;
  group_of(g, pp);
}

FB_HOST_DEVICE phase_pos phase_of(const geometry& g, int64_t ph) {
  const int s = static_cast<int>(g.dim[0].s);
  const int phase = static_cast<int>(ph);
  phase_pos pp;
  pp.r[0] = phase / (s * s);
  pp.r[1] = (phase / s) % s;
  pp.r[2] = phase % s;
  pp.index = phase;
  taps_and_groups_of(g, pp);
  return pp;
}

/// phase_of(g, pp.index + 1) from pp: the residues advance with carries and only group_of divides
/// (phase_of's divisions, run by every thread for every phase, were ~7% of the #15 statistics pass's
/// stall samples on the H100: dependent 32-bit division sequences right after the phase barrier).
FB_HOST_DEVICE phase_pos phase_after(const geometry& g, const phase_pos& pp) {
  const int s = static_cast<int>(g.dim[0].s);
  phase_pos n = pp;
  n.index = pp.index + 1;
  if (++n.r[2] == s) {
    n.r[2] = 0;
    if (++n.r[1] == s) n.r[1] = 0, ++n.r[0];
  }
  taps_and_groups_of(g, n);
  return n;
}

/// Offset [floats] of phase ph's weights inside a channel block's region of the arranged weights:
/// c_in * k_co_block * (taps of the phases before it).
FB_HOST_DEVICE int64_t phase_weight_offset(const geometry& g, int64_t ph) {
  int64_t taps = 0;
  for (int64_t q = 0; q < ph; ++q) taps += phase_of(g, q).taps;
  return taps * g.c_in * k_co_block;
}

/// A thread's place in the block: lane = base along w, (wd, wh, wc) = its warp's sub-tile.
/// dq, hq, wq: its first bases relative to the tile's (bp.q0).
struct thread_pos {
  int lane, warp, wd, wh, wc;
  int dq, hq, wq;
};

/// Thread tid of the block.
FB_HOST_DEVICE thread_pos thread_of(int tid) {
  thread_pos t;
  t.lane = tid & 31;
  t.warp = tid >> 5;
  t.wc = t.warp % k_warps_c;
  t.wh = (t.warp / k_warps_c) % k_warps_h;
  t.wd = t.warp / (k_warps_c * k_warps_h);
  t.dq = t.wd;
  t.hq = t.wh * k_rows;
  t.wq = t.lane;
  return t;
}

/// The x tile layout: compile-time for the unrolled variants (kJ0 = 1, 2), so that every shared
/// memory offset in the tap loop is an immediate; read from the geometry for the generic one.
template <int kJ0>
struct x_layout {
  static constexpr int xd = k_tile_qd + kJ0 - 1;
  static constexpr int xh = k_tile_qh + kJ0 - 1;
  static constexpr int xw = k_tile_qw + kJ0 - 1;
  static constexpr int plane = xh * xw;
  static constexpr int ci = xd * plane;
  static constexpr int j0 = kJ0;
  FB_HOST_DEVICE explicit x_layout(const geometry&) {}
};

template <>
struct x_layout<0> {
  int xd, xh, xw, plane, ci, j0;
  FB_HOST_DEVICE explicit x_layout(const geometry& g)
      : xd(g.xd), xh(g.xh), xw(g.xw), plane(g.x_plane), ci(g.x_ci), j0(static_cast<int>(g.j0)) {}
};

using fb::fused::load_ro;   // read-only loads (fused/arch/read_only.cuh)
using fb::fused::load_ro4;

/// 16 bytes to global memory (p 16-byte aligned).
FB_HOST_DEVICE void store4(float* p, const float (&v)[4]) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
#else
  for (int u = 0; u < 4; ++u) p[u] = v[u];
#endif
}


/// Copies of staged data into shared memory. On the GPU they are asynchronous (cp.async: the load
/// goes straight to shared memory, no register holds it, and every copy of a staging step is in
/// flight at once; measured on an H100, the register round trip with 4 loads in flight per thread
/// left the #15 passes waiting on global loads ~30% of their samples); copy_async_wait() then waits
/// for this thread's copies, and a barrier after it publishes them to the block. On the host they
/// are plain copies and the wait does nothing. The values are the same either way.
FB_HOST_DEVICE void copy_async_f32(float* dst, const float* src) {
#if defined(__CUDA_ARCH__)
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d), "l"(src) : "memory");
#else
  *dst = *src;
#endif
}

/// 16 bytes, both addresses 16-byte aligned.
FB_HOST_DEVICE void copy_async_f128(float* dst, const float* src) {
#if defined(__CUDA_ARCH__)
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
#else
  for (int u = 0; u < 4; ++u) dst[u] = src[u];
#endif
}

/// Waits for every copy this thread has issued (copy_async_*).
FB_HOST_DEVICE void copy_async_wait() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

/// Stages input channels [cc*ci_chunk, ...) of the block's x tile into xs, zeros outside the input.
/// centre (may be null): per (b, ci) fp32 values [b * c_in + ci] subtracted from x inside the input
/// (x - c, one rounding); outside the input the tile stays 0.
/// Thread tid: warps take rows (ci, xd, xh) in turn, lanes the first 32 columns (coalesced); the
/// J0 - 1 remaining columns of every row are spread over all threads. The copies are asynchronous
/// (copy_async_f32); with centres the thread waits for its own and subtracts the centre from the
/// same elements (the value x - c of the synchronous version, bit for bit). Without centres the
/// caller waits (copy_async_wait) before the barrier that publishes the tile.
template <int kJ0>
FB_HOST_DEVICE void stage_x(const geometry& g, const block_pos& bp, int64_t cc, int tid, const float* x,
                            const float* centre, float* xs) {
  const x_layout<kJ0> xl(g);
  const int64_t ci0 = cc * g.ci_chunk;
  const int n_ci = static_cast<int>(min_i64(g.ci_chunk, g.c_in - ci0));
  const int n_rows = n_ci * xl.xd * xl.xh;
  // 32-bit extents (make_plan bounds them by 2^20); only the element offset is 64-bit. Few live
  // registers: in the chunked path the accumulators stay live through this step.
  const int D = static_cast<int>(g.dim[0].n_in), H = static_cast<int>(g.dim[1].n_in), W = static_cast<int>(g.dim[2].n_in);
  const int id0 = bp.q0[0] - (xl.j0 - 1), ih0 = bp.q0[1] - (xl.j0 - 1), iw0 = bp.q0[2] - (xl.j0 - 1);
  const float* xb = x + (static_cast<int64_t>(bp.b) * g.c_in + ci0) * D * H * W;
  const float* cb = centre != nullptr ? centre + static_cast<int64_t>(bp.b) * g.c_in + ci0 : nullptr;
  // Row `row` of the tile: its input row pointer, or null when the row lies outside the input.
  auto row_src = [&](int row) -> const float* {
    const int ci = row / (xl.xd * xl.xh);
    const int rem = row - ci * (xl.xd * xl.xh);
    const int xd = rem / xl.xh;
    const int xh = rem - xd * xl.xh;
    const int id = id0 + xd, ih = ih0 + xh;
    if (id < 0 || id >= D || ih < 0 || ih >= H) return nullptr;
    return xb + ((static_cast<int64_t>(ci) * D + id) * H + ih) * W;
  };
  const int lane = tid & 31, warp = tid >> 5;
  const int iw = iw0 + lane;
  const bool lane_in = iw >= 0 && iw < W;
  constexpr int kLanes = 32;
  const int rows_per_ci = xl.xd * xl.xh;  // >= k_tile_qd * k_tile_qh = 16 > k_warps
  // The first 32 columns: rows warp, warp + k_warps, ... in batches of 32 rows, a bit per row
  // saying whether it was copied (inside the input), so that the centring step revisits only those
  // without recomputing addresses. The row's place (xd, xh) and its element offset advance by
  // additions: first the divisions per row (~20% of the #15 passes' instructions), then a 64-bit
  // product chain per row (~48 instructions per row copied, 11% of pass 1's instructions; ncu on
  // the H100) were what staging cost.
  static_assert(k_tile_qh >= k_warps && k_tile_qd >= 1, "a step of k_warps rows wraps xh at most once");
  const int64_t hw_in = static_cast<int64_t>(H) * W;
  for (int batch0 = warp; batch0 < n_rows; batch0 += 32 * k_warps) {
    unsigned copied = 0;
    int ci = batch0 / rows_per_ci, rem = batch0 - ci * rows_per_ci;
    int xd = rem / xl.xh, xh = rem - xd * xl.xh;
    // Offset of (ci, id0 + xd, ih0 + xh, iw) from xb; rows outside the input are never read.
    int64_t off = (static_cast<int64_t>(ci) * D + (id0 + xd)) * hw_in + static_cast<int64_t>(ih0 + xh) * W + iw;
    for (int i = 0; i < 32; ++i) {
      const int row = batch0 + i * k_warps;
      if (row >= n_rows) break;
      const int id = id0 + xd, ih = ih0 + xh;
      float* dst = xs + row * xl.xw + lane;
      if (lane_in && id >= 0 && id < D && ih >= 0 && ih < H) {
        copy_async_f32(dst, xb + off);
        copied |= 1u << i;
      } else {
        *dst = 0.0f;
      }
      xh += k_warps;
      off += static_cast<int64_t>(k_warps) * W;
      if (xh >= xl.xh) {
        xh -= xl.xh;
        ++xd;
        off += hw_in - static_cast<int64_t>(xl.xh) * W;
        if (xd == xl.xd) {
          xd = 0;
          off += (static_cast<int64_t>(D) - xl.xd) * hw_in;
        }
      }
    }
    if (cb == nullptr || copied == 0) continue;
    copy_async_wait();
    ci = batch0 / rows_per_ci;
    rem = batch0 - ci * rows_per_ci;
    for (int i = 0; i < 32; ++i) {
      if ((copied >> i) & 1u) {
        float* dst = xs + (batch0 + i * k_warps) * xl.xw + lane;
        *dst = *dst - load_ro(cb + ci);
      }
      rem += k_warps;
      if (rem >= rows_per_ci) rem -= rows_per_ci, ++ci;
    }
  }
  // Columns 32 .. xw-1 (the J0 - 1 halo columns past the lanes), flattened over all threads.
  const int tail = xl.xw - kLanes;
  if (tail > 0) {
    const int div = tail > 0 ? tail : 1;  // (tail is a constant 0 for kJ0 = 1)
    auto each_tail = [&](auto&& f) {
      for (int e = tid; e < n_rows * tail; e += k_threads) {
        const int row = e / div;
        const int col = kLanes + (e - row * div);
        const float* src = row_src(row);
        const int iwc = iw0 + col;
        f(row, col, (src != nullptr && iwc >= 0 && iwc < W) ? src + iwc : nullptr);
      }
    };
    each_tail([&](int row, int col, const float* src) {
      float* dst = xs + row * xl.xw + col;
      if (src != nullptr)
        copy_async_f32(dst, src);
      else
        *dst = 0.0f;
    });
    if (cb == nullptr) return;
    copy_async_wait();
    each_tail([&](int row, int col, const float* src) {
      if (src == nullptr) return;
      float* dst = xs + row * xl.xw + col;
      *dst = *dst - load_ro(cb + row / rows_per_ci);
    });
  }
}

/// Stages the weights of phase `pp`, input-channel chunk cc: one contiguous copy of the arranged
/// weights (ci of the chunk x taps of the phase x k_co_block) into ws, 16 bytes at a time,
/// asynchronously (copy_async_f128: the caller waits before the barrier that publishes them).
FB_HOST_DEVICE void stage_w(const geometry& g, const block_pos& bp, const phase_pos& pp, int64_t phase_offset,
                            int64_t cc, int tid, const float* wt, float* ws) {
  const int64_t ci0 = cc * g.ci_chunk;
  const int64_t n_ci = min_i64(g.ci_chunk, g.c_in - ci0);
  const float* src = wt + bp.cob * g.wt_co_block_floats + phase_offset + ci0 * pp.taps * k_co_block;
  const int n4 = static_cast<int>(n_ci * pp.taps * (k_co_block / 4));
  for (int e = tid; e < n4; e += k_threads) copy_async_f128(ws + 4 * e, src + 4 * e);
}

/// A register tile of a thread: k_rows bases along h x k_co_thread channels. A thread holds two:
/// the outputs' accumulators (acc) and the partial sum of the current channel group (part).
struct acc_tile {
  float v[k_rows][k_co_thread];
  FB_HOST_DEVICE void zero() {
    FB_UNROLL
    for (int r = 0; r < k_rows; ++r)
      FB_UNROLL
      for (int c = 0; c < k_co_thread; ++c) v[r][c] = 0.0f;
  }
  /// Ends a group: adds its partial sum p (one FADD per accumulator).
  FB_HOST_DEVICE void add_group(const acc_tile& p) {
    FB_UNROLL
    for (int r = 0; r < k_rows; ++r)
      FB_UNROLL
      for (int c = 0; c < k_co_thread; ++c) v[r][c] = add32(v[r][c], p.v[r][c]);
  }
};

/// The k_co_thread weights of one (ci, tap) for this thread's channels (warp-uniform: broadcast).
FB_HOST_DEVICE void load_weights(const float* p, float (&w)[k_co_thread]) {
#if defined(__CUDA_ARCH__)
  FB_UNROLL
  for (int u = 0; u < k_co_thread / 4; ++u) {
    const float4 q = reinterpret_cast<const float4*>(p)[u];
    w[4 * u] = q.x;
    w[4 * u + 1] = q.y;
    w[4 * u + 2] = q.z;
    w[4 * u + 3] = q.w;
  }
#else
  for (int c = 0; c < k_co_thread; ++c) w[c] = p[c];
#endif
}

/// The thread's x pointer: tile element (ci 0, base row wd, first base row wh*k_rows, lane) with
/// tap 0; tap j reads j lines lower (input index q - j).
template <class XL>
FB_HOST_DEVICE const float* x_base(const XL& xl, const thread_pos& t, const float* xs) {
  return xs + (t.dq + xl.j0 - 1) * xl.plane + (t.hq + xl.j0 - 1) * xl.xw + t.wq + xl.j0 - 1;
}

/// One input channel's taps of a phase with JD x JH x JW taps known at compile time, added to the
/// partial sum p (fully unrolled; consecutive h taps reuse the x values in registers). kFirst: the
/// channel opens a group, so p holds nothing yet and the first product's addend is 0 (the same bits
/// as zeroing p first, without the zeroing).
template <int JD, int JH, int JW, bool kFirst, class XL>
FB_HOST_DEVICE void channel_fixed(acc_tile& p, const XL& xl, const float* xc, const float* wc) {
  constexpr int kWin = k_rows + JH - 1;
  FB_UNROLL
  for (int jd = 0; jd < JD; ++jd) {
    FB_UNROLL
    for (int jw = 0; jw < JW; ++jw) {
      // x rows base-1 .. base+k_rows-1 relative to tap jh = JH-1: window u = r - jh + JH - 1.
      float xv[kWin];
      FB_UNROLL
      for (int u = 0; u < kWin; ++u) xv[u] = xc[-jd * xl.plane + (u - (JH - 1)) * xl.xw - jw];
      FB_UNROLL
      for (int jh = 0; jh < JH; ++jh) {
        float w[k_co_thread];
        load_weights(wc + ((jd * JH + jh) * JW + jw) * k_co_block, w);
        const bool open = kFirst && jd == 0 && jw == 0 && jh == 0;
        FB_UNROLL
        for (int r = 0; r < k_rows; ++r)
          FB_UNROLL
          for (int c = 0; c < k_co_thread; ++c)
            p.v[r][c] = fma32(xv[r - jh + JH - 1], w[c], open ? 0.0f : p.v[r][c]);
      }
    }
  }
}

/// The same with run-time tap counts (any k and s), in the same FMA order, for the d-slabs
/// [jd0, jd1) of the channel; p must hold the group's sum so far (zero when a group opens).
template <class XL>
FB_HOST_DEVICE void channel_any(acc_tile& p, const XL& xl, const float* xc, const float* wc, const phase_pos& pp,
                                int jd0, int jd1) {
  for (int jd = jd0; jd < jd1; ++jd)
    for (int jw = 0; jw < pp.jw; ++jw)
      for (int jh = 0; jh < pp.jh; ++jh) {
        float w[k_co_thread];
        load_weights(wc + ((jd * pp.jh + jh) * pp.jw + jw) * k_co_block, w);
        const float* xp = xc - jd * xl.plane - jh * xl.xw - jw;
        FB_UNROLL
        for (int r = 0; r < k_rows; ++r) {
          const float xv = xp[r * xl.xw];
          FB_UNROLL
          for (int c = 0; c < k_co_thread; ++c) p.v[r][c] = fma32(xv, w[c], p.v[r][c]);
        }
      }
}

/// Accumulates the n_ci input channels [ci0, ci0 + n_ci) of one staged chunk (generic loop) with
/// groups of pp.slabs d-slabs inside each channel (group_of: channels with more taps than a group
/// holds). No group spans two channels, so nothing carries over between chunks.
template <class XL>
FB_HOST_DEVICE void accumulate_slab_groups(acc_tile& acc, const XL& xl, const float* xb, const float* wb, int ci0,
                                           int n_ci, const phase_pos& pp) {
  acc_tile a = acc;  // see accumulate_groups
  acc_tile p;
  FB_NO_UNROLL
  for (int ci = 0; ci < n_ci; ++ci) {
    const float* xc = xb + ci * xl.ci;
    const float* wc = wb + ci * pp.taps * k_co_block;
    for (int jd0 = 0; jd0 < pp.jd; jd0 += pp.slabs) {
      p.zero();
      channel_any(p, xl, xc, wc, pp, jd0, jd0 + pp.slabs < pp.jd ? jd0 + pp.slabs : pp.jd);
      a.add_group(p);
    }
  }
  acc = a;
}

/// Accumulates the n_ci input channels [ci0, ci0 + n_ci) of one staged chunk, two-level: the
/// channels of each group (group_of: pp.group consecutive channels, counted from channel 0 of the
/// whole input, not of the chunk) are summed into part, and a completed group's part is added to
/// acc. A group may span two chunks: part then carries over to the next chunk's call (chunked
/// path), so the sums do not depend on the chunking. The unrolled variant (JD, JH, JW >= 1 known at
/// compile time) and the generic one (JD = 0: pp's tap counts) give the same bits.
template <int JD, int JH, int JW, class XL>
FB_HOST_DEVICE void accumulate_groups(acc_tile& acc, acc_tile& part, const XL& xl, const float* xb, const float* wb,
                                      int ci0, int n_ci, int c_in, const phase_pos& pp) {
  const int taps = JD > 0 ? JD * JH * JW : pp.taps;
  if (JD == 0 && pp.group == 0) {
    accumulate_slab_groups(acc, xl, xb, wb, ci0, n_ci, pp);
    return;
  }
  const int group = pp.group;
  acc_tile a = acc;  // local copies: on the host the compiler may then keep them out of memory (the
  acc_tile p = part; // shared-memory pointers are floats too and could alias); on the GPU a no-op
  int pos = ci0 % group;  // position of channel ci0 inside its group
  FB_NO_UNROLL
  for (int ci = 0; ci < n_ci;) {
    const int end = (n_ci - ci < group - pos) ? n_ci : ci + (group - pos);  // this group's channels here
    const bool opens = pos == 0;
    int e = ci;
    if constexpr (JD > 0) {
      if (opens) {
        channel_fixed<JD, JH, JW, true>(p, xl, xb + e * xl.ci, wb + e * taps * k_co_block);
        ++e;
      }
      FB_NO_UNROLL
      for (; e < end; ++e) channel_fixed<JD, JH, JW, false>(p, xl, xb + e * xl.ci, wb + e * taps * k_co_block);
    } else {
      if (opens) p.zero();
      FB_NO_UNROLL
      for (; e < end; ++e) channel_any(p, xl, xb + e * xl.ci, wb + e * taps * k_co_block, pp, 0, pp.jd);
    }
    pos += end - ci;
    ci = end;
    if (pos == group || ci0 + ci == c_in) a.add_group(p);  // the group is complete
    pos = 0;
  }
  acc = a;
  part = p;
}

/// One thread's share of a phase and input-channel chunk: the unrolled variant of the phase's tap
/// counts when the layout is compile-time and taps per dimension are 1 or 2, else the generic loop.
/// A phase without taps (k < s) leaves acc at zero.
template <int kJ0>
FB_HOST_DEVICE void accumulate(const geometry& g, const phase_pos& pp, int64_t cc, const thread_pos& t,
                               const float* xs, const float* ws, acc_tile& acc, acc_tile& part) {
  if (cc == 0) acc.zero();
  if (pp.taps == 0) return;
  const x_layout<kJ0> xl(g);
  const int ci0 = static_cast<int>(cc * g.ci_chunk);
  const int n_ci = static_cast<int>(min_i64(g.ci_chunk, g.c_in - ci0));
  const int c_in = static_cast<int>(g.c_in);
  const float* xb = x_base(xl, t, xs);
  const float* wb = ws + t.wc * k_co_thread;
  if constexpr (kJ0 == 1) {
    accumulate_groups<1, 1, 1>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp);
  } else if constexpr (kJ0 == 2) {
    switch ((pp.jd - 1) * 4 + (pp.jh - 1) * 2 + (pp.jw - 1)) {
      case 0: accumulate_groups<1, 1, 1>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      case 1: accumulate_groups<1, 1, 2>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      case 2: accumulate_groups<1, 2, 1>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      case 3: accumulate_groups<1, 2, 2>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      case 4: accumulate_groups<2, 1, 1>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      case 5: accumulate_groups<2, 1, 2>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      case 6: accumulate_groups<2, 2, 1>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      default: accumulate_groups<2, 2, 2>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
    }
  } else {
    accumulate_groups<0, 0, 0>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp);
  }
}

/// The outputs a thread's accumulators stand for in one phase.
struct thread_outputs {
  bool active;           ///< the d and w outputs exist (else nothing of this thread counts)
  int od, ow;            ///< output d and w
  int qd, qh0, qw;       ///< their bases (row r: qh0 + r)
  int oh[k_rows];        ///< output h of each row
  bool row_ok[k_rows];   ///< that output h exists
  int co0;               ///< channel of accumulator column 0 (c_out <= 2^20)
  int n_co;              ///< valid channels: columns [0, n_co) (may be <= 0)
};

FB_HOST_DEVICE thread_outputs outputs_of(const geometry& g, const block_pos& bp, const phase_pos& pp,
                                         const thread_pos& t) {
  thread_outputs o;
  const int s = static_cast<int>(g.dim[0].s), p = static_cast<int>(g.dim[0].p);
  // output_of / has_output of phase_dim, in 32-bit (every coordinate is below 2^22).
  o.qd = bp.q0[0] + t.dq;
  o.qh0 = bp.q0[1] + t.hq;
  o.qw = bp.q0[2] + t.wq;
  // 32-bit comparisons too (n_out < 2^27, c_out <= 2^20): this runs per phase in every thread.
  const int d_out = static_cast<int>(g.dim[0].n_out), h_out = static_cast<int>(g.dim[1].n_out),
            w_out = static_cast<int>(g.dim[2].n_out);
  o.od = o.qd * s + pp.r[0] - p;
  o.ow = o.qw * s + pp.r[2] - p;
  o.active = o.od >= 0 && o.od < d_out && o.ow >= 0 && o.ow < w_out;
  FB_UNROLL
  for (int r = 0; r < k_rows; ++r) {
    o.oh[r] = (o.qh0 + r) * s + pp.r[1] - p;
    o.row_ok[r] = o.oh[r] >= 0 && o.oh[r] < h_out;
  }
  o.co0 = bp.cob * k_co_block + t.wc * k_co_thread;
  const int co_left = static_cast<int>(g.c_out) - o.co0;
  o.n_co = co_left < k_co_thread ? co_left : k_co_thread;
  return o;
}

/// True when some accumulator of the thread stands for an output of this phase (outputs_of has
/// one with active, a row_ok and n_co > 0). Computed apart from outputs_of, from the fewest values:
/// it is evaluated before the tap loop, and nothing of it must stay live through the loop.
FB_HOST_DEVICE bool has_outputs(const geometry& g, const block_pos& bp, const phase_pos& pp, const thread_pos& t) {
  const int s = static_cast<int>(g.dim[0].s), p = static_cast<int>(g.dim[0].p);
  const int od = (bp.q0[0] + t.dq) * s + pp.r[0] - p;
  const int ow = (bp.q0[2] + t.wq) * s + pp.r[2] - p;
  const int oh_first = (bp.q0[1] + t.hq) * s + pp.r[1] - p;  // rows increase with r
  const int oh_last = oh_first + (k_rows - 1) * s;
  return od >= 0 && od < g.dim[0].n_out && ow >= 0 && ow < g.dim[2].n_out && oh_last >= 0 &&
         oh_first < g.dim[1].n_out && bp.cob * k_co_block + t.wc * k_co_thread < g.c_out;
}

/// The taps j in [lo, hi) of a phase with J taps along one dimension that read inside the input
/// at base q (input index q - j in [0, n_in)); all of them (lo = 0, hi = J) away from the borders.
FB_HOST_DEVICE void valid_taps(const phase_dim& d, int q, int J, int& lo, int& hi) {
  const int n_in = static_cast<int>(d.n_in);
  lo = q - n_in + 1 > 0 ? q - n_in + 1 : 0;
  hi = q + 1 < J ? q + 1 : J;
  if (hi < lo) hi = lo;
}

/// Border classes of a base along one dimension of a phase with J <= 2 taps there (k_tap_classes of
/// them; valid_taps gives the interval): 0 every tap reads inside the input, 1 only the taps below
/// hi < J (low border), 2 only the taps from lo > 0 (high border), 3 none. An output's taps that
/// read inside the input are the box of its three classes, so quantities that depend only on that
/// box (#15's centring term K(o)) come from a table of k_tap_classes^3 entries per (sample,
/// channel, phase) instead of a per-output box sum: the epilogues look them up without branches
/// (with the box sums inline, every warp with a border lane in w took the slow path).
constexpr int k_tap_classes = 4;
constexpr int k_class_combos = k_tap_classes * k_tap_classes * k_tap_classes;

FB_HOST_DEVICE int tap_class(const phase_dim& d, int q, int J) {
  int lo, hi;
  valid_taps(d, q, J, lo, hi);
  if (hi <= lo) return 3;
  if (lo == 0 && hi == J) return 0;
  return lo == 0 ? 1 : 2;
}

/// The interval [lo, hi) of taps of class cls (tap_class) along a dimension with J <= 2 taps.
FB_HOST_DEVICE void class_taps(int cls, int J, int& lo, int& hi) {
  lo = cls == 2 ? 1 : 0;
  hi = cls == 0 ? J : (cls == 3 ? 0 : lo + 1);
  if (hi > J) hi = J;
  if (lo > hi) lo = hi;
}

/// The box of taps [ld, hd) x [lh, hh) x [lw, hw) of class combination combo (class_combo) in phase pp.
FB_HOST_DEVICE void class_box(int combo, const phase_pos& pp, int& ld, int& hd, int& lh, int& hh, int& lw, int& hw) {
  class_taps(combo / (k_tap_classes * k_tap_classes), pp.jd, ld, hd);
  class_taps((combo / k_tap_classes) % k_tap_classes, pp.jh, lh, hh);
  class_taps(combo % k_tap_classes, pp.jw, lw, hw);
}

/// The d and w part of an output's class combination (class_combo): a thread's rows share it, so
/// the epilogues derive it once per phase and add each row's h class (class_combo_at).
FB_HOST_DEVICE int class_combo_dw(const geometry& g, const phase_pos& pp, int qd, int qw) {
  return tap_class(g.dim[0], qd, pp.jd) * (k_tap_classes * k_tap_classes) + tap_class(g.dim[2], qw, pp.jw);
}

/// class_combo from its d and w part (class_combo_dw) and the output's h base.
FB_HOST_DEVICE int class_combo_at(const geometry& g, const phase_pos& pp, int combo_dw, int qh) {
  return combo_dw + tap_class(g.dim[1], qh, pp.jh) * k_tap_classes;
}

/// The class combination of an output at bases (qd, qh, qw) of phase pp (index into a class table).
FB_HOST_DEVICE int class_combo(const geometry& g, const phase_pos& pp, int qd, int qh, int qw) {
  return class_combo_at(g, pp, class_combo_dw(g, pp, qd, qw), qh);
}

/// Products per partial sum of the two-level accumulation (group_of), chosen for the phase with
/// the most taps (J0 per dimension, t_max = J0^3, n = c_in * t_max products per output) to
/// minimise the rounding error figure f = (products per group) + (groups per output), ties to the
/// longer group (fewer group ends): groups of G whole channels (f = G*t_max + ceil(c_in/G)), or
/// of S d-slabs of J0^2 taps inside a channel (f = S*J0^2 + c_in*ceil(J0/S)). Why f: the terms of
/// a sum of products with random signs make its running value a random walk, so the variance of
/// the fp32 rounding errors is proportional to the sum of its squared partial values, length^2/2
/// per sum; groups of m products and then the n/m group sums give n/2 * f with f = m + n/m, least
/// near m = sqrt(n). One accumulator for all products (the former order) has f = n + 1; libtorch's
/// CPU transposed convolution (a GEMM over C_in for each tap, then the taps added) f = c_in + taps,
/// which G = 1 equals: the choice is never worse than libtorch's and better where c_in and taps
/// differ (C_in 1, k 7, s 1: f 56 instead of 344).
inline int64_t group_products_for(int64_t c_in, int64_t j0) {
  const int64_t slab = j0 * j0, t_max = slab * j0;
  int64_t best_m = t_max, best_f = t_max + c_in;  // G = 1
  // Channel groups: the optimum lies near G = sqrt(c_in / t_max), f grows on both sides.
  int64_t hi = 2;
  while (hi * hi * t_max < 4 * c_in) ++hi;
  for (int64_t gr = 2; gr <= min_i64(c_in, hi + 1); ++gr) {
    const int64_t f = gr * t_max + ceil_div(c_in, gr);
    if (f <= best_f) best_f = f, best_m = gr * t_max;
  }
  // Slab groups inside a channel (only when J0 > 2: the unrolled variants need whole channels).
  if (j0 > 2)
    for (int64_t sl = j0 - 1; sl >= 1; --sl) {
      const int64_t f = sl * slab + c_in * ceil_div(j0, sl);
      if (f < best_f) best_f = f, best_m = sl * slab;
    }
  return best_m;
}

/// Derives the geometry of a cubic transposed convolution (kernel k, stride s, padding p) for the
/// block tile above. policy_bytes: shared memory the caller's block program adds after the conv
/// regions (the largest over its passes, so that every pass uses the same channel chunk and thus
/// the same sums). force_generic: use the generic tap loop even where an unrolled one exists (tests).
/// Throws std::invalid_argument when even one input channel does not fit in shared memory.
inline geometry make_geometry(int64_t batch, int64_t c_in, int64_t c_out, int64_t depth, int64_t height,
                              int64_t width, int64_t k, int64_t s, int64_t p, std::size_t policy_bytes,
                              bool force_generic, const char* model) {
  geometry g{};
  const int64_t in[3] = {depth, height, width};
  for (int d = 0; d < 3; ++d) g.dim[d] = phase_dim{in[d], convt_output_size(in[d], k, s, p, 0), k, s, p};
  g.batch = batch;
  g.c_in = c_in;
  g.c_out = c_out;
  g.j0 = g.dim[0].max_taps();
  g.n_phases = s * s * s;
  const int64_t extent[3] = {k_tile_qd, k_tile_qh, k_tile_qw};
  for (int d = 0; d < 3; ++d) g.n_tile[d] = ceil_div(g.dim[d].q_count(), extent[d]);
  g.tiles_per_sample = g.n_tile[0] * g.n_tile[1] * g.n_tile[2];
  g.n_co_blocks = ceil_div(c_out, k_co_block);
  g.n_blocks = batch * g.tiles_per_sample * g.n_co_blocks;
  g.wt_co_block_floats = c_in * k * k * k * k_co_block;
  g.wt_floats = g.n_co_blocks * g.wt_co_block_floats;
  g.xd = static_cast<int>(k_tile_qd + g.j0 - 1);
  g.xh = static_cast<int>(k_tile_qh + g.j0 - 1);
  g.xw = static_cast<int>(k_tile_qw + g.j0 - 1);
  g.x_plane = g.xh * g.xw;
  g.x_ci = g.xd * g.x_plane;
  // Per input channel: its x tile and the weights of the phase with the most taps (J0^3).
  const int64_t w_per_ci = g.j0 * g.j0 * g.j0 * k_co_block;
  const int64_t per_ci_bytes = (g.x_ci + w_per_ci) * static_cast<int64_t>(sizeof(float));
  const int64_t fixed_bytes = static_cast<int64_t>(policy_bytes) + 64;  // + alignment slack
  auto chunk_for = [&](std::size_t budget) {
    return min_i64(c_in, (static_cast<int64_t>(budget) - fixed_bytes) / per_ci_bytes);
  };
  g.ci_chunk = chunk_for(k_smem_two_per_sm_bytes);
  std::size_t budget = k_smem_two_per_sm_bytes;
  if (g.ci_chunk < 1) {
    g.ci_chunk = max_i64(g.ci_chunk, chunk_for(k_smem_max_bytes));
    budget = k_smem_max_bytes;
  }
  if (g.ci_chunk < 1)
    throw std::invalid_argument(std::string(model) + ": kernel_size " + std::to_string(k) + " with stride " +
                                std::to_string(s) + " needs more shared memory than a block has (ceil(k/s) = " +
                                std::to_string(g.j0) + " taps per dimension)");
  g.n_ci_chunks = ceil_div(c_in, g.ci_chunk);
  const int64_t x_floats = ((g.ci_chunk * g.x_ci + 3) / 4) * 4;  // weights start 16-byte aligned
  g.smem_w_offset = static_cast<int>(x_floats);
  g.w_buffer_floats = static_cast<int>(g.ci_chunk * w_per_ci);  // a multiple of 16: buffers stay aligned
  // A second weight buffer where it fits the budget the chunk was sized for (so the blocks per SM
  // stay what they were), in the one-chunk path: conv_tile_block then loads phase ph + 1's weights
  // while phase ph computes, and a phase needs one barrier instead of two.
  g.w_buffers = 1;
  if (g.n_ci_chunks == 1 &&
      (x_floats + 2 * static_cast<int64_t>(g.w_buffer_floats)) * static_cast<int64_t>(sizeof(float)) + fixed_bytes <=
          static_cast<int64_t>(budget))
    g.w_buffers = 2;
  g.smem_conv_floats = static_cast<int>(x_floats + g.w_buffers * static_cast<int64_t>(g.w_buffer_floats));
  g.variant = (!force_generic && (g.j0 == 1 || g.j0 == 2)) ? static_cast<int>(g.j0) : 0;
  g.group_products = group_products_for(c_in, g.j0);
  return g;
}

// ---------------------------------------------------------------------------------------------
// The block programs. Exec provides threads(f) (f(tid, thread_state&) for each thread of the
// block) and sync() (a block barrier); Exec::state has members `acc` and `part` (acc_tile).
// ---------------------------------------------------------------------------------------------

/// Arranges the weights W[ci][co][td][th][tw] for channel block `block / n_phases` and phase
/// `block % n_phases` into wt (layout in the file comment), zero beyond c_out. n_threads: the
/// block's threads.
template <class Exec>
FB_HOST_DEVICE void arrange_weights_block(Exec& ex, const geometry& g, const float* weight, float* wt, int64_t block,
                                          int n_threads = k_threads) {
  const int64_t cob = block / g.n_phases, ph = block % g.n_phases;
  const phase_pos pp = phase_of(g, ph);
  if (pp.taps == 0) return;
  float* dst = wt + cob * g.wt_co_block_floats + phase_weight_offset(g, ph);
  const int64_t k = g.dim[0].k, s = g.dim[0].s;
  const int64_t n = g.c_in * pp.taps * k_co_block;
  ex.threads([&](int tid, typename Exec::state&) {
    for (int64_t e = tid; e < n; e += n_threads) {
      const int64_t co_l = e % k_co_block;
      const int64_t tap = (e / k_co_block) % pp.taps;
      const int64_t ci = e / (k_co_block * pp.taps);
      const int64_t jw = tap % pp.jw, jh = (tap / pp.jw) % pp.jh, jd = tap / (pp.jw * pp.jh);
      const int64_t td = pp.r[0] + jd * s, th = pp.r[1] + jh * s, tw = pp.r[2] + jw * s;
      const int64_t co = cob * k_co_block + co_l;
      dst[e] = co < g.c_out ? weight[(((ci * g.c_out + co) * k + td) * k + th) * k + tw] : 0.0f;
    }
  });
}

/// One block of a convolution pass: for every phase, stage the phase's weights (and x: once per
/// block when all input channels fit, kChunked = false; per chunk otherwise), accumulate, then hand
/// the accumulators to the policy. Two instantiations rather than a run-time test, so that the
/// one-chunk path (the default) never keeps accumulators live across a staging step: its register
/// allocation is the tap loop's alone.
/// Policy: prologue(ex, bp, region) before the first barrier; phase_begin(tid, bp, pp, region)
/// with the first staging of each phase (before its barrier: per-phase tables for the epilogue,
/// double-buffered by the caller's choice since the previous phase's epilogue may still read);
/// epilogue(tid, state, bp, pp, outputs, region) after each phase; phase_end(ex, bp, pp, region)
/// after a phase's epilogues (it may use ex.sync(); the next phase's epilogue runs after the next
/// staging barrier); finish(ex, bp, region) at the end (it may use ex.sync()). region: the
/// policy's shared memory, after the conv regions. A policy holds no per-block state of its own:
/// what it needs comes with the calls (fewer registers live across the tap loops). centre: as for
/// stage_x (null: x as it is).
template <int kJ0, bool kChunked, class Exec, class Policy>
FB_HOST_DEVICE void conv_tile_block(Exec& ex, const geometry& g, const float* x, const float* centre, const float* wt,
                                    int64_t block, float* smem, const Policy& policy) {
  const block_pos bp = block_of(g, block);
  float* xs = smem;
  float* region = smem + g.smem_conv_floats;
  // Two weight buffers (g.w_buffers, one chunk only): phase ph reads buffer ph % 2 while phase
  // ph + 1's weights load into the other, issued right after the barrier that opens phase ph (every
  // thread has then finished phase ph - 1's tap loop, the other buffer's last reader); the policy's
  // phase_begin for ph + 1 runs after phase ph's epilogues (its tables are double-buffered by phase
  // parity: phase ph - 1's epilogues, their last readers, ended before that barrier too). One
  // barrier per phase. With one buffer: stage, barrier, tap loop, barrier.
  const bool prefetch = !kChunked && g.w_buffers == 2;
  auto weights_of = [&](int ph) { return smem + g.smem_w_offset + (prefetch ? (ph & 1) * g.w_buffer_floats : 0); };
  policy.prologue(ex, bp, region);
  if (!kChunked)
    ex.threads([&](int tid, typename Exec::state&) {
      stage_x<kJ0>(g, bp, 0, tid, x, centre, xs);
      if (prefetch) {
        const phase_pos p0 = phase_of(g, 0);
        if (p0.taps > 0) stage_w(g, bp, p0, 0, 0, tid, wt, weights_of(0));
        policy.phase_begin(tid, bp, p0, region);
      }
    });
  int64_t phase_offset = 0;
  // Each phase's position is derived once (phase_of divides by s and by tap counts; three calls per
  // phase, for this phase and the next one's staging and tables, were ~13% of the #15 statistics
  // pass's stall samples on the H100) and handed on to the next iteration.
  phase_pos next = phase_of(g, 0);
  for (int ph = 0; ph < static_cast<int>(g.n_phases); ++ph) {
    const phase_pos pp = next;
    if (ph + 1 < static_cast<int>(g.n_phases)) next = phase_after(g, pp);
    const int64_t n_chunks = kChunked ? g.n_ci_chunks : 1;
    float* ws = weights_of(ph);
    for (int64_t cc = 0; cc < n_chunks; ++cc) {
      ex.threads([&](int tid, typename Exec::state&) {
        if (!prefetch) {
          if (kChunked) stage_x<kJ0>(g, bp, cc, tid, x, centre, xs);
          if (pp.taps > 0) stage_w(g, bp, pp, phase_offset, cc, tid, wt, ws);
          if (cc == 0) policy.phase_begin(tid, bp, pp, region);
        }
        copy_async_wait();
      });
      ex.sync();
      if (prefetch && ph + 1 < static_cast<int>(g.n_phases))
        ex.threads([&](int tid, typename Exec::state&) {
          if (next.taps > 0) stage_w(g, bp, next, phase_offset + pp.taps * g.c_in * k_co_block, 0, tid, wt,
                                     weights_of(ph + 1));
        });
      // A thread whose phase has no output (past the output's edge, or only padded channels)
      // skips the tap loop: its accumulators are never used. Whole warps skip at the tile edges.
      // The partial sum carries over between chunks only in the chunked path (one chunk: every
      // group ends inside the call, so part is a temporary of the tap loop).
      ex.threads([&](int tid, typename Exec::state& st) {
        const thread_pos t = thread_of(tid);
        if (!has_outputs(g, bp, pp, t)) return;
        acc_tile local;
        accumulate<kJ0>(g, pp, cc, t, xs, ws, st.acc, kChunked ? st.part : local);
      });
      if (!prefetch) ex.sync();  // with one buffer the next stage overwrites the weights (and x when chunked)
    }
    ex.threads([&](int tid, typename Exec::state& st) {
      policy.epilogue(tid, st, bp, pp, outputs_of(g, bp, pp, thread_of(tid)), region);
    });
    if (prefetch && ph + 1 < static_cast<int>(g.n_phases))
      ex.threads([&](int tid, typename Exec::state&) { policy.phase_begin(tid, bp, next, region); });
    policy.phase_end(ex, bp, pp, region);
    phase_offset += pp.taps * g.c_in * k_co_block;
  }
  policy.finish(ex, bp, region);
}

}  // namespace fb::fused::convt3d_tile

#if !defined(__CUDA_ARCH__)
#include <vector>
namespace fb::fused::convt3d_tile {
/// The host executor of a block program: threads(f) runs f for every thread of the block in turn,
/// each with its own (persistent) registers; sync() has nothing to wait for.
/// kThreads: the block's threads (k_threads; a launch with other blocks, e.g. #15's prep, says so).
template <int kThreads = k_threads>
struct host_exec_n {
  struct state {
    acc_tile acc, part;
  };
  std::vector<state> states = std::vector<state>(kThreads);
  template <class F>
  void threads(F&& f) {
    for (int t = 0; t < kThreads; ++t) f(t, states[static_cast<std::size_t>(t)]);
  }
  void sync() {}
};
using host_exec = host_exec_n<>;
}  // namespace fb::fused::convt3d_tile
#endif
