// DMMA issue rate per warp: how many warps per SM sub-partition the fp64 tensor pipe needs.
// Each warp runs `iters` rounds of C independent mma.sync f64 (shape m16n8k16, m16n8k8 or
// m8n8k4) on register operands (no memory in the loop); blocks of W warps, one block per SM per
// wave, enough blocks for every SM. Prints TFLOP/s per (shape, warps per SM).
//
//   dmma_rate [--iters N]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fused/runtime/cuda_check.h"
#include "probes/probe_main.h"


template <int Shape, int kChains>
__global__ void __launch_bounds__(512) dmma_loop(int iters, double* sink) {
  double acc[kChains][4];
  for (int c = 0; c < kChains; ++c)
    for (int v = 0; v < 4; ++v) acc[c][v] = 0.0;
  double a[8], b[4];
  for (int v = 0; v < 8; ++v) a[v] = 1.0 + 1e-3 * (threadIdx.x + v);
  for (int v = 0; v < 4; ++v) b[v] = 1.0 - 1e-3 * (threadIdx.x + v);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      if constexpr (Shape == 16) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
            "{%12,%13,%14,%15}, {%0,%1,%2,%3};"
            : "+d"(acc[c][0]), "+d"(acc[c][1]), "+d"(acc[c][2]), "+d"(acc[c][3])
            : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
              "d"(b[1]), "d"(b[2]), "d"(b[3]));
      } else if constexpr (Shape == 8) {
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+d"(acc[c][0]), "+d"(acc[c][1]), "+d"(acc[c][2]), "+d"(acc[c][3])
            : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
      } else {
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                     : "+d"(acc[c][0]), "+d"(acc[c][1])
                     : "d"(a[0]), "d"(b[0]));
      }
    }
  }
  double s = 0.0;
  for (int c = 0; c < kChains; ++c)
    for (int v = 0; v < 4; ++v) s += acc[c][v];
  if (s == 12345.678) sink[threadIdx.x] = s;
}

template <int Shape, int kChains>
double run(int warps_per_block, int blocks, int iters, double* sink) {
  cudaEvent_t e0, e1;
  FB_CUDA_CHECK(cudaEventCreate(&e0));
  FB_CUDA_CHECK(cudaEventCreate(&e1));
  dmma_loop<Shape, kChains><<<blocks, 32 * warps_per_block>>>(iters / 10, sink);  // warm-up
  FB_CUDA_CHECK(cudaEventRecord(e0));
  dmma_loop<Shape, kChains><<<blocks, 32 * warps_per_block>>>(iters, sink);
  FB_CUDA_CHECK(cudaEventRecord(e1));
  FB_CUDA_CHECK(cudaEventSynchronize(e1));
  FB_CUDA_CHECK(cudaGetLastError());
  float ms = 0.0f;
  FB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
  const double flop_per_mma = Shape == 16 ? 2.0 * 16 * 8 * 16 : Shape == 8 ? 2.0 * 16 * 8 * 8 : 2.0 * 8 * 8 * 4;
  const double flops = flop_per_mma * kChains * iters * static_cast<double>(warps_per_block) * blocks;
  return flops / (ms * 1e-3) / 1e12;
}

static int probe(int argc, char** argv) {
  int iters = 20000;
  for (int i = 1; i + 1 < argc; i += 2)
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
  cudaDeviceProp prop{};
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  double* sink;
  FB_CUDA_CHECK(cudaMalloc(&sink, 1024 * sizeof(double)));
  const int sms = prop.multiProcessorCount;
  std::printf("DMMARATE %s, %d SMs; C chains of independent MMAs per warp; one block of W warps per SM\n", prop.name, sms);
  for (int w : {4, 8, 12, 16}) {
    const double a8 = w <= 12 ? run<16, 8>(w, sms, iters, sink) : 0.0;
    const double a4 = run<16, 4>(w, sms, iters, sink);
    const double a2 = run<16, 2>(w, sms, iters, sink);
    const double a1 = run<16, 1>(w, sms, iters, sink);
    const double b4 = run<8, 4>(w, sms, iters, sink);
    const double c4 = run<4, 4>(w, sms, iters, sink);
    std::printf("DMMARATE warps/SM %2d (%d per scheduler): m16n8k16 C=8 %6.2f C=4 %6.2f C=2 %6.2f C=1 %6.2f | m16n8k8 C=4 %6.2f | m8n8k4 C=4 %6.2f TFLOP/s\n",
                w, w / 4, a8, a4, a2, a1, b4, c4);
  }
  return 0;
}

int main(int argc, char** argv) {
  return fb::probes::run_probe("dmma_rate", [&] { return probe(argc, argv); });
}
