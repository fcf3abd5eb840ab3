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
/// The block program (conv_tile_block) is written against a block executor
/// (fused/exec/block_program.cuh) whose threads carry thread_state (simt_fp32_epilogue.cuh): on the
/// GPU `threads(f)` is f(threadIdx.x, this thread's registers) and `sync()` is __syncthreads(); the
/// host executor runs f for every thread of the block in turn and `sync()` does nothing. So the
/// host executes the kernel's own tiling, indexing, staging and FMA order, and gets bitwise the
/// same sums. The model's epilogue policy is the interface of simt_fp32_epilogue.cuh.
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
#include <cstddef>
#include <cstdint>

#include "fused/conv3d/simt_fp32_epilogue.cuh"
#include "fused/conv3d/simt_fp32_geometry.cuh"
#include "fused/conv3d/simt_fp32_mainloop.cuh"
#include "fused/conv3d/simt_fp32_outputs.cuh"
#include "fused/conv3d/simt_fp32_staging.cuh"
#include "fused/exec/block_program.cuh"

namespace fb::fused::conv3d::simt_fp32 {

// ---------------------------------------------------------------------------------------------
// The block programs and their executors: a block executor (fused/exec/block_program.cuh) whose
// threads carry thread_state (the acc and part tiles).
// ---------------------------------------------------------------------------------------------

/// The host executor of the tile's block programs; kThreads: the block's threads (k_threads; a
/// launch with other blocks, e.g. #15's prep, says so).
template <int kThreads = k_threads>
using host_exec_n = exec::host_executor<kThreads, thread_state>;
using host_exec = host_exec_n<>;
#if defined(__CUDACC__)
/// The GPU executor of the tile's block programs.
using device_exec = exec::device_executor<thread_state>;
#endif

/// Arranges the weights W[ci][co][td][th][tw] for channel block `block / n_phases` and phase
/// `block % n_phases` into wt (layout in the file comment), zero beyond c_out. n_threads: the
/// block's threads.
template <class Exec>
FB_HOST_DEVICE void arrange_weights_block(Exec& ex, const geometry& g, const float* weight, float* wt, int64_t block,
                                          int n_threads = k_threads) {
  static_assert(exec::is_block_executor_v<Exec>, "arrange_weights_block runs on a block executor");
  const int64_t cob = block / g.n_phases, ph = block % g.n_phases;
  const phase_pos pp = phase_of(g, ph);
  if (pp.taps == 0) return;
  float* dst = wt + cob * g.wt_co_block_floats + phase_weight_offset(g, ph);
  const int64_t k = g.dim[0].k, s = g.dim[0].s;
  const int64_t n = g.c_in * pp.taps * k_co_block;
  ex.threads([&](int tid) {
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
/// Policy: an epilogue policy (simt_fp32_epilogue.cuh: prologue, phase_begin, epilogue, phase_end,
/// finish), its region the shared memory after the conv regions. centre: as for stage_x (null: x
/// as it is).
template <int kJ0, bool kChunked, class Exec, class Policy>
FB_HOST_DEVICE void conv_tile_block(Exec& ex, const geometry& g, const float* x, const float* centre, const float* wt,
                                    int64_t block, float* smem, const Policy& policy) {
  static_assert(exec::is_block_executor_v<Exec, thread_state>,
                "conv_tile_block runs on a block executor whose threads carry conv3d::simt_fp32::thread_state");
  static_assert(is_simt_epilogue_policy_v<Policy, Exec>,
                "conv_tile_block's Policy must be an epilogue policy (fused/conv3d/simt_fp32_epilogue.cuh)");
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
    ex.threads([&](int tid) {
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
      ex.threads([&](int tid) {
        if (!prefetch) {
          if (kChunked) stage_x<kJ0>(g, bp, cc, tid, x, centre, xs);
          if (pp.taps > 0) stage_w(g, bp, pp, phase_offset, cc, tid, wt, ws);
          if (cc == 0) policy.phase_begin(tid, bp, pp, region);
        }
        arch::cp_async_wait_all();
      });
      ex.sync();
      if (prefetch && ph + 1 < static_cast<int>(g.n_phases))
        ex.threads([&](int tid) {
          if (next.taps > 0) stage_w(g, bp, next, phase_offset + pp.taps * g.c_in * k_co_block, 0, tid, wt,
                                     weights_of(ph + 1));
        });
      // A thread whose phase has no output (past the output's edge, or only padded channels)
      // skips the tap loop: its accumulators are never used. Whole warps skip at the tile edges.
      // The partial sum carries over between chunks only in the chunked path (one chunk: every
      // group ends inside the call, so part is a temporary of the tap loop).
      ex.threads([&](int tid, typename Exec::thread_state& st) {
        const thread_pos t = thread_of(tid);
        if (!has_outputs(g, bp, pp, t)) return;
        acc_tile local;
        accumulate<kJ0>(g, pp, cc, t, xs, ws, st.acc, kChunked ? st.part : local);
      });
      if (!prefetch) ex.sync();  // with one buffer the next stage overwrites the weights (and x when chunked)
    }
    ex.threads([&](int tid, typename Exec::thread_state& st) {
      policy.epilogue(tid, st, bp, pp, outputs_of(g, bp, pp, thread_of(tid)), region);
    });
    if (prefetch && ph + 1 < static_cast<int>(g.n_phases))
      ex.threads([&](int tid) { policy.phase_begin(tid, bp, next, region); });
    policy.phase_end(ex, bp, pp, region);
    phase_offset += pp.taps * g.c_in * k_co_block;
  }
  policy.finish(ex, bp, region);
}

}  // namespace fb::fused::conv3d::simt_fp32
