// liveness_controls: test-only CUDA kernels with planted ordering defects, and their fixed twins,
// for the GPU gate's liveness check (scripts/gpu-gate: "liveness: N/N planted controls caught").
// Built into this test binary only, never into the fusebench libraries. The namespace holds "fused"
// so that the gate's sanitizer filter for the fused kernels (--kernel-name kns=fused) takes these
// kernels too: a control caught under that filter proves the filter does not skip such kernels.
//
//   smem_race   a block's threads write shared memory and read other threads' elements with no
//               barrier between (the fixed twin has __syncthreads()): racecheck must report it.
//   cp_async    a two-stage cp.async pipeline that reads a stage after the block barrier but
//               without waiting for its copies (cp.async.wait_group; the fixed twin waits): the
//               shape of the fused kernels' staging. racecheck must report it.
//   fence       a cross-block arrival counter without the release fence before the arrival (the
//               fixed twin has __threadfence()): every block writes its row, arrives, and the last
//               block to arrive reads every row. racecheck cannot see global-memory ordering
//               between blocks; the stress stage runs it many times beside the SM hog and counts
//               rows the last block read stale. Caught only when the hardware reorders in fact (see
//               the README: not guaranteed); the gate's SASS fence lint catches the missing fence
//               deterministically.
//
// Usage: liveness_controls --control NAME [--fixed] [--runs R] [--stress] [--seed S]
//        liveness_controls --list
// Prints one CONTROL line: "CONTROL <name> <defective|fixed>: runs R, bitwise identical I, stale
// rows S, checksum C"; exits 0 when it ran (the gate judges), 2 on bad usage; without a GPU it
// prints "SKIPPED: no CUDA device" and exits 0.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "property_tests/sm_hog.h"

namespace fb::fused_liveness {

constexpr int k_threads = 256;
/// Another warp's element: (t + k_skew) % k_threads is never in t's warp.
constexpr int k_skew = 37;

#define FB_LIVENESS_CHECK(call)                                                                     \
  do {                                                                                              \
    const cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess) throw std::runtime_error(std::string(#call) + ": " + cudaGetErrorString(e_)); \
  } while (0)

// ---- shared-memory race --------------------------------------------------------------------------
template <bool kFixed>
__global__ void __launch_bounds__(k_threads) smem_race_kernel(const float* in, float* out) {
  __shared__ float tile[k_threads];
  const int t = static_cast<int>(threadIdx.x);
  const int64_t base = static_cast<int64_t>(blockIdx.x) * k_threads;
  tile[t] = in[base + t] * 2.0f + 1.0f;
  if (kFixed) __syncthreads();  // the defect: without it the read below races with another warp's write
  out[base + t] = tile[(t + k_skew) % k_threads];
}

// ---- asynchronous copy read before its wait ------------------------------------------------------
__device__ __forceinline__ void copy_async4(float* dst, const float* src) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d), "l"(src) : "memory");
}
__device__ __forceinline__ void copy_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void copy_wait_all_but_last() { asm volatile("cp.async.wait_group 1;" ::: "memory"); }
__device__ __forceinline__ void copy_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

template <bool kFixed>
__global__ void __launch_bounds__(k_threads) cp_async_kernel(const float* in, float* out, int chunks) {
  __shared__ float stage[2][k_threads];
  const int t = static_cast<int>(threadIdx.x);
  const float* src = in + static_cast<int64_t>(blockIdx.x) * chunks * k_threads;
  copy_async4(&stage[0][t], src + t);
  copy_commit();
  float acc = 0.0f;
  for (int c = 0; c < chunks; ++c) {
    if (c + 1 < chunks) copy_async4(&stage[(c + 1) & 1][t], src + static_cast<int64_t>(c + 1) * k_threads + t);
    copy_commit();  // (an empty group on the last chunk keeps the count uniform)
    if (kFixed) copy_wait_all_but_last();  // the defect: without it chunk c's copies may not have landed
    __syncthreads();
    acc += stage[c & 1][(t + k_skew) % k_threads] * static_cast<float>(c + 1);
    __syncthreads();  // the stage is refilled two chunks later
  }
  copy_wait_all();
  out[static_cast<int64_t>(blockIdx.x) * k_threads + t] = acc;
}

