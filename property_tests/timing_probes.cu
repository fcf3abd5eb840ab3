#include "property_tests/timing_probes.h"

#include <cuda_runtime.h>

#include "fused/runtime/cuda_check.h"

namespace fb::probes {
namespace {

__global__ void empty() {}

}  // namespace

void empty_kernel(cudaStream_t stream) {
  empty<<<1, 32, 0, stream>>>();
  FB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace fb::probes
