#pragma once
/// Device discovery for tests and the harness, without CUDA headers.

namespace fb::fused {

/// Number of CUDA devices usable by this process; 0 (never throws) when there is no driver, no GPU,
/// or the driver is too old for the runtime. Defined in fusebench_fused_cuda only.
int cuda_device_count() noexcept;

}  // namespace fb::fused
