#pragma once
/// The GPU side of launching block programs (nvcc only): the one-time opt-in to large dynamic
/// shared memory and programmatic dependent launches. The executor that runs a block program as one
/// CUDA block is fused/exec/block_program.cuh's device_executor (included here).
#if !defined(__CUDACC__)
#error "fused/exec/device_exec.cuh is CUDA-only"
#endif
#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>
#include <set>
#include <utility>

#include "fused/exec/block_program.cuh"
#include "fused/runtime/cuda_check.h"

namespace fb::fused::device {

/// Lets `kernel` use up to `bytes` of dynamic shared memory on the current device; set once per
/// (device, kernel) so that later calls (also inside a graph capture) make no attribute call. The
/// limit does not change occupancy: that follows each launch's actual bytes. So `bytes` must be
/// the most any launch of `kernel` can ask for (every caller passes its kernel's maximum, e.g.
/// k_smem_max_bytes): a later call with more bytes does not raise the first call's limit.
inline void allow_large_smem(const void* kernel, std::size_t bytes) {
  static std::mutex mutex;
  static std::set<std::pair<int, const void*>> done;
  int dev = 0;
  FB_CUDA_CHECK(cudaGetDevice(&dev));
  const std::lock_guard<std::mutex> lock(mutex);
  if (!done.insert({dev, kernel}).second) return;
  FB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

/// Launches kernel<<<grid, block, smem, stream>>>(args...) as a programmatic dependent of the
/// kernel before it on the stream (fused/arch/pdl.cuh): its blocks may become resident and run up
/// to their arch::wait_for_preceding_launch() while that kernel finishes.
template <class... Params, class... Args>
void launch_dependent(void (*kernel)(Params...), unsigned grid, unsigned block, std::size_t smem,
                      cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(block);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  FB_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

}  // namespace fb::fused::device
