// Standalone GPU self-test of fused/: run_cuda vs run_host (the host executor, itself checked
// against brute force in fused_math_test) on random configs of the SPEC fuzz domain plus the default
// sizes. For every case: outputs poisoned with NaN and guarded by canaries, every element written,
// two runs bitwise identical, a CUDA-graph replay (first cases) bitwise identical too.
// Without a usable GPU it prints "SKIPPED: no CUDA device" and exits 0.
// Usage: fused_cuda_selftest [--cases N] [--seed S] [--no-default] [--bench]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "fused/common/cuda_check.h"
#include "fused/common/device_info.h"
#include "fused/convt2d_gap_bias_lse.h"
#include "fused/convt2d_mul_gap.h"
#include "harness/bench/device_timing.h"
#include "property_tests/timing_probes.h"

namespace {

namespace mg = fb::fused::convt2d_mul_gap;
namespace gl = fb::fused::convt2d_gap_bias_lse;

constexpr double k_atol = 1e-6;  // host and device share the fp64 algorithm: far tighter than 1e-5
constexpr double k_rtol = 1e-6;
constexpr int64_t k_guard = 64;  // canary floats on each side of the output
constexpr float k_canary = -12345.5f;

// splitmix64: fast enough to fill the 268M-element #42 default input.
struct rng_t {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double u01() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  int64_t range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1)); }
  double normal() {
    const double u = std::max(u01(), 1e-300);
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * u01());
  }
};

enum class dist { uniform, normal, offset, border_only, sparse };
const char* dist_name(dist d) {
  static const char* names[] = {"uniform", "normal", "offset+100", "border_only", "sparse"};
  return names[static_cast<int>(d)];
}

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

struct device_buffer {
  void* p = nullptr;
  explicit device_buffer(std::size_t bytes) { FB_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(bytes, 16))); }
  ~device_buffer() { cudaFree(p); }
  device_buffer(device_buffer&& o) noexcept : p(o.p) { o.p = nullptr; }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  float* f() const { return static_cast<float*>(p); }
};

device_buffer upload(const std::vector<float>& v) {
  device_buffer b(v.size() * sizeof(float));
  FB_CUDA_CHECK(cudaMemcpy(b.p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaDeviceSynchronize());  // a pageable H2D copy may return before its DMA lands
  return b;
}

// Output with k_guard canaries each side and NaN inside.
void poison(const device_buffer& out, int64_t n) {
  std::vector<float> h(static_cast<std::size_t>(n + 2 * k_guard), k_canary);
  std::fill(h.begin() + k_guard, h.begin() + k_guard + n, std::numeric_limits<float>::quiet_NaN());
  FB_CUDA_CHECK(cudaMemcpy(out.p, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaDeviceSynchronize());
}

// Downloads the output; reports canary damage and unwritten (NaN) elements.
std::vector<float> download(const device_buffer& out, int64_t n, std::string& err) {
  std::vector<float> h(static_cast<std::size_t>(n + 2 * k_guard));
  FB_CUDA_CHECK(cudaMemcpy(h.data(), out.p, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int64_t i = 0; i < k_guard; ++i)
    if (h[static_cast<std::size_t>(i)] != k_canary || h[static_cast<std::size_t>(k_guard + n + i)] != k_canary)
      err += " canary-overwritten";
  std::vector<float> r(h.begin() + k_guard, h.begin() + k_guard + n);
  for (int64_t i = 0; i < n; ++i)
    if (std::isnan(r[static_cast<std::size_t>(i)])) {
      err += " unwritten-or-nan@" + std::to_string(i);
      break;
    }
  return r;
}

struct tally {
  int passed = 0, failed = 0;
  double max_abs = 0.0, max_rel = 0.0;
};

// Runs `launch` (which calls run_cuda on `stream` into out+k_guard) twice and, if `graph`, once more
// through a captured CUDA graph; compares with the host result.
template <class Launch>
bool check_case(const std::string& name, Launch launch, const device_buffer& out, int64_t n,
                const std::vector<float>& host, bool graph, cudaStream_t stream, tally& t) {
  std::string err;
  poison(out, n);
  launch();
  FB_CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::vector<float> r1 = download(out, n, err);
  poison(out, n);
  launch();
  FB_CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::vector<float> r2 = download(out, n, err);
  if (std::memcmp(r1.data(), r2.data(), r1.size() * sizeof(float)) != 0) err += " not-bitwise-deterministic";
  if (graph) {
    cudaGraph_t g = nullptr;
    cudaGraphExec_t ge = nullptr;
    poison(out, n);
    FB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    try {
      launch();
    } catch (...) {
      cudaStreamEndCapture(stream, &g);
      if (g) cudaGraphDestroy(g);
      throw;
    }
    FB_CUDA_CHECK(cudaStreamEndCapture(stream, &g));
    FB_CUDA_CHECK(cudaGraphInstantiate(&ge, g, 0));
    FB_CUDA_CHECK(cudaGraphLaunch(ge, stream));
    FB_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<float> r3 = download(out, n, err);
    if (std::memcmp(r1.data(), r3.data(), r1.size() * sizeof(float)) != 0) err += " graph-replay-differs";
    FB_CUDA_CHECK(cudaGraphExecDestroy(ge));
    FB_CUDA_CHECK(cudaGraphDestroy(g));
  }
  double case_abs = 0.0, case_rel = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = r1[static_cast<std::size_t>(i)];
    const double h = host[static_cast<std::size_t>(i)];
    const double diff = std::fabs(d - h);
    case_abs = std::max(case_abs, diff);
    case_rel = std::max(case_rel, diff / std::max(std::fabs(h), 1e-30));
    if (!(diff <= k_atol + k_rtol * std::fabs(h))) {
      char buf[160];
      std::snprintf(buf, sizeof buf, " mismatch@%lld device=%.9g host=%.9g", static_cast<long long>(i), d, h);
      err += buf;
      break;
    }
  }
  t.max_abs = std::max(t.max_abs, case_abs);
  t.max_rel = std::max(t.max_rel, case_rel);
  if (err.empty()) {
    ++t.passed;
    return true;
  }
  ++t.failed;
  std::printf("FAIL %s:%s\n", name.c_str(), err.c_str());
  return false;
}

std::string describe(const mg::problem& p, dist d) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "convt2d_mul_gap B=%lld Cin=%lld Cout=%lld H=%lld W=%lld k=%lld s=%lld p=%lld op=%lld mult=%g %s",
                (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.height,
                (long long)p.width, (long long)p.kernel_size, (long long)p.stride, (long long)p.padding,
                (long long)p.output_padding, p.multiplier, dist_name(d));
  return buf;
}

std::string describe(const gl::problem& p, dist d) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "convt2d_gap_bias_lse B=%lld Cin=%lld Cout=%lld H=%lld W=%lld k=%lld %s",
                (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.height,
                (long long)p.width, (long long)p.kernel_size, dist_name(d));
  return buf;
}

