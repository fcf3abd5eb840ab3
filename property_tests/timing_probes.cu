#include "property_tests/timing_probes.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "fused/common/cuda_check.h"

namespace fb::probes {
namespace {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(unsigned long long ns) {
  const unsigned long long t0 = global_ns();
  while (global_ns() - t0 < ns) {
  }
}

__global__ void empty() {}

constexpr int k_read_blocks_max = 132 * 8;  // a sink bound; the grid is one wave of resident blocks
constexpr int k_read_threads = 256;

__global__ void __launch_bounds__(k_read_threads) read_kernel(const float4* __restrict__ x, int64_t n4, float* sink) {
  float acc = 0.0f;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n4; i += 4 * stride) {  // 4 independent 16-byte loads in flight
    const float4 a = __ldg(x + i), b = __ldg(x + i + stride), c = __ldg(x + i + 2 * stride),
                 d = __ldg(x + i + 3 * stride);
    acc += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) + (d.x + d.y + d.z + d.w);
  }
  for (; i < n4; i += stride) {
    const float4 a = __ldg(x + i);
    acc += a.x + a.y + a.z + a.w;
  }
  if (acc == 123456.789f) sink[blockIdx.x] = acc;  // keeps the loads; practically never taken
}

}  // namespace

void spin(cudaStream_t stream, double microseconds) {
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(microseconds * 1e3));
  FB_CUDA_CHECK(cudaGetLastError());
}

void empty_kernel(cudaStream_t stream) {
  empty<<<1, 32, 0, stream>>>();
  FB_CUDA_CHECK(cudaGetLastError());
}

int64_t read_sink_floats() { return 4 * k_read_blocks_max; }

void read_only(const float* x, int64_t n, float* sink, cudaStream_t stream) {
  static const int blocks = [] {  // one full wave: no tail of late blocks
    int dev = 0, sms = 0, per_sm = 0;
    FB_CUDA_CHECK(cudaGetDevice(&dev));
    FB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    FB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_kernel, k_read_threads, 0));
    return std::min(sms * per_sm, 4 * k_read_blocks_max);
  }();
  read_kernel<<<blocks, k_read_threads, 0, stream>>>(reinterpret_cast<const float4*>(x), n / 4, sink);
  FB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace fb::probes
