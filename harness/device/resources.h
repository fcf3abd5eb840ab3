#pragma once
/// What a case needs in memory and what a device has, so that `bench` (and `verify`) can refuse or
/// skip a case before allocating it instead of dying in the allocator halfway through a run.
#include "harness/model/model_entry.h"

namespace fb {

/// Share of available_bytes a case may plan to use: torch's allocator rounds up and fragments, and
/// cuDNN takes workspaces that the estimate does not count.
inline constexpr double usable_memory_fraction = 0.85;

/// Bytes a case of `config` needs at once on its device, an estimate from the model's shapes [bytes]:
/// `input_sets` rotated fp32 inputs and one output per set (bench keeps the output of every set to
/// check it after timing), the fp32 reference's footprint (input, output and ~3 conv-output-sized
/// temporaries), with `with_fp64` the fp64 reference's footprint beside it (verification holds both),
/// the largest workspace of the model's fused implementations, and the parameters (one weight per set,
/// an fp64 copy with `with_fp64`).
[[nodiscard]] double case_bytes_estimate(const model_entry& model, const parsed_config& config, int input_sets,
                                         bool with_fp64);

/// Memory a case can use on `device` now [bytes]; 0 when it cannot be told. CPU: MemAvailable of
/// /proc/meminfo. CUDA: free device memory after releasing the blocks torch's allocator caches
/// (cached blocks look used to the driver).
[[nodiscard]] double available_bytes(device_kind device);

/// Bytes in GiB, for messages [GiB].
[[nodiscard]] inline double to_gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

}  // namespace fb
