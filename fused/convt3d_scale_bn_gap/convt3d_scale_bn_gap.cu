// CUDA path of convt3d_scale_bn_gap (KernelBench #77): six launches, each kernel one block program
// of fused/convt3d_scale_bn_gap/programs.cuh run by a device executor (the host executor runs
// the same programs; see that header for what each computes). Every launch after prep is a
// programmatic dependent of the one before (fused/arch/pdl.cuh), so the next grid is set up while
// the previous one's last blocks run: measured -8 us for the five boundaries (2026-11-29, H200).
//
// Why this shape (default config, B 16, C 64 -> 128, 16x32x32, k 5, n' = 20x36x36):
//   - The batch variance needs sum (y - ybar)^2, which does not factor through input sums; a direct
//     convolution is 2.7e11 MAC. By Parseval it is (1/N') sum_{f != 0} |Z(f)|^2 with
//     Z = sum_ci X W per frequency: a complex (B x C_in) (C_in x C_out) product for each of the
//     ~13,700 half-spectrum frequencies, 1.4e10 FLOP.
//   - W(f) for all (ci, c) would be 896 MB: never stored. prep stores the weights' depth transform
//     H1 (18 MB), gspec their height transform G for every row pair (119 MB, written once); the
//     gemm block copies the G rows of its <= 2 row pairs per input-channel chunk, and each thread
//     finishes the width transform for its own frequency in registers, computing the frequency and
//     its mirror from the same four products (row and conjugate row).
//   - Each W value serves the whole batch tile (16 samples), each staged X value all 32 channels of
//     the block (broadcast shared-memory loads); accumulators (2 rows x 16 samples complex = 64
//     floats) stay in registers for all C_in; only w_f |Z|^2 per (b, c) leaves the block (fp64),
//     reduced later in a fixed order (no atomics: bitwise deterministic).
//   - The input spectrum X (112 MB) is written once and read ~once from DRAM (the 4 channel tiles of
//     a group run side by side and share it through L2).
// Eval mode needs no variance: prep computes Wsum, x only the sums S, then reduce and finish.
//
// Cost at the default config. Floor (harness/models/convt3d_scale_bn_gap.cpp): 2.13e10 useful FLOP
// = 0.32 ms at 67 TFLOP/s. Measured before this revision on an H100 80GB HBM3 (Nsight Compute,
// clock control none): 2.07 ms in all. The analysis (no GPU at hand: PTX, ptxas -v, counts per
// warp; shared memory returns 128 B = 1 wavefront per clock per SM, a uniform LDS.128 costs 2,
// a conflict-free per-lane LDS.128 4, LDS.64 1 uniform / 2 per-lane; 4 warp-instructions issue per
// clock per SM) and what changed, with PREDICTED times (not yet measured; SM clock taken as 1.75 GHz):
//
//   kernel  before   found                                            change                                 predicted
//   prep     55 us   each H1 thread re-read its k taps (32 lines per  taps read once into registers          15-20 us
//                    warp load) for all 11 fd: L1/L2 busy, SM idle
//   gspec       -    (new) G once per row pair; DRAM-write bound      119 MB written, ~2.7 TB/s              45-50 us
//   x       547 us   d-stage read Th rows 64 B apart: 16 wavefronts   Th rows js+2 apart, Tw/Th planes       150-200 us
//                    per LDS.128 instead of 4 (7x over the smem        padded (conflict-free); register tiles
//                    budget); h-stage ~3 planes 2 KB apart per warp;   4 col x 3 fh / 4 col x 4 fd pairs with
//                    w-stage 8 broadcast twiddles per 16 FMA (1.5x);   broadcast twiddle matrices; 2 rows
//                    x staged with ~16 serial L2 round trips           per thread in the w-stage; cp.async
//   gemm   1451 us   stage phase: ~28 dependent L2 round trips per    X and G tiles by cp.async, double-     450-550 us
//                    8-channel chunk (~18K of ~25K cycles per chunk);  buffered (next chunk in flight);
//                    G formed in every block for every pair it        G from gspec (the stage loop's ~245
//                    touched (~4.75x redundant, ~80% of the product   instructions per combination gone);
//                    loop's issue slots once latency is hidden)        running pointers in the product loop
//   reduce   23 us   64 blocks, 4 loads in flight per thread          16 in flight (same order)              8-10 us
//   finish    9 us                                                    -                                      9 us
//   total  2.07 ms                                                                                          0.7-0.85 ms
//
// MEASURED after this revision (H100 80GB HBM3, same ncu settings; self-test bitwise equal to the
// host executor, memcheck/racecheck/synccheck clean): prep 17.9 us, gspec 67.9, x 422.4, gemm 956.8,
// reduce 29.0, finish 9.3: 1.50 ms in all (selftest --bench, clean L2: 1510 us). prep met its
// prediction; x (2.5x over) and gemm (~2x over) did not: the gemm runs at 68% SM and 63% L1/TEX
// throughput, x at 41% SM and 51% L2, so both stay latency- or shared-memory-bound beyond what the
// wavefront counts above assumed. Not yet found why; the next step is ncu's warp-stall and
// shared-memory sections on these two kernels.
//
// gemm budget per warp and input channel: 128 product FFMA + 20 W-generation FFMA + 16 LDS.128 (X,
// uniform: 32 wavefronts) + 5+5 LDS.64 (G per lane, twiddles uniform: 15) + ~30 other = ~200 issued,
// plus ~34 for the copies; 1.76e6 warp-channel steps over 528 schedulers -> ~0.45 ms issue-bound, the
// shared-memory pipe at ~80% (47 wavefronts x 4 warps per 235 clocks). x per block (23 per SM):
// w-stage ~2.6K, h-stage ~3.6K, d-stage ~2K, tables/staging/sums ~2-3K SM clocks -> ~0.15 ms.
//
// MEASURED 2026-11-29 on an H200 (probes/k77_time, whole call, read-flushed L2; ncu with clock
// control none, source counters; reports/nvidia-h200/probe-2026-11-29-k77/): 1468 us at 22f1384.
// Why the budget above was missed: the gemm executed 389 warp instructions per channel step, not
// ~234. Its copies cost 225M of its 685M (index division and 64-bit products per 8-byte copy), and
// ptxas's unroll by 4 of the runtime tap loop recomputed the remainder for every channel. The x
// kernel's warps spent 28% of its samples at the barrier after x_tables, where a few threads per
// block computed fp64 roots and box spectra, in all 3072 blocks. Now: copies by fixed strides, one
// barrier per chunk, two channels per tap loop (gemm 951 -> 744 us, 459M instructions); each
// chunk's tables once in prep (x 408 -> 320 us): 1157 us, outputs and m2 bitwise unchanged. What
// bounds the gemm now: shared-memory latency (short scoreboard, 34% of its samples: the tap loop's
// loads and the X loads before the products) at 4 warps per scheduler; 57% of its instructions are
// FFMA. Tried and slower: all taps' loads first (127 registers, 1230 us), the tap loop
// software-pipelined (1169), a batch tile of 8 at 3 blocks per SM (1315), 32 loads in flight in
// reduce (1169). gspec (67 us) is compute-bound (SM 73%, DRAM 40%), not write-bound as predicted.
// Fifteenth session (same probe, side by side, outputs bitwise equal): gspec's (fh, th) twiddles from
// a per-block table instead of stepping th * fh mod H' per tap, 67.7 -> 40.2 us (50.9M -> 21.6M
// instructions); reduce in 8-channel tiles (256 blocks), 27 -> 14 us; the launches as programmatic
// dependents, -8 us: 1156 -> 1110 us. The gemm on the fp64 tensor cores was built and measured
// (reports/nvidia-h200/probe-2026-11-29-k77-dmma/): exact, but at best 745 us against this 730.
#include <cuda_runtime.h>

