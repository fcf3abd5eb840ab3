#include <cuda_runtime_api.h>

#include "fused/common/device_info.h"

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
