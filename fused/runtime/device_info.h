#pragma once
/// Device discovery for tests and the harness, without CUDA headers.
#include <cstddef>

namespace fb::fused {

/// Number of CUDA devices usable by this process; 0 (never throws) when there is no driver, no GPU,
/// or the driver is too old for the runtime. Defined in fusebench_fused_cuda only.
int cuda_device_count() noexcept;

}  // namespace fb::fused

namespace fb::fused {
/// Blocks of `kernel` (launched with `block_threads` threads and `dynamic_smem_bytes` of dynamic
/// shared memory) that are resident at once on the current device: SM count x occupancy. Read from the device once per
/// (device, kernel) and then remembered: it is a property of the chip and the binary, not of any
/// parameter, and querying it on every call cost host time inside the timed region (~µs per query,
/// which showed in the 30 µs #44 timings). Thread-safe. Defined in fusebench_fused_cuda only.
long long resident_blocks(const void* kernel, int block_threads, std::size_t dynamic_smem_bytes = 0);
}  // namespace fb::fused
