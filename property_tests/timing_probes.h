#pragma once
/// Device-side probes for the self-test's --bench mode (torch-free, CUDA runtime only): they split a
/// measured time into launch/issue overhead, the pure read of the input, and the kernel's own work.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace fb::probes {

/// Keeps the stream busy for `microseconds` (a spin on the global timer): enqueued before a start
/// event, it lets the host issue everything that follows before the GPU reaches it, so the events
/// then bracket device execution only, without host launch gaps (nvbench's "blocking kernel" idea).
void spin(cudaStream_t stream, double microseconds);

/// An empty kernel: the floor of one launch.
void empty_kernel(cudaStream_t stream);

/// Reads n floats of x with 16-byte loads and a full-chip grid, writing one float per block to sink
/// (sink: at least read_sink_floats() floats): the practical read roofline for x.
void read_only(const float* x, int64_t n, float* sink, cudaStream_t stream);
[[nodiscard]] int64_t read_sink_floats();

}  // namespace fb::probes
