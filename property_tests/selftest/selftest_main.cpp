// The self-test's framework and main(): every registered model's run_cuda vs its host executor.
// Without a usable GPU it prints "SKIPPED: no CUDA device" and exits 0.
// Usage: fused_cuda_selftest [--cases N] [--seed S] [--no-default] [--default-only] [--bench]
//                            [--boundary-only] [--stress K] [--model ID]...
//   --boundary-only  each model's boundary set alone (property_tests/selftest/<id>_boundary.h): a
//                    DECLARED line per declared path, a BOUNDARY line per problem with the paths it
//                    reached on this device, a COVERAGE line per model; exit 1 also when a reachable
//                    declared path was not reached (what the gate's sanitizer stage runs)
//   --stress K       the boundary sets and the default sizes, each case then K more times beside the
//                    SM hog (property_tests/sm_hog.h), bitwise against its first run; a closing
//                    "stress: runs R, bitwise identical I" line
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "fused/runtime/device_info.h"
#include "harness/bench/device_timing.h"
#include "property_tests/selftest/boundary.h"
#include "property_tests/selftest/selftest.h"
#include "property_tests/sm_hog.h"
#include "property_tests/timing_probes.h"

namespace fb::selftest {

uint64_t rng_t::next() {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double rng_t::u01() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
int64_t rng_t::range(int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
}
double rng_t::normal() {
  const double u = std::max(u01(), 1e-300);
  return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * u01());
}

dist draw_dist(rng_t& rng) { return test_inputs::dist_at(rng.range(0, 4)); }

void fill_x(std::vector<float>& x, int64_t h, int64_t w, dist d, rng_t& rng) {
  const int64_t hw = h * w;
  for (std::size_t e = 0; e < x.size(); ++e) {
    switch (d) {
      case dist::uniform: x[e] = static_cast<float>(rng.u01()); break;
      case dist::normal: x[e] = static_cast<float>(rng.normal()); break;
      case dist::offset: x[e] = static_cast<float>(100.0 + rng.u01()); break;
      case dist::border_only: {
        const int64_t q = static_cast<int64_t>(e) % hw;
        const int64_t i = q / w;
        const int64_t j = q % w;
        x[e] = (i == 0 || j == 0 || i == h - 1 || j == w - 1) ? static_cast<float>(1.0 + rng.normal()) : 0.0f;
        break;
      }
      case dist::sparse: x[e] = rng.u01() < 0.05 ? static_cast<float>(10.0 * rng.normal()) : 0.0f; break;
    }
  }
}

void fill_u(std::vector<float>& v, double lo, double hi, rng_t& rng) {
  for (float& f : v) f = static_cast<float>(lo + (hi - lo) * rng.u01());
}

device_buffer::device_buffer(std::size_t bytes) { FB_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(bytes, 16))); }
device_buffer::~device_buffer() { cudaFree(p); }

device_buffer upload(const std::vector<float>& v) {
  device_buffer b(v.size() * sizeof(float));
  copy_to_device(b.p, v.data(), v.size() * sizeof(float));
  return b;
}

void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  FB_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaDeviceSynchronize());  // a pageable H2D copy may return before its DMA lands
}

guarded_output::guarded_output(int64_t n_)
    : buffer(static_cast<std::size_t>(n_ + 2 * k_guard) * sizeof(float)), n(n_) {}