#include "fused/arch/pdl.cuh"
#include "fused/convt3d_scale_bn_gap/convt3d_scale_bn_gap.h"
#include "fused/convt3d_scale_bn_gap/plan.h"
#include "fused/convt3d_scale_bn_gap/programs.cuh"
#include "fused/exec/device_exec.cuh"  // and the device executor (fused/exec/block_program.cuh)
#include "fused/runtime/cuda_check.h"

namespace fb::fused::convt3d_scale_bn_gap {
namespace {

using namespace detail;

/// The device executor (fused/exec/block_program.cuh): the calling thread runs each phase with its
/// own register state.
template <class State>
using device_exec = fb::fused::exec::device_executor<State>;

__global__ void __launch_bounds__(k_threads) prep_kernel(const params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  device_exec<no_state> ex;
  prep_program(ex, p, blockIdx.x, smem);
}

template <bool kDft>
__global__ void __launch_bounds__(k_threads, 2) x_kernel(const params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  device_exec<x_state> ex;
  arch::wait_for_preceding_launch();  // a programmatic dependent of the kernel before it (run_cuda)
  x_program(ex, p, blockIdx.x, smem, kDft);
}

template <int TB>
__global__ void __launch_bounds__(k_threads, 2) gemm_kernel(const params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  device_exec<gemm_state<TB>> ex;
  arch::wait_for_preceding_launch();  // a programmatic dependent of the kernel before it (run_cuda)
  gemm_program<TB>(ex, p, blockIdx.x, smem);
}

__global__ void __launch_bounds__(k_threads) gspec_kernel(const params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  device_exec<no_state> ex;
  arch::wait_for_preceding_launch();  // a programmatic dependent of the kernel before it (run_cuda)
  gspec_program(ex, p, blockIdx.x, smem);
}

__global__ void __launch_bounds__(k_threads) reduce_kernel(const params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  device_exec<no_state> ex;
  arch::wait_for_preceding_launch();  // a programmatic dependent of the kernel before it (run_cuda)
  reduce_program(ex, p, blockIdx.x, smem);
}

__global__ void __launch_bounds__(k_threads) finish_kernel(const params p) {
  device_exec<no_state> ex;
  arch::wait_for_preceding_launch();  // a programmatic dependent of the kernel before it (run_cuda)
  finish_program(ex, p, blockIdx.x);
}

/// Launches kernel over `blocks` blocks; `dependent`: as a programmatic dependent of the kernel
/// before it on the stream (fused/arch/pdl.cuh), so that its launch overlaps that kernel's last
/// blocks. Every kernel after the first waits for its predecessor before reading anything, and none
/// lets its dependents start early, so each one's wait also covers every kernel before it.
template <class Kernel>
void launch(Kernel kernel, int64_t blocks, std::size_t smem, cudaStream_t stream, const params& p,
            bool dependent = true) {
  if (blocks <= 0) return;
  fb::fused::detail::require(blocks < (int64_t{1} << 31), "convt3d_scale_bn_gap::run_cuda", "grid",
                             "too many blocks (must be < 2^31)", blocks);
  // Every kernel may use up to k_smem_max (fused/exec/device_exec.cuh: once per device and kernel,
  // no driver call in later, timed calls); occupancy follows each launch's own bytes.
  fb::fused::device::allow_large_smem(reinterpret_cast<const void*>(kernel), k_smem_max);
  if (dependent) {
    fb::fused::device::launch_dependent(kernel, static_cast<unsigned>(blocks), k_threads, smem, stream, p);
  } else {
    kernel<<<static_cast<unsigned>(blocks), k_threads, smem, stream>>>(p);
    FB_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

void run_cuda(const problem& prob, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* running_mean, float* running_var, int64_t* num_batches_tracked, float* out,
              void* workspace, stream_t stream) {
  const plan pl = make_plan(prob);
  const params p = bind(pl, x, weight, conv_bias, gamma, beta, running_mean, running_var, num_batches_tracked, out,
                        workspace);
  launch(prep_kernel, prep_blocks(p), prep_smem(p), stream, p, /*dependent=*/false);
  if (p.training) launch(gspec_kernel, gspec_blocks(p), gspec_smem(p), stream, p);
  if (p.training)
    launch(x_kernel<true>, x_blocks(p, true), pl.x_smem, stream, p);
  else
    launch(x_kernel<false>, x_blocks(p, false), pl.x_smem, stream, p);
  if (p.training) {
    switch (p.batch_tile) {
      case 1: launch(gemm_kernel<1>, gemm_blocks(p), pl.gemm_smem, stream, p); break;
      case 2: launch(gemm_kernel<2>, gemm_blocks(p), pl.gemm_smem, stream, p); break;
      case 4: launch(gemm_kernel<4>, gemm_blocks(p), pl.gemm_smem, stream, p); break;
      case 8: launch(gemm_kernel<8>, gemm_blocks(p), pl.gemm_smem, stream, p); break;
      default: launch(gemm_kernel<16>, gemm_blocks(p), pl.gemm_smem, stream, p); break;
    }
  }
  launch(reduce_kernel, reduce_blocks(p), k_reduce_smem, stream, p);
  launch(finish_kernel, finish_blocks(p), 0, stream, p);
}

}  // namespace fb::fused::convt3d_scale_bn_gap
