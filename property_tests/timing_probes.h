#pragma once
/// A device-side probe for the self-test's --bench mode (torch-free, CUDA runtime only): the time
/// of one launch, to set a kernel's measured time against.
#include <cuda_runtime_api.h>

namespace fb::probes {

/// An empty kernel: the floor of one launch.
void empty_kernel(cudaStream_t stream);

}  // namespace fb::probes
