#include "harness/bench/device_timing.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "fused/arch/mma_f64.cuh"
#include "fused/runtime/cuda_check.h"

namespace fb::bench {
namespace {

constexpr int timed_runs = 9;  // odd, so the median is one measured run

double median_of(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

int current_device() {
  int device = 0;
  FB_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

std::string version_string(int v) {  // CUDA encodes 13.0 as 13000
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

/// The first token that starts with a digit after "Kernel Module": "NVRM version: NVIDIA UNIX x86_64
/// Kernel Module  580.65.06 ..." and "... Open Kernel Module for x86_64  580.159.04 ..." -> the
/// version; empty when there is none.
std::string kernel_module_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return {};
  const auto pos = line.find("Kernel Module");
  if (pos == std::string::npos) return {};
  std::istringstream rest(line.substr(pos + 13));
  std::string token;
  while (rest >> token)
    if (!token.empty() && token.front() >= '0' && token.front() <= '9') return token;
  return {};
}

constexpr int fma_chains = 8;  // independent chains hide the 4-cycle FMA latency

__global__ void fma_kernel(float* out, int iterations, float multiplier, float addend) {
  float acc[fma_chains];
#pragma unroll
  for (int c = 0; c < fma_chains; ++c) acc[c] = static_cast<float>(threadIdx.x + c);
  // Unrolled so that loop control is a few percent of the issue slots, not 2 in 10: a measured
  // "peak" below the true one would flag fast, correct kernels as IMPOSSIBLE.
#pragma unroll 8
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < fma_chains; ++c) acc[c] = fmaf(acc[c], multiplier, addend);
  }
  float sum = 0.0f;
#pragma unroll
  for (int c = 0; c < fma_chains; ++c) sum += acc[c];
  // One store per thread keeps the chains alive; its cost is nothing next to the FMAs.
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

constexpr int mma_chains = 4;  // independent accumulator tiles per warp: the MMA's latency hidden

// Each warp runs mma_chains independent chains of mma.sync m16n8k16 f64 (D = A B + D) from
// registers: the fp64 tensor cores' rate without memory in the way. A and B change slowly (a
// multiplier below 1) so that the compiler cannot hoist anything. sm_90 only (the instruction
// does not exist before); elsewhere the kernel does no MMAs and the rate is not measured. Six blocks
// of 4 warps per SM (74 registers, no spills; 8 would spill): 96 MMA chains per SM, so that the
// measured peak is the units' own (one below it would flag fast, correct kernels IMPOSSIBLE).
__global__ void __launch_bounds__(128, 6) dmma_kernel(double* out, int iterations) {
  double a[1][fb::fused::arch::mma::k_a_regs], b[1][fb::fused::arch::mma::k_b_regs], d[mma_chains][1][fb::fused::arch::mma::k_c_regs];
#pragma unroll
  for (int v = 0; v < fb::fused::arch::mma::k_a_regs; ++v) a[0][v] = 1e-3 * (threadIdx.x + v);
#pragma unroll
  for (int v = 0; v < fb::fused::arch::mma::k_b_regs; ++v) b[0][v] = 0.5 - 1e-3 * v;
#pragma unroll
  for (int c = 0; c < mma_chains; ++c)
#pragma unroll
    for (int v = 0; v < fb::fused::arch::mma::k_c_regs; ++v) d[c][0][v] = c + v;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const fb::fused::arch::mma::device_lane lane{static_cast<int>(threadIdx.x % 32)};
#pragma unroll 4
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < mma_chains; ++c) lane.mma(d[c], a, b);
  }
#endif
  double sum = 0.0;
#pragma unroll
  for (int c = 0; c < mma_chains; ++c)
#pragma unroll
    for (int v = 0; v < fb::fused::arch::mma::k_c_regs; ++v) sum += d[c][0][v];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

/// Runs `launch(iterations)` with the iteration count grown until one launch lasts ~20 ms (launch
/// overhead and clock ramp-up then negligible); returns the median of timed_runs rates of
/// flop_per_iteration * iterations / seconds [FLOP/s].
template <class Launch>
double calibrated_rate(fused::stream_t stream, double flop_per_iteration, Launch launch) {
  cuda_timer timer;
  const auto run = [&](int iterations) {
    timer.start(stream);
    launch(iterations);
    FB_CUDA_CHECK(cudaGetLastError());
    timer.stop(stream);
    return timer.get_elapsed();
  };
  int iterations = 1024;
  double seconds = run(iterations);
  while (seconds < 0.02 && iterations < (1 << 24)) {
    const double scale = std::clamp(0.02 / std::max(seconds, 1e-6), 2.0, 64.0);
    iterations = static_cast<int>(std::min<double>(iterations * scale, 1 << 24));
    seconds = run(iterations);
  }
  std::vector<double> rates;
  for (int i = 0; i < timed_runs; ++i) rates.push_back(flop_per_iteration * iterations / run(iterations));
  return median_of(std::move(rates));
}

/// Blocks of `threads` threads for exactly one full wave of `kernel` (no tail effect).
int one_wave(const void* kernel, int threads) {
  int sm_count = 0;
  FB_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, current_device()));
  int blocks_per_sm = 0;
  FB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, threads, 0));
  return sm_count * std::max(blocks_per_sm, 1);
}

}  // namespace