// ---- cross-block arrival without the release fence -----------------------------------------------
/// Row value (b, i): never 0 (rows are poisoned with 0 before each run).
__host__ __device__ inline float row_value(int b, int i) { return static_cast<float>((b * 131 + i * 7) % 1021 + 1); }

constexpr int k_row_floats = 4096;  // 16 KB per block: 16 stores per thread in flight at the arrival
constexpr int k_recent = 64;        // arrivals the last block checks first

template <bool kFixed>
__global__ void __launch_bounds__(k_threads) fence_kernel(float* rows, unsigned* arrived, int* arrival_order,
                                                          float* out) {
  __shared__ int is_last;
  __shared__ int stale_sum[k_threads / 32];
  const int b = static_cast<int>(blockIdx.x);
  const int t = static_cast<int>(threadIdx.x);
  float* row = rows + static_cast<int64_t>(b) * k_row_floats;
  for (int i = t; i < k_row_floats; i += k_threads) row[i] = row_value(b, i);
  __syncthreads();
  if (t == 0) {
    if (kFixed) __threadfence();  // the defect: without it the row's stores may land after the arrival
    const unsigned before = atomicAdd(arrived, 1u);
    atomicExch(arrival_order + before, b);  // the order log (atomics: coherent at L2)
    is_last = before + 1 == gridDim.x;
    if (is_last) __threadfence();  // acquire: present in both versions (the defect is the release only)
  }
  __syncthreads();
  if (!is_last) return;
  // The rows of the blocks that arrived just before this one first (the ones whose stores may still
  // be in flight), then every row; a row element that still holds the poison is stale.
  const int n = static_cast<int>(gridDim.x);
  int stale = 0;
  for (int r = 0; r < k_recent && r < n - 1; ++r) {
    const int who = atomicAdd(arrival_order + (n - 2 - r), 0);
    if (who < 0) continue;
    const float* other = rows + static_cast<int64_t>(who) * k_row_floats;
    for (int i = t; i < k_row_floats; i += k_threads) stale += __ldcg(other + i) != row_value(who, i);
  }
  for (int who = 0; who < n; ++who) {
    const float* other = rows + static_cast<int64_t>(who) * k_row_floats;
    for (int i = t; i < k_row_floats; i += k_threads) stale += __ldcg(other + i) != row_value(who, i);
  }
  for (int o = 16; o > 0; o >>= 1) stale += __shfl_down_sync(0xffffffffu, stale, o);
  if ((t & 31) == 0) stale_sum[t >> 5] = stale;
  __syncthreads();
  if (t == 0) {
    int s = 0;
    for (int w = 0; w < k_threads / 32; ++w) s += stale_sum[w];
    out[0] = static_cast<float>(s);
  }
}

// ---- host ------------------------------------------------------------------------------------------
struct device_floats {
  float* p = nullptr;
  explicit device_floats(std::size_t n) { FB_LIVENESS_CHECK(cudaMalloc(&p, n * sizeof(float))); }
  ~device_floats() { cudaFree(p); }
  device_floats(const device_floats&) = delete;
  device_floats& operator=(const device_floats&) = delete;
};

struct options {
  std::string control;
  bool fixed = false;
  int runs = 1;
  bool stress = false;
  uint64_t seed = 20261126;
};

/// One run's output (launch on `s`, hog beside it when `hog`), downloaded.
using run_fn = std::vector<float> (*)(const options&, cudaStream_t, fb::stress::sm_hog*, const fb::stress::perturbation*);

