#include "fused/runtime/cuda_check.h"
#include <algorithm>
#include <mutex>
#include <map>
#include <tuple>
#include <cuda_runtime_api.h>

#include "fused/runtime/device_info.h"

namespace fb::fused {

int cuda_device_count() noexcept {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // clear the (non-sticky) error so later calls start clean
    return 0;
  }
  return n;
}

}  // namespace fb::fused

namespace fb::fused {

long long resident_blocks(const void* kernel, int block_threads, std::size_t dynamic_smem_bytes) {
  static std::mutex mutex;
  static std::map<std::tuple<int, const void*, int, std::size_t>, long long> cache;
  int dev = 0;
  FB_CUDA_CHECK(cudaGetDevice(&dev));
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(dev, kernel, block_threads, dynamic_smem_bytes);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  int sms = 0, per_sm = 0;
  FB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  FB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_threads, dynamic_smem_bytes));
  const long long blocks = static_cast<long long>(std::max(sms, 1)) * std::max(per_sm, 1);
  cache.emplace(key, blocks);
  return blocks;
}

}  // namespace fb::fused