cuda_timer::cuda_timer() {
  FB_CUDA_CHECK(cudaEventCreate(&m_start));
  FB_CUDA_CHECK(cudaEventCreate(&m_stop));
}

cuda_timer::~cuda_timer() {
  // Destructors must not throw; a failed destroy at teardown changes no measurement.
  if (m_start != nullptr) (void)cudaEventDestroy(m_start);
  if (m_stop != nullptr) (void)cudaEventDestroy(m_stop);
}

void cuda_timer::start(fused::stream_t stream) { FB_CUDA_CHECK(cudaEventRecord(m_start, stream)); }

void cuda_timer::stop(fused::stream_t stream) { FB_CUDA_CHECK(cudaEventRecord(m_stop, stream)); }

double cuda_timer::get_elapsed() const {
  FB_CUDA_CHECK(cudaEventSynchronize(m_stop));
  float ms = 0.0f;
  FB_CUDA_CHECK(cudaEventElapsedTime(&ms, m_start, m_stop));
  return static_cast<double>(ms) * 1e-3;
}

namespace {

constexpr int flush_threads = 256;

/// Reads n4 float4 with a grid-stride loop (4 loads in flight per thread); stores only when the sum
/// hits a value it practically never does, so the loads cannot be dropped.
__global__ void __launch_bounds__(flush_threads) read_kernel(const float4* __restrict__ p, std::size_t n4, float* sink) {
  float acc = 0.0f;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    const float4 a = __ldcg(p + i), b = __ldcg(p + i + stride), c = __ldcg(p + i + 2 * stride),
                 d = __ldcg(p + i + 3 * stride);
    acc += (a.x + b.y) + (c.z + d.w);
  }
  for (; i < n4; i += stride) acc += __ldcg(p + i).x;
  if (acc == -1234.5f) sink[blockIdx.x] = acc;
}

/// A second read pattern for the bandwidth calibration: each warp reads whole 4 KB pieces, 8
/// 16-byte loads per lane in flight (the streaming pattern of the fused kernels). n4 % 256 == 0.
__global__ void __launch_bounds__(flush_threads) piece_read_kernel(const float4* __restrict__ p, std::size_t n4,
                                                                   float* sink) {
  constexpr int per_lane = 8;
  const std::size_t lane = threadIdx.x & 31u;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * (blockDim.x / 32);
  float acc = 0.0f;
  for (std::size_t piece = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; piece * 256 < n4;
       piece += warps) {
    float4 r[per_lane];
#pragma unroll
    for (int u = 0; u < per_lane; ++u) r[u] = __ldg(p + piece * 256 + lane + 32 * u);
#pragma unroll
    for (int u = 0; u < per_lane; ++u) acc += r[u].x + r[u].w;
  }
  if (acc == -1234.5f) sink[blockIdx.x] = acc;
}

}  // namespace