namespace {

const guarded_output& as_guarded(const checked_output& o) { return *static_cast<const guarded_output*>(o.device); }

// NaN inside, canaries around.
void poison(const guarded_output& out) {
  std::vector<float> h(static_cast<std::size_t>(out.n + 2 * k_guard), k_canary);
  std::fill(h.begin() + k_guard, h.begin() + k_guard + out.n, std::numeric_limits<float>::quiet_NaN());
  copy_to_device(out.buffer.p, h.data(), h.size() * sizeof(float));
}

// The output's values; canary damage and unwritten (NaN) elements go to err.
std::vector<float> download(const checked_output& o, std::string& err) {
  if (!o.guarded) {
    std::vector<float> r(static_cast<std::size_t>(o.n));
    FB_CUDA_CHECK(cudaMemcpy(r.data(), o.device, r.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return r;
  }
  const guarded_output& g = as_guarded(o);
  std::vector<float> h(static_cast<std::size_t>(g.n + 2 * k_guard));
  FB_CUDA_CHECK(cudaMemcpy(h.data(), g.buffer.p, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int64_t i = 0; i < k_guard; ++i)
    if (h[static_cast<std::size_t>(i)] != k_canary || h[static_cast<std::size_t>(k_guard + g.n + i)] != k_canary) {
      err += " " + o.name + ":canary-overwritten";
      break;
    }
  std::vector<float> r(h.begin() + k_guard, h.begin() + k_guard + g.n);
  for (int64_t i = 0; i < g.n; ++i)
    if (std::isnan(r[static_cast<std::size_t>(i)])) {
      err += " " + o.name + ":unwritten-or-nan@" + std::to_string(i);
      break;
    }
  return r;
}

// --stress K: the perturbed repeats per case, the hog that perturbs them, and the seed of their draws.
struct stress_settings {
  int repeats = 0;
  uint64_t seed = 0;
  std::unique_ptr<fb::stress::sm_hog> hog;
  int case_index = 0;  // perturbations differ from case to case
};
stress_settings& stress() {
  static stress_settings s;
  return s;
}

// The device's residency limits, for the boundary paths that depend on them.
fb::boundary::device_limits& limits() {
  static fb::boundary::device_limits lim;
  return lim;
}

// One run: outputs poisoned and in-place state reset, then `launch` (directly or as a graph; with
// `hog`, beside the SM hog's perturbation: the hog launched just before or just after it).
std::vector<std::vector<float>> run_once(const selftest_case& c, cudaStream_t stream, bool as_graph,
                                         std::string& err, const fb::stress::perturbation* hog = nullptr) {
  for (const checked_output& o : c.outputs)
    if (o.guarded) poison(as_guarded(o));
  if (c.reset) c.reset();
  if (hog != nullptr) {
    if (hog->hog_first) stress().hog->launch(*hog);
    c.launch(stream);
    if (!hog->hog_first) stress().hog->launch(*hog);
  } else if (!as_graph) {
    c.launch(stream);
  } else {
    cudaGraph_t g = nullptr;
    cudaGraphExec_t ge = nullptr;
    FB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    try {
      c.launch(stream);
    } catch (...) {
      cudaStreamEndCapture(stream, &g);
      if (g) cudaGraphDestroy(g);
      throw;
    }
    FB_CUDA_CHECK(cudaStreamEndCapture(stream, &g));
    FB_CUDA_CHECK(cudaGraphInstantiate(&ge, g, 0));
    FB_CUDA_CHECK(cudaGraphLaunch(ge, stream));
    FB_CUDA_CHECK(cudaStreamSynchronize(stream));
    FB_CUDA_CHECK(cudaGraphExecDestroy(ge));
    FB_CUDA_CHECK(cudaGraphDestroy(g));
  }
  FB_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (hog != nullptr) stress().hog->wait();
  FB_CUDA_CHECK(cudaGetLastError());
  std::vector<std::vector<float>> got;
  for (const checked_output& o : c.outputs) got.push_back(download(o, err));
  if (c.extra_check) {
    const std::string e = c.extra_check();
    if (!e.empty()) err += " " + e;
  }
  return got;
}

bool bitwise_equal(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0) return false;
  return true;
}

std::map<std::string, model_run>& registry() {
  static std::map<std::string, model_run> models;
  return models;
}

}  // namespace

bool check_case(const selftest_case& c, bool graph, cudaStream_t stream, tally& t) {
  std::string err;
  const std::vector<std::vector<float>> r1 = run_once(c, stream, false, err);
  const std::vector<std::vector<float>> r2 = run_once(c, stream, false, err);
  if (!bitwise_equal(r1, r2)) err += " not-bitwise-deterministic";
  if (graph && !bitwise_equal(r1, run_once(c, stream, true, err))) err += " graph-replay-differs";
  stress_settings& st = stress();
  if (st.repeats > 0) {
    const int case_index = st.case_index++;
    int identical = 0;
    std::string first_diff;
    for (int k = 0; k < st.repeats; ++k) {
      const fb::stress::perturbation p = st.hog->draw(st.seed + static_cast<uint64_t>(case_index) * 7919u, k);
      if (bitwise_equal(r1, run_once(c, stream, false, err, &p)))
        ++identical;
      else if (first_diff.empty())
        first_diff = "run " + std::to_string(k + 1) + " (" + p.describe() + ")";
    }
    t.stress_runs += st.repeats;
    t.stress_identical += identical;
    if (identical != st.repeats)
      err += " stress: " + std::to_string(st.repeats - identical) + " of " + std::to_string(st.repeats) +
             " perturbed runs differ from the first run, first " + first_diff;
  }
  double case_abs = 0.0, case_rel = 0.0;
  for (std::size_t k = 0; k < c.outputs.size(); ++k) {
    const checked_output& o = c.outputs[k];
    for (int64_t i = 0; i < o.n; ++i) {
      const double d = r1[k][static_cast<std::size_t>(i)];
      const double h = o.expected[static_cast<std::size_t>(i)];
      const double diff = std::fabs(d - h);
      case_abs = std::max(case_abs, diff);
      case_rel = std::max(case_rel, diff / std::max(std::fabs(h), 1e-30));
      if (!(diff <= k_atol + k_rtol * std::fabs(h))) {
        char buf[200];
        std::snprintf(buf, sizeof buf, " %s:mismatch@%lld device=%.9g host=%.9g", o.name.c_str(),
                      static_cast<long long>(i), d, h);
        err += buf;
        break;
      }
    }
  }
  t.max_abs = std::max(t.max_abs, case_abs);
  t.max_rel = std::max(t.max_rel, case_rel);
  if (err.empty()) {
    ++t.passed;
    return true;
  }
  ++t.failed;
  std::printf("FAIL %s:%s\n", c.name.c_str(), err.c_str());
  return false;
}

double median_us(const std::function<void()>& launch, cudaStream_t stream, int reps, flush_kind flush_how) {
  int dev = 0, l2 = 0;
  FB_CUDA_CHECK(cudaGetDevice(&dev));
  FB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  const std::size_t flush_bytes = static_cast<std::size_t>(std::max(l2, 1 << 20)) * 2;
  device_buffer flush(flush_bytes);
  fb::bench::buffer_reader reader;
  FB_CUDA_CHECK(cudaMemsetAsync(flush.p, 0, flush_bytes, stream));
  cudaEvent_t a, b;
  FB_CUDA_CHECK(cudaEventCreate(&a));
  FB_CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) launch();
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    if (flush_how == flush_kind::dirty)
      FB_CUDA_CHECK(cudaMemsetAsync(flush.p, i & 0xff, flush_bytes, stream));
    else
      reader.read(flush.p, flush_bytes, stream);
    FB_CUDA_CHECK(cudaEventRecord(a, stream));
    launch();
    FB_CUDA_CHECK(cudaEventRecord(b, stream));
    FB_CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0.0f;
    FB_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  FB_CUDA_CHECK(cudaEventDestroy(a));
  FB_CUDA_CHECK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return 1000.0 * ms[ms.size() / 2];
}

double read_us(const void* p, std::size_t bytes, cudaStream_t stream, flush_kind flush_how) {
  fb::bench::buffer_reader reader;
  return median_us([&] { reader.read(p, bytes, stream); }, stream, 50, flush_how);
}

double empty_kernel_us(cudaStream_t stream) {
  return median_us([&] { fb::probes::empty_kernel(stream); }, stream, 50);
}

void report_boundary(const std::string& model, std::size_t index, bool ok) {
  const auto& sets = fb::boundary::registry();
  const auto it = sets.find(model);
  if (it == sets.end()) {
    std::printf("BOUNDARY %s #%zu %s: no boundary set registered\n", model.c_str(), index, ok ? "ok" : "FAIL");
    return;
  }
  // Space-separated: path names hold commas (template arguments), never spaces.
  std::printf("BOUNDARY %s #%zu %s: %s\n", model.c_str(), index, ok ? "ok" : "FAIL",
              fb::boundary::join(it->second.reached(index, limits()), " ").c_str());
}

/// --boundary-only, before anything runs: every declared path of the model (DECLARED lines), so a
/// run cut short still says what it should have covered.
void print_declared(const std::string& model) {
  const auto& sets = fb::boundary::registry();
  const auto it = sets.find(model);
  if (it == sets.end()) return;
  for (const fb::boundary::path& p : it->second.paths)
    std::printf("DECLARED %s %s%s%s\n", model.c_str(), p.name.c_str(), p.unreachable.empty() ? "" : " unreachable: ",
                p.unreachable.c_str());
}

/// --boundary-only, after a model ran: a COVERAGE line; a
/// COVERAGE-GAP line per reachable declared path that no problem reached on this device, or per
/// reached path not declared. Returns the number of gaps.
int print_coverage(const std::string& model) {
  const auto& sets = fb::boundary::registry();
  const auto it = sets.find(model);
  if (it == sets.end()) {
    std::printf("COVERAGE-GAP %s: no boundary set declared\n", model.c_str());
    return 1;
  }
  const fb::boundary::model_set& s = it->second;
  int unreachable = 0;
  for (const fb::boundary::path& p : s.paths) unreachable += !p.unreachable.empty();
  const fb::boundary::coverage_gaps g = fb::boundary::gaps_of(s, limits());
  for (const std::string& name : g.unreached) std::printf("COVERAGE-GAP %s: %s not reached\n", model.c_str(), name.c_str());
  for (const std::string& name : g.undeclared) std::printf("COVERAGE-GAP %s: %s not declared\n", model.c_str(), name.c_str());
  std::printf("COVERAGE %s: %zu boundary problems, %zu paths declared (%d unreachable), %zu not reached\n",
              model.c_str(), s.problem_names.size(), s.paths.size(), unreachable, g.unreached.size());
  return static_cast<int>(g.unreached.size() + g.undeclared.size());
}

int register_model(const char* id, model_run run) {
  registry()[id] = std::move(run);
  return static_cast<int>(registry().size());
}

std::vector<std::pair<std::string, model_run>> registered_models() {
  return {registry().begin(), registry().end()};
}

}  // namespace fb::selftest

