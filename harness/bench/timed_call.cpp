#include "harness/bench/timed_call.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "harness/bench/host_timing.h"
#include "harness/device/device.h"
#include "harness/stats/summary.h"

#if FUSEBENCH_BENCH_DEVICE
#include <cuda_runtime_api.h>

#include "harness/bench/device_timing.h"
#endif

namespace fb::bench {

#if FUSEBENCH_BENCH_DEVICE
struct call_timer::cuda_parts {
  l2_flusher flusher;
  cuda_timer timer;
};
#else
struct call_timer::cuda_parts {};
#endif

call_timer::call_timer(device_kind device) : m_device(device) {
  if (device == device_kind::cpu) return;
#if FUSEBENCH_BENCH_DEVICE
  if (!cuda_available()) throw std::runtime_error("call_timer: no CUDA device visible to libtorch");
  m_cuda = std::make_unique<cuda_parts>();
#else
  throw std::runtime_error("call_timer: this build has no CUDA timing blocks (nvcc was not found)");
#endif
}

call_timer::~call_timer() = default;

double call_timer::time_once(const std::function<void()>& call) {
#if FUSEBENCH_BENCH_DEVICE
  if (m_cuda) {
    const fused::stream_t stream = current_cuda_stream();
    // The flush is enqueued before the start event, so it is not timed but is finished when the
    // call starts: every repetition reads its inputs from DRAM.
    m_cuda->flusher.flush(stream);
    m_cuda->timer.start(stream);
    call();
    m_cuda->timer.stop(stream);
    return m_cuda->timer.get_elapsed();
  }
#endif
  host_timer timer;
  timer.start();
  call();
  timer.stop();
  return timer.get_elapsed();
}

namespace {

/// The best of several short measurements. A host floor must be unbeatable: on a loaded machine
/// (ctest -j 2 on 2 cores) the median rate was the contended one, a later uncontended case ran
/// faster than the floor it implied and was flagged IMPOSSIBLE (a flaky cli_bench_end_to_end).
double best_of(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }

double hardware_threads() { return static_cast<double>(std::max(1u, std::thread::hardware_concurrency())); }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// memcpy of 128 KiB (source and destination stay in L2), the fastest a core moves data, times the hardware threads.
double measure_host_bandwidth() {
  constexpr std::size_t bytes = std::size_t{128} << 10;
  std::vector<unsigned char> src(bytes, 1), dst(bytes, 0);
  volatile unsigned char sink = 0;
  std::vector<double> rates;
  for (int run = 0; run < 7; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    long reps = 0;
    do {  // ~2 ms per measurement: long against the clock's resolution, short for the run
      std::memcpy(dst.data(), src.data(), bytes);
      sink = sink + dst[static_cast<std::size_t>(reps) % bytes];  // keeps the copy observable
      src[static_cast<std::size_t>(reps) % bytes] ^= 1;
      ++reps;
    } while (seconds_since(t0) < 2e-3);
    rates.push_back(2.0 * static_cast<double>(bytes) * static_cast<double>(reps) / seconds_since(t0));
  }
  return best_of(rates) * hardware_threads();
}

/// Independent multiply-add chains of T (vectorised by the compiler), 2 FLOP each; kFma: as fused
/// multiply-adds (std::fma, one instruction where the caller's target has FMA).
template <class T, bool kFma>
double chain_rate() {
  constexpr int chains = 64;
  T acc[chains];
  volatile T vm = static_cast<T>(0.999999), va = static_cast<T>(1e-7);  // volatile: the compiler cannot fold the chains
  const T m = vm, a = va;
  for (int j = 0; j < chains; ++j) acc[j] = static_cast<T>(j);
  const auto run = [&](long iterations) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < iterations; ++i)
      for (int j = 0; j < chains; ++j) acc[j] = kFma ? std::fma(acc[j], m, a) : acc[j] * m + a;
    return seconds_since(t0);
  };
  long iterations = 1 << 12;
  while (run(iterations) < 2e-3 && iterations < (1L << 30)) iterations *= 4;
  std::vector<double> rates;
  for (int r = 0; r < 5; ++r) rates.push_back(2.0 * chains * static_cast<double>(iterations) / run(iterations));
  volatile T sink = 0;
  for (T x : acc) sink = sink + x;
  return best_of(rates);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The fused host executors run FMA clones of their loops on CPUs with FMA (one instruction per
// multiply-add, twice the portable rate), so the peak is measured the same way there.
__attribute__((target("avx2,fma"), flatten)) double fp32_chain_rate_fma() { return chain_rate<float, true>(); }
__attribute__((target("avx2,fma"), flatten)) double fp64_chain_rate_fma() { return chain_rate<double, true>(); }
#endif

/// The best fp32 multiply-add rate of one core (with FMA where the CPU has it), times the hardware threads.
double measure_host_fp32_peak() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return fp32_chain_rate_fma() * hardware_threads();
#endif
  return chain_rate<float, false>() * hardware_threads();
}

/// The same in fp64: the host executors' emulated fp64 MMA is fp64 FMAs.
double measure_host_fp64_peak() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return fp64_chain_rate_fma() * hardware_threads();
#endif
  return chain_rate<double, false>() * hardware_threads();
}