buffer_reader::buffer_reader() {
  int sms = 0;
  int per_sm = 0;
  FB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, current_device()));
  FB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_kernel, flush_threads, 0));
  m_blocks = std::max(1, sms * per_sm);
  FB_CUDA_CHECK(cudaMalloc(&m_sink, static_cast<std::size_t>(m_blocks) * sizeof(float)));
}

buffer_reader::~buffer_reader() {
  if (m_sink != nullptr) (void)cudaFree(m_sink);
}

void buffer_reader::read(const void* p, std::size_t bytes, fused::stream_t stream) {
  read_kernel<<<m_blocks, flush_threads, 0, stream>>>(static_cast<const float4*>(p), bytes / 16, m_sink);
  FB_CUDA_CHECK(cudaGetLastError());
}

l2_flusher::l2_flusher() {
  const int device = current_device();
  int l2 = 0;
  FB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  int max_persisting = 0;
  FB_CUDA_CHECK(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device));
  if (max_persisting > 0) {  // devices without persisting L2 reject the limit
    FB_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
    FB_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
  }
  m_bytes = std::max<std::size_t>(2 * static_cast<std::size_t>(l2), std::size_t{1} << 20) & ~std::size_t{15};
  FB_CUDA_CHECK(cudaMalloc(&m_buffer, m_bytes));
  try {
    FB_CUDA_CHECK(cudaMemset(m_buffer, 0, m_bytes));  // defined contents; written back long before timing
  } catch (...) {
    (void)cudaFree(m_buffer);
    throw;
  }
}

l2_flusher::~l2_flusher() {
  if (m_buffer != nullptr) (void)cudaFree(m_buffer);
}

void l2_flusher::flush(fused::stream_t stream) { m_reader.read(m_buffer, m_bytes, stream); }

device_info device_description() {
  const int device = current_device();
  cudaDeviceProp prop{};
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int driver = 0;
  int runtime = 0;
  FB_CUDA_CHECK(cudaDriverGetVersion(&driver));
  FB_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  device_info info;
  info.name = prop.name;
  info.sm_count = prop.multiProcessorCount;
  info.l2_bytes = prop.l2CacheSize;
  const std::string module = kernel_module_version();
  info.driver = module.empty() ? "CUDA " + version_string(driver) : module + " (CUDA " + version_string(driver) + ")";
  info.cuda_runtime = version_string(runtime);
  return info;
}

double measure_copy_bandwidth(fused::stream_t stream) {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  FB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Two buffers of up to 1 GiB each: far beyond L2, so the copy streams from and to DRAM.
  const std::size_t bytes = std::min<std::size_t>(std::size_t{1} << 30, free_bytes / 4) & ~std::size_t{255};
  void* src = nullptr;
  void* dst = nullptr;
  FB_CUDA_CHECK(cudaMalloc(&src, bytes));
  try {
    FB_CUDA_CHECK(cudaMalloc(&dst, bytes));
    FB_CUDA_CHECK(cudaMemsetAsync(src, 1, bytes, stream));
    FB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));  // warm-up
    cuda_timer timer;
    std::vector<double> rates;
    for (int i = 0; i < timed_runs; ++i) {
      timer.start(stream);
      FB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
      timer.stop(stream);
      rates.push_back(2.0 * static_cast<double>(bytes) / timer.get_elapsed());  // read + write
    }
    FB_CUDA_CHECK(cudaFree(dst));
    FB_CUDA_CHECK(cudaFree(src));
    return median_of(std::move(rates));
  } catch (...) {
    (void)cudaFree(dst);
    (void)cudaFree(src);
    throw;
  }
}

