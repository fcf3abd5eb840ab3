// The pass kernels of convt3d_bn_sub (fused/convt3d_bn_sub.cu) and their launches. Each (J0, pass)
// pair is instantiated in its own translation unit (fused/convt3d_bn_sub_pass_j<J0>_<pass>.cu) so
// that a many-core build compiles them in parallel: in one file (with the twelve pass kernels) nvcc
// took 270-610 s on this 2-core machine (ninja log), and a fresh GPU-gate build on the 16-core GPU
// host ran out of its 240 s box twice with it among the steps left (2026-11-23). Splitting changes
// no code: the same templates, instantiated elsewhere.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <utility>

#include "fused/common/convt3d_bn_sub_plan.h"
#include "fused/common/cuda_check.h"

namespace fb::fused::convt3d_bn_sub::detail {

/// The GPU executor of a block program: this thread runs its share, barriers are __syncthreads.
struct device_exec {
  struct state {
    tile::acc_tile acc, part;
  };
  state st;
  template <class F>
  FB_HOST_DEVICE void threads(F&& f) {
#if defined(__CUDA_ARCH__)
    f(static_cast<int>(threadIdx.x), st);
#endif
  }
  FB_HOST_DEVICE void sync() {
#if defined(__CUDA_ARCH__)
    __syncthreads();
#endif
  }
};

// Two blocks per SM: 64 accumulators + weights + x window fit the 128 registers this allows, and
// the statistics pass's ~106 KB of shared memory fits twice into the SM's 228 KB.
template <int kJ0, bool kChunked, bool kStats>
__global__ void __launch_bounds__(tile::k_threads, 2) pass_kernel(const __grid_constant__ plan pl,
                                                                  const __grid_constant__ args a) {
  extern __shared__ float4 smem4[];
  device_exec ex;
  pass_block<kJ0, kChunked, kStats>(ex, pl, a, blockIdx.x, reinterpret_cast<float*>(smem4));
}

/// Lets `kernel` use up to tile::k_smem_max_bytes of dynamic shared memory on the current device;
/// set once per (device, kernel) so that later calls (also inside a graph capture) make no
/// attribute call. The limit does not change occupancy: that follows each launch's actual bytes.
inline void allow_large_smem(const void* kernel) {
  static std::mutex mutex;
  static std::set<std::pair<int, const void*>> done;
  int dev = 0;
  FB_CUDA_CHECK(cudaGetDevice(&dev));
  const std::lock_guard<std::mutex> lock(mutex);
  if (!done.insert({dev, kernel}).second) return;
  FB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(tile::k_smem_max_bytes)));
}

/// Pass kStats (statistics or writing) of the variant with J0 = kJ0 (0: the generic tap loop),
/// with one input-channel chunk or several as the plan says.
template <int kJ0, bool kStats>
void launch_pass_variant(const plan& pl, const args& a, cudaStream_t stream) {
  const std::size_t smem = kStats ? pl.smem_stats_bytes : pl.smem_write_bytes;
  const auto blocks = static_cast<unsigned>(pl.g.n_blocks);
  auto go = [&](auto kernel) {
    allow_large_smem(reinterpret_cast<const void*>(kernel));
    kernel<<<blocks, tile::k_threads, smem, stream>>>(pl, a);
    FB_CUDA_CHECK(cudaGetLastError());
  };
  if (pl.g.n_ci_chunks > 1)
    go(pass_kernel<kJ0, true, kStats>);
  else
    go(pass_kernel<kJ0, false, kStats>);
}

// Instantiated in fused/convt3d_bn_sub_pass_j<J0>_<pass>.cu only.
extern template void launch_pass_variant<0, true>(const plan&, const args&, cudaStream_t);
extern template void launch_pass_variant<0, false>(const plan&, const args&, cudaStream_t);
extern template void launch_pass_variant<1, true>(const plan&, const args&, cudaStream_t);
extern template void launch_pass_variant<1, false>(const plan&, const args&, cudaStream_t);
extern template void launch_pass_variant<2, true>(const plan&, const args&, cudaStream_t);
extern template void launch_pass_variant<2, false>(const plan&, const args&, cudaStream_t);

}  // namespace fb::fused::convt3d_bn_sub::detail
