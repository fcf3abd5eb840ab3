#pragma once
/// The torch-free GPU self-test of fused/: each fused model's run_cuda against its host executor
/// (itself checked against the libtorch reference and brute force on the CPU), on random problems of
/// the fuzz domain, problems that cross the kernel's internal boundaries, and the default sizes.
///
/// A model takes part by adding one file, property_tests/selftest/<id>.cpp, that ends with
/// FB_SELFTEST_MODEL("<id>", its_run_function); CMake and scripts/build-probe pick the file up by
/// glob, and selftest_main.cpp runs every registered model. Nothing else is edited.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fused/math/convt_phase.cuh"
#include "fused/runtime/cuda_check.h"
#include "property_tests/input_dist.h"

namespace fb::selftest {

/// splitmix64: fast enough to fill the 268M-element #42 default input.
struct rng_t {
  uint64_t s;
  uint64_t next();
  /// Uniform on [0, 1).
  double u01();
  /// Uniform integer on [lo, hi] (both included).
  int64_t range(int64_t lo, int64_t hi);
  /// Standard normal.
  double normal();
};

/// Input distributions, as in the fuzz domain (SPEC §2): uniform [0,1), normal, +100 offset, non-zero
/// only on the border rows and columns of the last two dims, sparse.
using test_inputs::dist;
using test_inputs::dist_name;
[[nodiscard]] dist draw_dist(rng_t& rng);

/// Fills x (planes of h x w in its last two dims) from distribution d.
void fill_x(std::vector<float>& x, int64_t h, int64_t w, dist d, rng_t& rng);
/// Fills v uniformly on [lo, hi).
void fill_u(std::vector<float>& v, double lo, double hi, rng_t& rng);

/// Output size along one dimension of a cubic transposed 3-D convolution problem (#15, #34: fields
/// kernel_size, stride, padding; no output padding).
template <class Problem>
int64_t convt3d_out_size(const Problem& p, int64_t n) {
  return fb::fused::convt_output_size(n, p.kernel_size, p.stride, p.padding, 0);
}

/// Output elements and valid-tap multiply-adds of such a problem (fields batch, in_channels,
/// out_channels, depth, height, width as well).
template <class Problem>
void convt3d_sizes_of(const Problem& p, double& outputs, double& macs) {
  const int64_t in[3] = {p.depth, p.height, p.width};
  outputs = static_cast<double>(p.batch * p.out_channels);
  macs = static_cast<double>(p.batch * p.in_channels * p.out_channels);
  for (int64_t n : in) {
    const fb::fused::phase_dim d{n, convt3d_out_size(p, n), p.kernel_size, p.stride, p.padding};
    outputs *= static_cast<double>(d.n_out);
    macs *= static_cast<double>(d.valid_pairs());
  }
}

/// Device memory freed on scope exit (at least 16 bytes, so a null size still has an address).
struct device_buffer {
  void* p = nullptr;
  explicit device_buffer(std::size_t bytes);
  ~device_buffer();
  device_buffer(device_buffer&& o) noexcept : p(o.p) { o.p = nullptr; }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  [[nodiscard]] float* f() const { return static_cast<float*>(p); }
};

/// A device copy of v (synchronous).
[[nodiscard]] device_buffer upload(const std::vector<float>& v);
/// Copies bytes to existing device memory (synchronous): restores in-place state before a run.
void copy_to_device(void* dst, const void* src, std::size_t bytes);

/// Canary floats on each side of every guarded output.
inline constexpr int64_t k_guard = 64;
/// A finite float no kernel writes by chance.
inline constexpr float k_canary = -12345.5f;

/// A device output of n floats with k_guard canaries each side: the kernel writes at f() + k_guard.
struct guarded_output {
  explicit guarded_output(int64_t n);
  device_buffer buffer;
  int64_t n;
  /// Where the kernel writes.
  [[nodiscard]] float* data() const { return buffer.f() + k_guard; }
};

/// One result the check compares with the host executor's: a guarded output (poisoned with NaN before
/// every run, canaries checked after) or an in-place buffer (e.g. BatchNorm running statistics) that
/// selftest_case::reset restores before every run.
struct checked_output {
  std::string name;
  const void* device = nullptr;      ///< guarded: the guarded_output; in place: the n floats
  int64_t n = 0;
  std::vector<float> expected;       ///< the host executor's result
  bool guarded = true;
};

/// One problem of one model.
struct selftest_case {
  std::string name;                             ///< printed on failure: model, sizes, distribution
  std::function<void(cudaStream_t)> launch;     ///< calls run_cuda on the stream
  std::function<void()> reset;                  ///< restores in-place inputs before a run (may be empty)
  std::vector<checked_output> outputs;
  std::function<std::string()> extra_check;     ///< other checks after a run; "" when all hold (may be empty)
};

/// Per-model counts and the largest device-vs-host difference.
struct tally {
  int passed = 0, failed = 0;
  double max_abs = 0.0, max_rel = 0.0;
  int stress_runs = 0;       ///< perturbed repeats (--stress): runs beside the SM hog
  int stress_identical = 0;  ///< of them, bitwise identical to the case's first run
};

/// Host and device share the algorithm (fp64 where it matters): far tighter than the 1e-5 gate.
inline constexpr double k_atol = 1e-6;
inline constexpr double k_rtol = 1e-6;

/// Runs the case twice (outputs poisoned, in-place state reset before each run) and, if `graph`,
/// once more through a captured CUDA graph; checks canaries, full writes, bitwise determinism, the
/// graph replay, extra_check, and the device results against the host's at k_atol/k_rtol. Under
/// --stress K it then runs the case K more times, each beside an SM hog on another stream that
/// holds a random number of SMs for a random time (property_tests/sm_hog.h), and requires every
/// output and in-place buffer bitwise identical to the first run's.
/// Prints "FAIL <name>: ..." on failure. Returns true when everything held.
bool check_case(const selftest_case& c, bool graph, cudaStream_t stream, tally& t);

/// How the L2 is emptied before each timed run: dirty is a memset of 2x the L2 (dirty lines the timed
/// kernel writes back while it reads), clean a read of a 2x-L2 buffer (what the harness's bench does).
enum class flush_kind { dirty, clean };
/// Median time of `launch` over `reps` runs, the L2 flushed before each one [microseconds].
double median_us(const std::function<void()>& launch, cudaStream_t stream, int reps,
                 flush_kind flush_how = flush_kind::clean);
/// Median time of a plain read of `bytes` at `p` and of an empty kernel (the launch floor), printed
/// beside a kernel's time by --bench [microseconds].
double read_us(const void* p, std::size_t bytes, cudaStream_t stream, flush_kind flush_how = flush_kind::clean);
double empty_kernel_us(cudaStream_t stream);

/// Command-line options every model's self-test gets.
struct options {
  int cases = 300;            ///< random problems per model
  uint64_t seed = 20241122;
  bool with_default = true;   ///< also the KernelBench default sizes
  bool boundary = true;       ///< the model's boundary set (property_tests/selftest/<id>_boundary.h)
  bool extra_boundary = true; ///< and the random boundary draws beside it (off in --boundary-only, --stress)
  bool bench = false;         ///< time the default sizes (and what the model chooses to time)
};

/// After boundary problem `index` of `model`'s set ran (`ok`: it passed): prints its BOUNDARY line,
/// the paths it reached on this device (the gate's coverage report reads them).
void report_boundary(const std::string& model, std::size_t index, bool ok);

/// A model's self-test: draws and checks its problems, returns the tally.
using model_run = std::function<tally(const options&, rng_t&, cudaStream_t)>;

/// Registers a model's self-test (FB_SELFTEST_MODEL does this at static-initialisation time).
int register_model(const char* id, model_run run);
/// Every registered model, sorted by id.
[[nodiscard]] std::vector<std::pair<std::string, model_run>> registered_models();

}  // namespace fb::selftest

/// Registers `fn` (a model_run) as the self-test of model `id`. One line at the end of the model's file.
#define FB_SELFTEST_MODEL(id, fn) \
  [[maybe_unused]] static const int fb_selftest_registration_ = ::fb::selftest::register_model(id, fn);