/// Swallows Google Benchmark's console output (the progress line is ours) and keeps what it measured,
/// to check that it saw exactly the samples we record.
class sample_reporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      m_iterations += static_cast<std::int64_t>(r.iterations);
      m_manual_seconds += r.real_accumulated_time;
    }
  }
  [[nodiscard]] std::int64_t get_iterations() const { return m_iterations; }
  [[nodiscard]] double get_manual_seconds() const { return m_manual_seconds; }

 private:
  std::int64_t m_iterations = 0;
  double m_manual_seconds = 0.0;
};

void initialize_gbench() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Google Benchmark's flags keep their defaults: fusebench's own options decide everything.
    static char name[] = "fusebench";
    static char* argv[] = {name, nullptr};
    int argc = 1;
    benchmark::Initialize(&argc, argv);
  });
}

/// Iterations of the next batch: what the relative standard error says is missing (it falls as
/// 1/sqrt(n)), at least a quarter of what we have (few Google Benchmark runs), at most what the
/// time cap and max_samples leave.
std::size_t next_batch(const repetition_policy& policy, const std::vector<double>& samples, double wall) {
  const std::size_t n = samples.size();
  if (n < policy.min_samples) return std::max<std::size_t>(1, policy.min_samples - n);
  const double rse = stats::relative_standard_error(samples);
  double needed = 1.0;
  if (std::isfinite(rse) && policy.target_rse > 0.0)
    needed = std::ceil(static_cast<double>(n) * (rse / policy.target_rse) * (rse / policy.target_rse)) -
             static_cast<double>(n);
  if (wall < policy.min_time) needed = std::max(needed, (policy.min_time - wall) / (wall / static_cast<double>(n)));
  double batch = std::max({needed, static_cast<double>(n) / 4.0, 1.0});
  const double per_sample = wall / static_cast<double>(n);
  if (per_sample > 0.0) batch = std::min(batch, std::max(1.0, (policy.time_cap - wall) / per_sample));
  batch = std::min(batch, static_cast<double>(policy.max_samples - std::min(policy.max_samples, n)));
  return static_cast<std::size_t>(std::max(1.0, std::floor(batch)));
}

}  // namespace

device_calibration calibrate(device_kind device) {
  device_calibration c;
  if (device == device_kind::cpu) {
    c.copy_bandwidth = c.read_bandwidth = c.bandwidth = measure_host_bandwidth();
    c.fp32_peak = measure_host_fp32_peak();
    c.fp64_mma_peak = measure_host_fp64_peak();
    return c;
  }
#if FUSEBENCH_BENCH_DEVICE
  const fused::stream_t stream = current_cuda_stream();
  c.copy_bandwidth = measure_copy_bandwidth(stream);
  c.read_bandwidth = measure_read_bandwidth(stream);
  c.bandwidth = std::max(c.copy_bandwidth, c.read_bandwidth);  // a floor must be unbeatable
  c.fp32_peak = measure_fp32_peak(stream);
  c.fp64_mma_peak = measure_fp64_mma_peak(stream);
  return c;
#else
  throw std::runtime_error("calibrate: this build has no CUDA timing blocks");
#endif
}

sample_run collect_samples(const std::string& name, const repetition_policy& policy,
                           const std::function<double(std::size_t index)>& one_sample) {
  initialize_gbench();
  sample_run result;
  std::string error;
  std::exception_ptr thrown;  // rethrown as is: the runner tells an interruption from a failure by type
  const auto t0 = std::chrono::steady_clock::now();
  while (policy.want_more(result.samples, seconds_since(t0))) {
    const std::size_t batch = next_batch(policy, result.samples, seconds_since(t0));
    const std::size_t before = result.samples.size();
    benchmark::ClearRegisteredBenchmarks();
    benchmark::RegisterBenchmark(name.c_str(),
                                 [&](benchmark::State& state) {
                                   for (auto _ : state) {
                                     double seconds = 0.0;
                                     try {
                                       seconds = one_sample(result.samples.size());
                                     } catch (const std::exception& e) {
                                       error = e.what();
                                       thrown = std::current_exception();
                                       state.SkipWithError(error.c_str());
                                       break;  // Google Benchmark's rule after SkipWithError in the loop
                                     }
                                     result.samples.push_back(seconds);
                                     state.SetIterationTime(seconds);
                                   }
                                 })
        ->UseManualTime()
        ->Iterations(static_cast<benchmark::IterationCount>(batch))
        ->Repetitions(1)
        ->Unit(benchmark::kMicrosecond);
    sample_reporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter, ".");
    benchmark::ClearRegisteredBenchmarks();
    ++result.gbench_runs;
    if (thrown) std::rethrow_exception(thrown);
    // Google Benchmark must have run exactly the batch and summed exactly our samples; anything else
    // means the samples in the results file are not what it measured.
    double ours = 0.0;
    for (std::size_t i = before; i < result.samples.size(); ++i) ours += result.samples[i];
    if (result.samples.size() - before != batch || reporter.get_iterations() != static_cast<std::int64_t>(batch) ||
        std::abs(reporter.get_manual_seconds() - ours) > 1e-9 * std::max(1.0, ours))
      throw std::logic_error("Google Benchmark ran " + std::to_string(reporter.get_iterations()) +
                             " iterations (" + std::to_string(reporter.get_manual_seconds()) + " s) for a batch of " +
                             std::to_string(batch) + " (" + std::to_string(ours) + " s)");
  }
  result.wall_seconds = seconds_since(t0);
  return result;
}

}  // namespace fb::bench
