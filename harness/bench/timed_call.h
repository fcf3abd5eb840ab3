#pragma once
/// One timed call on a device, the device's roofline calibration, and the Google Benchmark driver
/// that turns timed calls into samples (SPEC §3). CUDA: L2 flushed, then events on torch's current
/// stream around the call. CPU: a steady clock around the call. Torch-free.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/bench/repetition_policy.h"
#include "harness/model/model_entry.h"

namespace fb::bench {

/// Times calls on one device. Make one per run: on CUDA it owns the L2 flush buffer (>= 2x L2, with
/// the persisting-L2 limit set to 0) and the event pair.
class call_timer {
 public:
  /// Throws std::runtime_error for cuda when this build has no CUDA timing blocks or no GPU is visible.
  explicit call_timer(device_kind device);
  ~call_timer();
  call_timer(const call_timer&) = delete;
  call_timer& operator=(const call_timer&) = delete;

  /// One cold repetition of `call` [seconds]. CUDA: flush L2, record start, call, record stop on
  /// torch's current stream, wait for stop; the time between the events. CPU: wall time of `call`.
  /// REQUIRES: `call` enqueues its work on torch's current stream (CUDA).
  [[nodiscard]] double time_once(const std::function<void()>& call);

  /// Where it times.
  [[nodiscard]] device_kind get_device() const { return m_device; }

 private:
  struct cuda_parts;
  device_kind m_device;
  std::unique_ptr<cuda_parts> m_cuda;  // null on the CPU
};

/// What no implementation can beat on a device: the inputs of the roofline floor.
struct device_calibration {
  double bandwidth = 0.0;       ///< the floor's: the larger of copy_bandwidth and read_bandwidth [bytes/s]
  double fp32_peak = 0.0;  ///< FP32 arithmetic [FLOP/s]
  double fp64_mma_peak = 0.0;   ///< fp64 MMA on the GPU's tensor cores; fp64 FMA on the CPU [FLOP/s]
  double copy_bandwidth = 0.0;  ///< device-to-device copy, read + written [bytes/s]
  double read_bandwidth = 0.0;  ///< read only (CUDA; equal to copy_bandwidth on the CPU) [bytes/s]
};

/// Measures the device once, at the start of a run. CUDA: a 2 x 1 GiB device copy, a 1 GiB read and
/// calibrated FMA and fp64 MMA kernels (device_timing.h); the floor's bandwidth is the larger of copy
/// and read. CPU: a cache-resident memcpy and FMA-like loops (fp32, fp64), each times the
/// hardware threads, i.e. deliberately generous (a low floor): CPU runs are a smoke test of the flow,
/// and a floor is only useful if no correct implementation can beat it.
[[nodiscard]] device_calibration calibrate(device_kind device);

/// Outcome of collect_samples.
struct sample_run {
  std::vector<double> samples;  ///< one per Google Benchmark iteration [seconds]
  double wall_seconds = 0.0;    ///< wall time spent sampling, flushes and waits included [seconds]
  int gbench_runs = 0;          ///< batches Google Benchmark ran [count]
};

/// Runs `one_sample(i)` (the i-th timed repetition, returning its time [seconds]) as a Google
/// Benchmark with manual time, one iteration per repetition, in batches: after each batch `policy`
/// decides, on the samples and the wall time so far, whether to go on. Google Benchmark's own
/// stopping rule (a minimum time) cannot express "until the relative standard error is < 1%", so
/// each batch fixes its iteration count and the policy sits between batches.
/// An exception thrown by `one_sample` ends the sampling and is rethrown as it is (same type).
[[nodiscard]] sample_run collect_samples(const std::string& name, const repetition_policy& policy,
                                         const std::function<double(std::size_t index)>& one_sample);

}  // namespace fb::bench
