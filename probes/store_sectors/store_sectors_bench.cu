// Store-pattern probe: does a 32-byte sector written in two halves cost DRAM traffic beyond the
// output's bytes on this GPU, and does it matter how far apart in time the halves arrive?
// #15's writing pass stores, per phase, every s-th float of a row (lane = base q, output q*s+r-p):
// each sector gets its halves from two phases ~15 us apart. Patterns over a 252 MB buffer:
//   contig       one store instruction per 32 consecutive floats (the floor)
//   halves_2k    evens in one kernel, odds in a second (halves ~80 us apart)
//   halves_adj   per warp and 64 floats: a store of the evens, then of the odds (back to back)
//   halves_gapM  per warp: M chunks' evens, then the same M chunks' odds (gap grows with M)
// Prints GB/s of output bytes (median of 9 runs); run under ncu for dram__bytes_read/write.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fused/runtime/cuda_check.h"
#include "probes/probe_main.h"


__global__ void contig(float* out, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x, stride = (long)gridDim.x * blockDim.x;
  for (; i < n; i += stride) out[i] = (float)i;
}
// parity 0: evens, 1: odds, over 64-float chunks per warp.
__global__ void half_pass(float* out, long n, int parity) {
  long warp = (blockIdx.x * (long)blockDim.x + threadIdx.x) >> 5, warps = ((long)gridDim.x * blockDim.x) >> 5;
  int lane = threadIdx.x & 31;
  for (long c = warp; c * 64 < n; c += warps) out[c * 64 + 2 * lane + parity] = 1.0f;
}
// Per warp: M chunks of evens then the same M chunks of odds.
__global__ void halves_gap(float* out, long n, int m) {
  long warp = (blockIdx.x * (long)blockDim.x + threadIdx.x) >> 5, warps = ((long)gridDim.x * blockDim.x) >> 5;
  int lane = threadIdx.x & 31;
  long chunks = n / 64;
  for (long c0 = warp * m; c0 < chunks; c0 += warps * m) {
    for (int u = 0; u < m && c0 + u < chunks; ++u) out[(c0 + u) * 64 + 2 * lane] = 1.0f;
    for (int u = 0; u < m && c0 + u < chunks; ++u) out[(c0 + u) * 64 + 2 * lane + 1] = 2.0f;
  }
}

static int probe() {
  const long n = 63L * 1000 * 1000;  // 252 MB of floats, #15's output
  float* out;
  FB_CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
  int sms;
  FB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int blocks = sms * 8, threads = 256;
  cudaEvent_t a, b;
  FB_CUDA_CHECK(cudaEventCreate(&a));
  FB_CUDA_CHECK(cudaEventCreate(&b));
  auto time = [&](const char* name, auto launch) {
    std::vector<float> ms;
    for (int rep = 0; rep < 10; ++rep) {
      FB_CUDA_CHECK(cudaEventRecord(a));
      launch();
      FB_CUDA_CHECK(cudaEventRecord(b));
      FB_CUDA_CHECK(cudaEventSynchronize(b));
      float t;
      FB_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
      if (rep > 0) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const float med = ms[ms.size() / 2];
    std::printf("%-14s %8.1f us  %7.1f GB/s of output\n", name, med * 1e3, n * 4.0 / (med * 1e-3) / 1e9);
  };
  time("contig", [&] { contig<<<blocks, threads>>>(out, n); });
  time("halves_2k", [&] { half_pass<<<blocks, threads>>>(out, n, 0); half_pass<<<blocks, threads>>>(out, n, 1); });
  time("halves_adj", [&] { halves_gap<<<blocks, threads>>>(out, n, 1); });
  for (int m : {4, 16, 64, 256}) {
    char name[32];
    std::snprintf(name, sizeof name, "halves_gap%d", m);
    time(name, [&] { halves_gap<<<blocks, threads>>>(out, n, m); });
  }
  FB_CUDA_CHECK(cudaGetLastError());
  FB_CUDA_CHECK(cudaDeviceSynchronize());
  return 0;
}

int main() { return fb::probes::run_probe("store_sectors_bench", [] { return probe(); }); }
