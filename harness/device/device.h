#pragma once
/// The harness's view of devices: what exists, torch's current CUDA stream, synchronisation.
/// With a CPU-only libtorch (CI) CUDA is simply unavailable; nothing here fails to compile.
#include <string>

#include "fused/runtime/stream.h"
#include "harness/model/model_entry.h"

namespace fb {

/// True when libtorch was built with CUDA and sees at least one GPU.
[[nodiscard]] bool cuda_available();
/// The best device present: cuda if available, else cpu.
[[nodiscard]] device_kind best_device();
/// Parses "cpu" / "cuda"; throws std::invalid_argument otherwise.
[[nodiscard]] device_kind device_from_string(const std::string& s);
/// Torch's current CUDA stream, as the raw stream fused kernels take. REQUIRES: cuda_available().
[[nodiscard]] fused::stream_t current_cuda_stream();
/// Waits for all work on `device` (no-op on the CPU).
void synchronize(device_kind device);

/// Gives libtorch's cached, unused GPU memory back to the driver (a no-op without CUDA): a process
/// that shares its GPU with others then holds only what its current case uses.
void release_cached_device_memory();
/// One line naming the GPU, or "cpu".
[[nodiscard]] std::string device_name(device_kind device);
/// GPUs this process sees (after CUDA_VISIBLE_DEVICES) [count]; 0 with a CPU-only libtorch or no GPU.
/// Asks the driver for the count only: no CUDA context is created.
[[nodiscard]] int cuda_device_count();
/// The name of GPU `index` of this process's view; "" when it cannot be read.
[[nodiscard]] std::string cuda_device_name(int index);
/// The case with its input and parameters as contiguous tensors on `device` (the config is shared).
/// The one place a case moves between devices: verification, the references and bench all use it.
[[nodiscard]] model_case on_device(const model_case& c, device_kind device);

}  // namespace fb