// How the L2 is emptied before each timed run (the harness's call_timer uses the first):
//   dirty: a memset of 2x the L2, which leaves the L2 full of dirty lines the timed kernel then
//          has to write back while it reads (extra DRAM traffic charged to it);
//   clean: a read of a 2x-L2 buffer, which leaves clean lines only (evicted for free).
enum class flush_kind { dirty, clean };

// Median time of `launch` over `reps` runs, the L2 flushed before each one.
template <class Launch>
double median_us(Launch launch, cudaStream_t stream, int reps, flush_kind flush_how = flush_kind::dirty) {
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

// Splits the #44 time: the kernel and a plain read of x, after a dirty and after a clean flush,
// and an empty kernel (the launch floor).
template <class Launch>
void bench_mul_gap(const std::string& what, Launch launch, const float* x, int64_t n, cudaStream_t stream) {
  const double bytes = static_cast<double>(n) * 4.0;
  fb::bench::buffer_reader reader;
  const auto read = [&] { reader.read(x, static_cast<std::size_t>(n) * sizeof(float), stream); };
  const auto empty = [&] { fb::probes::empty_kernel(stream); };
  for (const flush_kind f : {flush_kind::dirty, flush_kind::clean}) {
    const double us = median_us(launch, stream, 50, f);
    const double us_read = median_us(read, stream, 50, f);
    const double us_empty = median_us(empty, stream, 50, f);
    std::printf("BENCH %s, %s flush: %.2f us (x at %.0f GB/s); plain read of x %.2f us (%.0f GB/s); empty kernel %.2f us\n",
                what.c_str(), f == flush_kind::dirty ? "dirty" : "clean", us, bytes / us * 1e-3, us_read,
                bytes / us_read * 1e-3, us_empty);
  }
}

bool run_mul_gap(const mg::problem& p, dist d, rng_t& rng, bool graph, bool bench, cudaStream_t stream, tally& t) {
  const int64_t k = p.kernel_size;
  std::vector<float> x(static_cast<std::size_t>(p.batch * p.in_channels * p.height * p.width));
  std::vector<float> w(static_cast<std::size_t>(p.in_channels * p.out_channels * k * k));
  std::vector<float> cb(static_cast<std::size_t>(p.out_channels));
  fill_x(x, p.height, p.width, d, rng);
  const double wb = 1.0 / std::sqrt(static_cast<double>(p.out_channels * k * k));
  fill_u(w, -wb, wb, rng);
  fill_u(cb, -1.0, 1.0, rng);
  const int64_t n = p.batch * p.out_channels;
  const std::size_t wsb = mg::workspace_bytes(p);
  std::vector<unsigned char> hws(wsb);
  std::vector<float> host(static_cast<std::size_t>(n));
  mg::run_host(p, x.data(), w.data(), cb.data(), host.data(), hws.data());
  device_buffer dx = upload(x), dw = upload(w), dcb = upload(cb);
  device_buffer dout(static_cast<std::size_t>(n + 2 * k_guard) * sizeof(float));
  device_buffer dws(wsb);
  auto launch = [&] { mg::run_cuda(p, dx.f(), dw.f(), dcb.f(), dout.f() + k_guard, dws.p, stream); };
  const bool ok = check_case(describe(p, d), launch, dout, n, host, graph, stream, t);
  if (bench) bench_mul_gap(describe(p, d), launch, dx.f(), static_cast<int64_t>(x.size()), stream);
  return ok;
}

bool run_gap_lse(const gl::problem& p, dist d, rng_t& rng, bool graph, bool bench, cudaStream_t stream, tally& t) {
  const int64_t k = p.kernel_size;
  std::vector<float> x(static_cast<std::size_t>(p.batch * p.in_channels * p.height * p.width));
  std::vector<float> w(static_cast<std::size_t>(p.in_channels * p.out_channels * k * k));
  std::vector<float> cb(static_cast<std::size_t>(p.out_channels));
  std::vector<float> bias(static_cast<std::size_t>(p.out_channels));
  fill_x(x, p.height, p.width, d, rng);
  fill_u(w, -1.0, 1.0, rng);
  fill_u(cb, -1.0, 1.0, rng);
  const double bias_scale = (rng.next() & 1) ? 100.0 : 2.0;  // large biases exercise the stable form
  fill_u(bias, -bias_scale, bias_scale, rng);
  const int64_t n = p.batch;
  const std::size_t wsb = gl::workspace_bytes(p);
  std::vector<unsigned char> hws(wsb);
  std::vector<float> host(static_cast<std::size_t>(n));
  gl::run_host(p, x.data(), w.data(), cb.data(), bias.data(), host.data(), hws.data());
  device_buffer dx = upload(x), dw = upload(w), dcb = upload(cb), db = upload(bias);
  device_buffer dout(static_cast<std::size_t>(n + 2 * k_guard) * sizeof(float));
  device_buffer dws(wsb);
  auto launch = [&] { gl::run_cuda(p, dx.f(), dw.f(), dcb.f(), db.f(), dout.f() + k_guard, dws.p, stream); };
  const bool ok = check_case(describe(p, d), launch, dout, n, host, graph, stream, t);
  if (bench) {
    const double us = median_us(launch, stream, 30);
    const double us_clean = median_us(launch, stream, 30, flush_kind::clean);
    std::printf("BENCH %s: %.2f us after a dirty flush (x at %.0f GB/s), %.2f us after a clean one (%.0f GB/s)\n",
                describe(p, d).c_str(), us, static_cast<double>(x.size()) * 4.0 / us * 1e-3, us_clean,
                static_cast<double>(x.size()) * 4.0 / us_clean * 1e-3);
  }
  return ok;
}

dist draw_dist(rng_t& rng) { return static_cast<dist>(rng.range(0, 4)); }

mg::problem draw_mul_gap(rng_t& rng) {
  mg::problem p{};
  p.batch = rng.range(1, 8);
  p.in_channels = rng.range(1, 64);
  p.out_channels = rng.range(1, 64);
  p.height = rng.range(1, 40);
  p.width = rng.range(1, 40);
  p.kernel_size = rng.range(1, 7);
  p.stride = rng.range(1, 4);
  p.output_padding = rng.range(0, p.stride - 1);
  auto pmax = [&](int64_t n) { return ((n - 1) * p.stride + p.kernel_size + p.output_padding - 1) / 2; };
  const int64_t pm = std::min(pmax(p.height), pmax(p.width));
  // Mostly small paddings (as in practice), sometimes anything valid (crops at both borders, p > k).
  p.padding = (rng.next() % 3 == 0) ? rng.range(0, pm) : std::min<int64_t>(pm, rng.range(0, 3));
  const double mult = 4.0 * rng.u01() - 2.0;
  p.multiplier = static_cast<float>(mult);
  return p;
}

gl::problem draw_gap_lse(rng_t& rng) {
  gl::problem p{};
  p.batch = rng.range(1, 8);
  p.in_channels = rng.range(1, 64);
  p.out_channels = rng.range(1, 64);
  p.height = rng.range(1, 40);
  p.width = rng.range(1, 40);
  p.kernel_size = rng.range(1, 7);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  int cases = 300;
  uint64_t seed = 20241122;
  bool with_default = true;
  bool bench = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cases" && i + 1 < argc) {
      cases = std::atoi(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--no-default") {
      with_default = false;
    } else if (a == "--bench") {
      bench = true;
    } else {
      std::fprintf(stderr, "usage: %s [--cases N] [--seed S] [--no-default] [--bench]\n", argv[0]);
      return 2;
    }
  }
  if (fb::fused::cuda_device_count() == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 0;
  }
  try {
    cudaDeviceProp prop{};
    FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("fused_cuda_selftest: %s, %d SMs, seed %llu, %d cases per model\n", prop.name,
                prop.multiProcessorCount, static_cast<unsigned long long>(seed), cases);
    cudaStream_t stream = nullptr;
    FB_CUDA_CHECK(cudaStreamCreate(&stream));  // blocking: ordered after legacy-stream copies
    rng_t rng{seed};
    tally t44, t42;
    for (int c = 0; c < cases; ++c) {
      const mg::problem p = draw_mul_gap(rng);
      run_mul_gap(p, draw_dist(rng), rng, c < 20, false, stream, t44);
    }
    // Planes of 22500-90000 elements: one to three #44 work items (32768 elements) per plane.
    for (int c = 0; c < std::max(1, cases / 20); ++c) {
      mg::problem p = draw_mul_gap(rng);
      p.batch = rng.range(1, 3);
      p.height = rng.range(150, 300);
      p.width = rng.range(150, 300);
      run_mul_gap(p, draw_dist(rng), rng, c < 2, false, stream, t44);
    }
    // #44 paths the random sizes above do not reach:
    //  - more items than resident blocks, so blocks stream batches of up to 4 items and a batch's
    //    items belong to two samples (B=40 x C_in=61 single-item planes, 2440 items);
    //  - k = 65: tap intervals beyond the 64 cached per block, and an item state (8 + 8 + 4225
    //    doubles) too large for shared memory, so it lives in the workspace.
    run_mul_gap(mg::problem{40, 61, 37, 33, 29, 3, 2, 1, 1, 0.75f}, dist::normal, rng, true, false, stream, t44);
    run_mul_gap(mg::problem{40, 61, 37, 33, 29, 5, 3, 4, 2, -1.5f}, dist::offset, rng, false, false, stream, t44);
    run_mul_gap(mg::problem{2, 3, 5, 8, 8, 65, 1, 0, 0, 0.5f}, dist::uniform, rng, true, false, stream, t44);
    run_mul_gap(mg::problem{3, 2, 4, 9, 7, 65, 2, 30, 1, -2.0f}, dist::border_only, rng, false, false, stream, t44);
    for (int c = 0; c < cases; ++c) {
      const gl::problem p = draw_gap_lse(rng);
      run_gap_lse(p, draw_dist(rng), rng, c < 20, false, stream, t42);
    }
    if (with_default) {
      run_mul_gap(mg::problem{16, 64, 128, 128, 128, 3, 2, 1, 1, 0.5f}, dist::uniform, rng, true, bench, stream, t44);
      if (bench)  // batch x0.125: what does not scale with the input
        run_mul_gap(mg::problem{2, 64, 128, 128, 128, 3, 2, 1, 1, 0.5f}, dist::uniform, rng, false, true, stream, t44);
      run_mul_gap(mg::problem{16, 64, 128, 128, 128, 3, 2, 1, 1, -0.5f}, dist::offset, rng, false, false, stream, t44);
      run_gap_lse(gl::problem{16, 64, 128, 512, 512, 3}, dist::uniform, rng, true, bench, stream, t42);
    }
    FB_CUDA_CHECK(cudaStreamDestroy(stream));
    std::printf("convt2d_mul_gap:      %d passed, %d failed, max |dev-host| %.3g, max rel %.3g\n", t44.passed,
                t44.failed, t44.max_abs, t44.max_rel);
    std::printf("convt2d_gap_bias_lse: %d passed, %d failed, max |dev-host| %.3g, max rel %.3g\n", t42.passed,
                t42.failed, t42.max_abs, t42.max_rel);
    const int passed = t44.passed + t42.passed;
    const int failed = t44.failed + t42.failed;
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("FAIL: exception: %s\n", e.what());
    return 1;
  }
}