int main(int argc, char** argv) {
  namespace st = fb::selftest;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines reach a pipe (the gate's tee) as they are printed
  st::options opt;
  std::vector<std::string> only;
  bool boundary_only = false;
  int stress_repeats = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cases" && i + 1 < argc) {
      opt.cases = std::atoi(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      opt.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--no-default") {
      opt.with_default = false;
    } else if (a == "--default-only") {  // the default sizes alone (profiling): no random, no boundary problems
      opt.cases = 0;
      opt.boundary = false;
    } else if (a == "--bench") {
      opt.bench = true;
    } else if (a == "--boundary-only") {
      boundary_only = true;
    } else if (a == "--stress" && i + 1 < argc) {
      stress_repeats = std::atoi(argv[++i]);
      if (stress_repeats < 1) {
        std::fprintf(stderr, "fused_cuda_selftest: --stress needs a count >= 1\n");
        return 2;
      }
    } else if (a == "--model" && i + 1 < argc) {
      only.emplace_back(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--cases N] [--seed S] [--no-default] [--default-only] [--bench] [--boundary-only] "
                   "[--stress K] [--model ID]...\n",
                   argv[0]);
      return 2;
    }
  }
  if (boundary_only || stress_repeats > 0) {  // the declared sets (and, under --stress, the default sizes) only
    opt.cases = 0;
    opt.boundary = true;
    opt.extra_boundary = false;
    opt.with_default = stress_repeats > 0;
  }
  const auto models = st::registered_models();
  for (const std::string& id : only)
    if (std::none_of(models.begin(), models.end(), [&](const auto& m) { return m.first == id; })) {
      std::fprintf(stderr, "fused_cuda_selftest: unknown model %s\n", id.c_str());
      return 2;
    }
  if (fb::fused::cuda_device_count() == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 0;
  }
  int passed = 0, failed = 0, stress_runs = 0, stress_identical = 0, coverage_gaps = 0;
  try {
    cudaDeviceProp prop{};
    FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("fused_cuda_selftest: %s, %d SMs, seed %llu, %d cases per model, %zu models%s\n", prop.name,
                prop.multiProcessorCount, static_cast<unsigned long long>(opt.seed), opt.cases, models.size(),
                boundary_only ? ", boundary sets only" : stress_repeats > 0 ? ", boundary sets and default sizes under stress" : "");
    st::limits().sms = prop.multiProcessorCount;
    st::limits().max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
    if (stress_repeats > 0) {
      st::stress().repeats = stress_repeats;
      st::stress().seed = opt.seed;
      st::stress().hog = std::make_unique<fb::stress::sm_hog>();
      std::printf("stress: %d perturbed repeats per case (an SM hog on another stream: 1..%d SMs for 2..400 us, "
                  "before or after the launch)\n", stress_repeats, st::stress().hog->sms());
    }
    cudaStream_t stream = nullptr;
    FB_CUDA_CHECK(cudaStreamCreate(&stream));  // blocking: ordered after legacy-stream copies
    if (boundary_only)
      for (const auto& [id, run] : models)
        if (only.empty() || std::find(only.begin(), only.end(), id) != only.end()) st::print_declared(id);
    // A model's line as soon as it is done (with its seconds), so that a run stopped by a time box
    // still says how far it got and which model took the time.
    for (const auto& [id, run] : models) {
      if (!only.empty() && std::find(only.begin(), only.end(), id) == only.end()) continue;
      st::rng_t rng{opt.seed};
      const auto t0 = std::chrono::steady_clock::now();
      const st::tally t = run(opt, rng, stream);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("%-22s %d passed, %d failed, max |dev-host| %.3g, max rel %.3g (%.1f s)\n", (id + ":").c_str(),
                  t.passed, t.failed, t.max_abs, t.max_rel, seconds);
      passed += t.passed;
      failed += t.failed;
      stress_runs += t.stress_runs;
      stress_identical += t.stress_identical;
      if (boundary_only) coverage_gaps += st::print_coverage(id);
    }
    FB_CUDA_CHECK(cudaStreamDestroy(stream));
  } catch (const std::exception& e) {
    std::printf("FAIL: exception: %s\n", e.what());
    return 1;
  }
  if (stress_repeats > 0) std::printf("stress: runs %d, bitwise identical %d\n", stress_runs, stress_identical);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && coverage_gaps == 0 ? 0 : 1;
}
