#pragma once
/// The GPU side of the block programs in fused/common/ (nvcc only): the executor that runs a block
/// program as one CUDA block (this thread runs its share, ex.sync() is __syncthreads; the host
/// executor is convt3d_tile.cuh's host_exec), and the one-time opt-in to large dynamic shared memory.
#if !defined(__CUDACC__)
#error "fused/common/device_exec.cuh is CUDA-only"
#endif
#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>
#include <set>
#include <utility>

#include "fused/common/convt3d_tile.cuh"
#include "fused/common/cuda_check.h"

namespace fb::fused::device {

/// The GPU executor of a block program: this thread runs its share, barriers are __syncthreads.
struct device_exec {
  struct state {
    convt3d_tile::acc_tile acc, part, comp;  // comp: only conv_tile_block<..., kComp = true> uses it
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

/// Lets `kernel` use up to `bytes` of dynamic shared memory on the current device; set once per
/// (device, kernel) so that later calls (also inside a graph capture) make no attribute call. The
/// limit does not change occupancy: that follows each launch's actual bytes.
inline void allow_large_smem(const void* kernel, std::size_t bytes) {
  static std::mutex mutex;
  static std::set<std::pair<int, const void*>> done;
  int dev = 0;
  FB_CUDA_CHECK(cudaGetDevice(&dev));
  const std::lock_guard<std::mutex> lock(mutex);
  if (!done.insert({dev, kernel}).second) return;
  FB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

}  // namespace fb::fused::device
