#pragma once
/// The fp32 CUDA-core tile loop's geometry (fused/conv3d/simt_fp32_tile.cuh): the compile-time
/// tile shape, the problem's geometry and its derivation (make_geometry), where a block, a phase
/// and a thread work, the x tile's layout and the group length of the two-level accumulation.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include "fused/arch/host_device.cuh"
#include "fused/arch/rounded.cuh"
#include "fused/arch/read_only.cuh"
#include "fused/math/convt_phase.cuh"

namespace fb::fused::conv3d::simt_fp32 {

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
using rn::add32;

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
  // x tile in shared memory: [ci][x_tile_d][x_tile_h][x_tile_w], row stride x_tile_w (floats)
  int x_tile_d, x_tile_h, x_tile_w, x_plane, x_ci;
  int smem_w_offset;         ///< floats: the phase's weights [ci][tap][k_co_block] after the x tile
  int w_buffer_floats;       ///< floats of one weight buffer: ci_chunk * J0^3 * k_co_block
  int w_buffers;             ///< 2: the next phase's weights load while this phase computes (one chunk only)
  int smem_conv_floats;      ///< x tile + weight buffers, rounded up to 4 floats (policy regions follow)
  int variant;               ///< 1 or 2: compile-time layout and unrolled taps for that J0; 0: generic
};

/// Where a block works: sample, channel block, tile, and the first base of its tile per dimension.
/// 32-bit: make_geometry bounds every extent, and fewer live registers leave room for the tile.
struct block_pos {
  int b, co_block, tile;
  int q0[3];
};

/// Block `block` of the grid; the channel block varies fastest (consecutive blocks read the same x
/// tile from L2), then the tile, then the sample.
FB_HOST_DEVICE block_pos block_of(const geometry& g, int64_t block) {
  block_pos bp;
  bp.co_block = static_cast<int>(block % g.n_co_blocks);
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

/// A thread's place in the block: lane = base along w, (warp_d, warp_h, warp_c) = its warp's
/// sub-tile. base_d, base_h, base_w: its first bases relative to the tile's (bp.q0).
struct thread_pos {
  int lane, warp, warp_d, warp_h, warp_c;
  int base_d, base_h, base_w;
};

/// Thread tid of the block.
FB_HOST_DEVICE thread_pos thread_of(int tid) {
  thread_pos t;
  t.lane = tid & 31;
  t.warp = tid >> 5;
  t.warp_c = t.warp % k_warps_c;
  t.warp_h = (t.warp / k_warps_c) % k_warps_h;
  t.warp_d = t.warp / (k_warps_c * k_warps_h);
  t.base_d = t.warp_d;
  t.base_h = t.warp_h * k_rows;
  t.base_w = t.lane;
  return t;
}

/// The x tile layout: compile-time for the unrolled variants (kJ0 = 1, 2), so that every shared
/// memory offset in the tap loop is an immediate; read from the geometry for the generic one.
template <int kJ0>
struct x_layout {
  static constexpr int x_tile_d = k_tile_qd + kJ0 - 1;
  static constexpr int x_tile_h = k_tile_qh + kJ0 - 1;
  static constexpr int x_tile_w = k_tile_qw + kJ0 - 1;
  static constexpr int plane = x_tile_h * x_tile_w;
  static constexpr int ci = x_tile_d * plane;
  static constexpr int j0 = kJ0;
  FB_HOST_DEVICE explicit x_layout(const geometry&) {}
};

template <>
struct x_layout<0> {
  int x_tile_d, x_tile_h, x_tile_w, plane, ci, j0;
  FB_HOST_DEVICE explicit x_layout(const geometry& g)
      : x_tile_d(g.x_tile_d),
        x_tile_h(g.x_tile_h),
        x_tile_w(g.x_tile_w),
        plane(g.x_plane),
        ci(g.x_ci),
        j0(static_cast<int>(g.j0)) {}
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
/// block tile (the constants at the top of this file). policy_bytes: shared memory the caller's
/// block program adds after the conv regions (the largest over its passes, so that every pass uses the same channel chunk and thus
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
  g.x_tile_d = static_cast<int>(k_tile_qd + g.j0 - 1);
  g.x_tile_h = static_cast<int>(k_tile_qh + g.j0 - 1);
  g.x_tile_w = static_cast<int>(k_tile_qw + g.j0 - 1);
  g.x_plane = g.x_tile_h * g.x_tile_w;
  g.x_ci = g.x_tile_d * g.x_plane;
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

}  // namespace fb::fused::conv3d::simt_fp32