double measure_read_bandwidth(fused::stream_t stream) {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  FB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t bytes = std::min<std::size_t>(std::size_t{1} << 30, free_bytes / 4) & ~std::size_t{4095};
  int sms = 0;
  int per_sm = 0;
  FB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, current_device()));
  FB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, piece_read_kernel, flush_threads, 0));
  const int piece_blocks = std::max(1, sms * per_sm);  // one full wave
  buffer_reader reader;  // the threads-striding pattern
  void* src = nullptr;
  float* sink = nullptr;
  FB_CUDA_CHECK(cudaMalloc(&src, bytes));
  try {
    FB_CUDA_CHECK(cudaMalloc(&sink, static_cast<std::size_t>(piece_blocks) * sizeof(float)));
    FB_CUDA_CHECK(cudaMemsetAsync(src, 1, bytes, stream));
    const auto* p = static_cast<const float4*>(src);
    // Two read patterns (grid-stride threads; warps on whole pieces); the faster one counts: a
    // floor must not be beaten by a kernel that happens to read better than the calibration.
    const auto rate_of = [&](auto launch) {
      launch();  // warm-up (and the memset's dirty lines written back)
      cuda_timer timer;
      std::vector<double> rates;
      for (int i = 0; i < timed_runs; ++i) {
        timer.start(stream);
        launch();
        timer.stop(stream);
        rates.push_back(static_cast<double>(bytes) / timer.get_elapsed());
      }
      return median_of(std::move(rates));
    };
    const double threads_rate = rate_of([&] { reader.read(src, bytes, stream); });
    const double pieces_rate = rate_of([&] {
      piece_read_kernel<<<piece_blocks, flush_threads, 0, stream>>>(p, bytes / 16, sink);
      FB_CUDA_CHECK(cudaGetLastError());
    });
    FB_CUDA_CHECK(cudaFree(sink));
    FB_CUDA_CHECK(cudaFree(src));
    return std::max(threads_rate, pieces_rate);
  } catch (...) {
    (void)cudaFree(sink);
    (void)cudaFree(src);
    throw;
  }
}

double measure_fp32_peak(fused::stream_t stream) {
  constexpr int threads = 256;
  const int blocks = one_wave(reinterpret_cast<const void*>(fma_kernel), threads);
  float* out = nullptr;
  FB_CUDA_CHECK(cudaMalloc(&out, static_cast<std::size_t>(blocks) * threads * sizeof(float)));
  try {
    const double rate = calibrated_rate(stream, 2.0 * fma_chains * blocks * threads, [&](int iterations) {
      fma_kernel<<<blocks, threads, 0, stream>>>(out, iterations, 0.999999f, 1e-7f);
    });
    FB_CUDA_CHECK(cudaFree(out));
    return rate;
  } catch (...) {
    (void)cudaFree(out);
    throw;
  }
}

double measure_fp64_mma_peak(fused::stream_t stream) {
  int major = 0;
  FB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, current_device()));
  if (major < 9) return 0.0;  // no m16n8k16 f64 before sm_90
  constexpr int threads = 128;
  const int blocks = one_wave(reinterpret_cast<const void*>(dmma_kernel), threads);
  double* out = nullptr;
  FB_CUDA_CHECK(cudaMalloc(&out, static_cast<std::size_t>(blocks) * threads * sizeof(double)));
  try {
    const double warps = static_cast<double>(blocks) * threads / 32;
    const double flop_per_mma = 2.0 * fb::fused::arch::mma::k_m * fb::fused::arch::mma::k_n * fb::fused::arch::mma::k_k;
    const double rate = calibrated_rate(stream, flop_per_mma * mma_chains * warps, [&](int iterations) {
      dmma_kernel<<<blocks, threads, 0, stream>>>(out, iterations);
    });
    FB_CUDA_CHECK(cudaFree(out));
    return rate;
  } catch (...) {
    (void)cudaFree(out);
    throw;
  }
}

}  // namespace fb::bench
