// CUDA path of convt3d_scale_bn_gap (KernelBench #77): five launches, each kernel one block program
// of fused/common/convt3d_scale_bn_gap_programs.cuh run by a device executor (the host executor runs
// the same programs; see that header for what each computes).
//
// Why this shape (default config, B 16, C 64 -> 128, 16x32x32, k 5, n' = 20x36x36):
//   - The batch variance needs sum (y - ybar)^2, which does not factor through input sums; a direct
//     convolution is 2.7e11 MAC. By Parseval it is (1/N') sum_{f != 0} |Z(f)|^2 with
//     Z = sum_ci X W per frequency: a complex (B x C_in) (C_in x C_out) product for each of the
//     ~13,700 half-spectrum frequencies, 1.4e10 FLOP.
//   - W(f) for all (ci, c) would be 896 MB: never stored. The prep kernel stores only the weights'
//     depth transform H1 (18 MB, L2-resident while a depth plane's groups run); the gemm block forms
//     the height transform G for its <= 2 row pairs in shared memory per input-channel chunk, and
//     each thread finishes the width transform for its own frequency in registers, computing the
//     frequency and its mirror from the same four products (row and conjugate row). W-generation
//     then costs ~25% of the GEMM's FLOPs instead of ~50%.
//   - Each W value serves the whole batch tile (16 samples), each staged X value all 32 channels of
//     the block (broadcast shared-memory loads); accumulators (2 rows x 16 samples complex = 64
//     floats) stay in registers for all C_in; only w_f |Z|^2 per (b, c) leaves the block (fp64),
//     reduced later in a fixed order (no atomics: bitwise deterministic).
//   - The input spectrum X (112 MB) is written once and read ~once from DRAM (the 4 channel tiles of
//     a group run side by side and share it through L2).
// Eval mode needs no variance: prep computes Wsum, x only the sums S, then reduce and finish.
//
// Expected cost at the default config (ESTIMATES from instruction counts, not yet measured; the
// floor in harness/models/convt3d_scale_bn_gap.cpp is 2.13e10 useful FLOP = 0.32 ms at 67 TFLOP/s):
//   gemm: 3440 blocks of 8 warps, 2 resident per SM (127 registers, 37 KB shared). Per thread and
//     8-channel chunk: main ~1600 instructions (1024 of them the spectral product's FFMA), G stage
//     ~300-600 (1 or 2 row pairs), X staging ~200: ~45% useful FFMA issue -> ~0.55 ms. L2 traffic
//     ~1.5-2 GB (H1 for G, X once per channel tile), under the compute time if overlapped.
//   x: 3072 blocks (3 fw chunks of 8, 8, 3 columns), ~4800 instructions per thread -> ~0.13 ms;
//     DRAM: x 67 MB (re-read per chunk from L2) + X 112 MB written, ~60 us, overlapped.
//   prep, reduce, finish: ~10 us each or less.  Total ~0.7 ms if issue-bound with latency hidden;
//   0.75-1.0 ms expected.
#include <cuda_runtime.h>

#include <mutex>
#include <set>
#include <utility>

#include "fused/common/convt3d_scale_bn_gap_plan.h"
#include "fused/common/convt3d_scale_bn_gap_programs.cuh"
#include "fused/common/cuda_check.h"
#include "fused/convt3d_scale_bn_gap.h"

namespace fb::fused::convt3d_scale_bn_gap {
namespace {

using namespace detail;

/// The device executor: the calling thread runs each phase with its own register state.
template <class State>
struct device_exec {
  State st;
  template <class F>
  __device__ __forceinline__ void each_thread(F&& f) {
    f(static_cast<int>(threadIdx.x), st);
  }
  __device__ __forceinline__ void sync() { __syncthreads(); }
};

__global__ void __launch_bounds__(k_threads) prep_kernel(const params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  device_exec<no_state> ex;
  prep_program(ex, p, blockIdx.x, smem);
}

template <bool kDft>
__global__ void __launch_bounds__(k_threads, 2) x_kernel(const params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  device_exec<x_state> ex;
  x_program(ex, p, blockIdx.x, smem, kDft);
}

template <int TB>
__global__ void __launch_bounds__(k_threads, 2) gemm_kernel(const params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  device_exec<gemm_state<TB>> ex;
  gemm_program<TB>(ex, p, blockIdx.x, smem);
}

__global__ void __launch_bounds__(k_threads) gspec_kernel(const params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  device_exec<no_state> ex;
  gspec_program(ex, p, blockIdx.x, smem);
}

__global__ void __launch_bounds__(k_threads) reduce_kernel(const params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  device_exec<no_state> ex;
  reduce_program(ex, p, blockIdx.x, smem);
}

__global__ void __launch_bounds__(k_threads) finish_kernel(const params p) {
  device_exec<no_state> ex;
  finish_program(ex, p, blockIdx.x);
}

/// Lets `kernel` use more than 48 KB of dynamic shared memory on the current device (once per
/// device and kernel: the attribute is a property of the binary, and setting it on every call would
/// put a driver call into the timed region).
void allow_smem(const void* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return;
  int dev = 0;
  FB_CUDA_CHECK(cudaGetDevice(&dev));
  static std::mutex mu;
  static std::set<std::pair<int, const void*>> done;
  std::lock_guard<std::mutex> lock(mu);
  if (done.count({dev, kernel}) != 0) return;
  FB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(k_smem_max)));
  done.insert({dev, kernel});
}

template <class Kernel>
void launch(Kernel kernel, int64_t blocks, std::size_t smem, cudaStream_t stream, const params& p) {
  if (blocks <= 0) return;
  fb::fused::detail::require(blocks < (int64_t{1} << 31), "convt3d_scale_bn_gap::run_cuda", "grid",
                             "too many blocks (must be < 2^31)", blocks);
  allow_smem(reinterpret_cast<const void*>(kernel), smem);
  kernel<<<static_cast<unsigned>(blocks), k_threads, smem, stream>>>(p);
  FB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void run_cuda(const problem& prob, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* running_mean, float* running_var, int64_t* num_batches_tracked, float* out,
              void* workspace, stream_t stream) {
  const plan pl = make_plan(prob);
  const params p = bind(pl, x, weight, conv_bias, gamma, beta, running_mean, running_var, num_batches_tracked, out,
                        workspace);
  launch(prep_kernel, prep_blocks(p), prep_smem(p), stream, p);
  if (p.training) launch(gspec_kernel, gspec_blocks(p), gspec_smem(p), stream, p);
  if (p.training)
    launch(x_kernel<true>, x_blocks(p, true), pl.x_smem, stream, p);
  else
    launch(x_kernel<false>, x_blocks(p, false), pl.x_smem, stream, p);
  if (p.training) {
    switch (p.tb) {
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
