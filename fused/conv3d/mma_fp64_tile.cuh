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
/// The model's epilogue policy (the interface of fused/conv3d/mma_fp64_epilogue.cuh) decides what
/// happens to the accumulators (`store`, per warp after the last chunk of a position pass) and
/// after the last w phase (`finish`, block-wide). A policy with `last_pass_into_x` set gets the
/// staged x's shared memory for the block's last pass (after a barrier: no warp reads x any more),
/// so its own region need not hold that pass's accumulators.
///
/// Executors: the block executors of fused/exec/block_program.cuh with the tile's warps
/// (mma_warps): mma_host_exec, and mma_device_exec for nvcc. `threads(f)` runs f(tid) for the
/// block's threads, `warps(f)` runs f(warp, W, warp_state) for its warps with W the warp context of
/// mma_f64.cuh (this lane on the GPU, all 32 on the host), `sync()` is the barrier. The same tiles
/// also run in resident blocks, tile after tile (conv_persistent, mma_fp64_persistent.cuh:
/// mma_host_tiles_exec and mma_persistent_exec derive from them and add the tile claims and the
/// inputs' prefetch).
#include <cstddef>
#include <cstdint>

#include "fused/conv3d/mma_fp64_epilogue.cuh"
#include "fused/conv3d/mma_fp64_geometry.cuh"
#include "fused/conv3d/mma_fp64_mainloop.cuh"
#include "fused/conv3d/mma_fp64_persistent.cuh"
#include "fused/exec/block_program.cuh"

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include "fused/arch/bulk_copy.cuh"
#endif

namespace fb::fused::conv3d::mma_fp64 {

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
        const int64_t steps = (cc * t_max + arch::mma::k_k - 1) / arch::mma::k_k;
        const std::size_t xb = static_cast<std::size_t>(cc) * g.x_ci_stride * sizeof(double);
        const std::size_t kb = static_cast<std::size_t>(steps) * arch::mma::k_k * sizeof(int);
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
          g.wt_floats = g.wt_items * arch::mma::k_b_regs;
          g.koff_ints = static_cast<int64_t>(g.n_phases) * g.n_chunks * g.steps_stride * arch::mma::k_k;
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
using mma_host_exec = exec::host_executor<k_threads, exec::no_state, mma_warps<arch::mma::host_warp>>;

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
using mma_device_exec = exec::device_executor<exec::no_state, mma_warps<arch::mma::device_lane>>;

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

}  // namespace fb::fused::conv3d::mma_fp64