std::vector<float> download(const float* p, std::size_t n) {
  std::vector<float> h(n);
  FB_LIVENESS_CHECK(cudaMemcpy(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

template <class Launch>
void launch_with_hog(fb::stress::sm_hog* hog, const fb::stress::perturbation* p, const Launch& launch) {
  if (hog != nullptr && p != nullptr && p->hog_first) hog->launch(*p);
  launch();
  if (hog != nullptr && p != nullptr && !p->hog_first) hog->launch(*p);
}

int sm_count() {
  int dev = 0, sms = 0;
  FB_LIVENESS_CHECK(cudaGetDevice(&dev));
  FB_LIVENESS_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

/// Inputs of the shared-memory controls: value i = i % 97 + 1.
std::vector<float> ramp(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 97 + 1);
  return v;
}

std::vector<float> run_smem_race(const options& o, cudaStream_t s, fb::stress::sm_hog* hog,
                                 const fb::stress::perturbation* p) {
  const int blocks = 2 * sm_count();
  const std::size_t n = static_cast<std::size_t>(blocks) * k_threads;
  const std::vector<float> h = ramp(n);
  device_floats in(n), out(n);
  FB_LIVENESS_CHECK(cudaMemcpy(in.p, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  launch_with_hog(hog, p, [&] {
    if (o.fixed) smem_race_kernel<true><<<blocks, k_threads, 0, s>>>(in.p, out.p);
    else smem_race_kernel<false><<<blocks, k_threads, 0, s>>>(in.p, out.p);
  });
  FB_LIVENESS_CHECK(cudaGetLastError());
  FB_LIVENESS_CHECK(cudaStreamSynchronize(s));
  return download(out.p, n);
}

std::vector<float> run_cp_async(const options& o, cudaStream_t s, fb::stress::sm_hog* hog,
                                const fb::stress::perturbation* p) {
  const int blocks = 2 * sm_count(), chunks = 8;
  const std::size_t n_in = static_cast<std::size_t>(blocks) * chunks * k_threads;
  const std::size_t n_out = static_cast<std::size_t>(blocks) * k_threads;
  const std::vector<float> h = ramp(n_in);
  device_floats in(n_in), out(n_out);
  FB_LIVENESS_CHECK(cudaMemcpy(in.p, h.data(), n_in * sizeof(float), cudaMemcpyHostToDevice));
  launch_with_hog(hog, p, [&] {
    if (o.fixed) cp_async_kernel<true><<<blocks, k_threads, 0, s>>>(in.p, out.p, chunks);
    else cp_async_kernel<false><<<blocks, k_threads, 0, s>>>(in.p, out.p, chunks);
  });
  FB_LIVENESS_CHECK(cudaGetLastError());
  FB_LIVENESS_CHECK(cudaStreamSynchronize(s));
  return download(out.p, n_out);
}

std::vector<float> run_fence(const options& o, cudaStream_t s, fb::stress::sm_hog* hog,
                             const fb::stress::perturbation* p) {
  // Every block resident at once (256 threads, no dynamic shared memory): arrivals come close together.
  const int blocks = 4 * sm_count();
  static std::unique_ptr<device_floats> rows, out;
  static unsigned* arrived = nullptr;
  static int* order = nullptr;
  if (!rows) {
    rows = std::make_unique<device_floats>(static_cast<std::size_t>(blocks) * k_row_floats);
    out = std::make_unique<device_floats>(1);
    FB_LIVENESS_CHECK(cudaMalloc(&arrived, sizeof(unsigned)));
    FB_LIVENESS_CHECK(cudaMalloc(&order, static_cast<std::size_t>(blocks) * sizeof(int)));
  }
  FB_LIVENESS_CHECK(cudaMemsetAsync(rows->p, 0, static_cast<std::size_t>(blocks) * k_row_floats * sizeof(float), s));
  FB_LIVENESS_CHECK(cudaMemsetAsync(arrived, 0, sizeof(unsigned), s));
  FB_LIVENESS_CHECK(cudaMemsetAsync(order, 0xff, static_cast<std::size_t>(blocks) * sizeof(int), s));
  FB_LIVENESS_CHECK(cudaStreamSynchronize(s));
  launch_with_hog(hog, p, [&] {
    if (o.fixed) fence_kernel<true><<<blocks, k_threads, 0, s>>>(rows->p, arrived, order, out->p);
    else fence_kernel<false><<<blocks, k_threads, 0, s>>>(rows->p, arrived, order, out->p);
  });
  FB_LIVENESS_CHECK(cudaGetLastError());
  FB_LIVENESS_CHECK(cudaStreamSynchronize(s));
  return download(out->p, 1);
}

struct control {
  const char* name;
  run_fn run;
  bool stale_count;  ///< output[0] counts stale reads (the fence control)
};

const control k_controls[] = {
    {"smem_race", run_smem_race, false},
    {"cp_async", run_cp_async, false},
    {"fence", run_fence, true},
};

int run(const options& o) {
  const control* c = nullptr;
  for (const control& k : k_controls)
    if (o.control == k.name) c = &k;
  if (c == nullptr) {
    std::fprintf(stderr, "liveness_controls: unknown control '%s' (--list names them)\n", o.control.c_str());
    return 2;
  }
  cudaStream_t s = nullptr;
  FB_LIVENESS_CHECK(cudaStreamCreate(&s));
  std::unique_ptr<fb::stress::sm_hog> hog;
  if (o.stress) hog = std::make_unique<fb::stress::sm_hog>();
  const std::vector<float> first = c->run(o, s, nullptr, nullptr);
  int identical = 0, stale_runs = 0;
  double stale_rows = c->stale_count ? first[0] : 0.0;
  stale_runs += c->stale_count && first[0] != 0.0f;
  double checksum = 0.0;
  for (float v : first) checksum += v;
  std::string first_diff;
  for (int r = 1; r < o.runs; ++r) {
    fb::stress::perturbation p;
    if (hog) p = hog->draw(o.seed, r);
    const std::vector<float> got = c->run(o, s, hog.get(), hog ? &p : nullptr);
    if (hog) hog->wait();
    if (std::memcmp(got.data(), first.data(), got.size() * sizeof(float)) == 0) ++identical;
    else if (first_diff.empty()) first_diff = "run " + std::to_string(r + 1) + (hog ? " (" + p.describe() + ")" : "");
    if (c->stale_count) {
      stale_rows += got[0];
      stale_runs += got[0] != 0.0f;
    }
  }
  FB_LIVENESS_CHECK(cudaStreamDestroy(s));
  std::printf("CONTROL %s %s: runs %d, bitwise identical %d%s, stale reads %.0f in %d runs, checksum %.9g%s%s\n",
              c->name, o.fixed ? "fixed" : "defective", o.runs - 1, identical, o.stress ? " (beside the SM hog)" : "",
              stale_rows, stale_runs, checksum, first_diff.empty() ? "" : "; first difference: ", first_diff.c_str());
  return 0;
}

}  // namespace fb::fused_liveness

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  fb::fused_liveness::options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list") {
      for (const auto& c : fb::fused_liveness::k_controls) std::printf("%s\n", c.name);
      return 0;
    } else if (a == "--control" && i + 1 < argc) {
      o.control = argv[++i];
    } else if (a == "--fixed") {
      o.fixed = true;
    } else if (a == "--runs" && i + 1 < argc) {
      o.runs = std::atoi(argv[++i]) + 1;
    } else if (a == "--stress") {
      o.stress = true;
    } else if (a == "--seed" && i + 1 < argc) {
      o.seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      o.control.clear();
      break;
    }
  }
  if (o.control.empty() || o.runs < 1) {
    std::fprintf(stderr, "usage: %s --control NAME [--fixed] [--runs R] [--stress] [--seed S] | --list\n", argv[0]);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 0;
  }
  try {
    return fb::fused_liveness::run(o);
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
