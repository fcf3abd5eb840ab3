// What keeps a warp's fp64 MMAs from the pipe's rate: the #34 k16 loop's operand paths one at a
// time. Each warp runs `iters` k16 steps of 8 mma.sync.m16n8k16.f64 (2 m16 x 4 n8 accumulator
// tiles, as mma_fp64_tile.cuh's warp tile), with its operands
//   mode 0: constant registers (dmma_rate's case),
//   mode 1: A from shared memory, 16 8-byte loads per step at #34's addresses (positions
//           consecutive, channels XS = 212 doubles apart), B constant,
//   mode 2: B from global memory (a 64 KB block of "arranged weights", 4 16-byte loads per step)
//           converted to fp64 (16 conversions), A constant,
//   mode 3: both (the k16 loop's operand paths),
//   mode 15: mode 7 with B from 4 MB (each warp its own 32 KB stretch: L2, not L1) and 190 KB of
//           shared memory per block (the L1 left as small as a persistent #34 block's),
//   mode 7: both, A's channel offsets read per step from a koff table in shared memory (one 16-byte
//           load per lane and step, as #34's loop) instead of worked out from the step.
// One block of W warps per SM; prints TFLOP/s per mode and W.
//
//   dmma_feed [--iters N]
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fused/runtime/cuda_check.h"
#include "probes/probe_main.h"


constexpr int kXs = 212;               // doubles per staged channel (4 mod 16, as #34's plan)
constexpr int kSmemDoubles = 32 * kXs;  // 32 channels: 54 KB
constexpr int kBigB = 1 << 20;  // 4 MB of B; modes 2-7 use its first 64 KB (16 steps x 8 n8 tiles x 32 lanes x 4)

__device__ __forceinline__ void mma(double (&d)[4], const double (&a)[8], const double (&b)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
      "{%12,%13,%14,%15}, {%0,%1,%2,%3};"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]),
        "d"(b[2]), "d"(b[3]));
}

template <int Mode>
__global__ void __launch_bounds__(384) feed(const float* __restrict__ bglob, int iters, double* sink) {
  extern __shared__ double xs[];
  __shared__ int4 koff[16][4];  // per step and t: the byte offsets of k columns t, t + 4, t + 8, t + 12
  for (int i = threadIdx.x; i < kSmemDoubles; i += blockDim.x) xs[i] = 1.0 + 1e-6 * i;
  for (int i = threadIdx.x; i < 64; i += blockDim.x) {
    const int st = i / 4, tt = i % 4;
    auto ch = [&](int j) { return (((st & 1) * 16 + tt + 4 * j) * kXs) * 8; };
    koff[st][tt] = make_int4(ch(0), ch(1), ch(2), ch(3));
  }
  __syncthreads();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  double acc[2][4][4] = {};
  double a[2][8], b[4][4];
  for (int mt = 0; mt < 2; ++mt)
    for (int v = 0; v < 8; ++v) a[mt][v] = 1.0 + 1e-3 * (lane + v + mt);
  for (int nt = 0; nt < 4; ++nt)
    for (int v = 0; v < 4; ++v) b[nt][v] = 1.0 - 1e-3 * (lane + v + nt);
  const uint32_t xs_base = static_cast<uint32_t>(__cvta_generic_to_shared(xs));
  const float* bw = (Mode & 8) ? bglob + (static_cast<int64_t>(blockIdx.x) * 16 + warp) * 8192 % (kBigB - 8192)
                             : bglob + (warp % 2) * 512;  // two warp columns, as #34's warps
  for (int i = 0; i < iters; ++i) {
    const int step = i & 15;
    if (Mode & 2) {
      float4 r[4];
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
        r[nt] = __ldg(reinterpret_cast<const float4*>(bw + ((Mode & 8) ? (i & 7) * 1024 : step * 1024) + nt * 128 + lane * 4));
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) {
        b[nt][0] = r[nt].x;
        b[nt][1] = r[nt].y;
        b[nt][2] = r[nt].z;
        b[nt][3] = r[nt].w;
      }
    }
    if (Mode & 1) {
      // The byte offset of k column t + 4 j's channel ((step % 2) * 16 + t + 4 j): from the koff
      // table (mode 4) or worked out from the step; positions g, g + 8, + 16 mt.
      int kj[4];
      if (Mode & 4) {
        const int4 ko = koff[step][t];
        kj[0] = ko.x;
        kj[1] = ko.y;
        kj[2] = ko.z;
        kj[3] = ko.w;
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) kj[j] = ((step & 1) * 16 + t + 4 * j) * kXs * 8;
      }
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int mt = 0; mt < 2; ++mt)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            double v;
            asm volatile("ld.shared.f64 %0, [%1];" : "=d"(v) : "r"(xs_base + kj[j] + (16 * mt + 8 * h + g) * 8));
            a[mt][2 * j + h] = v;
          }
    }
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) mma(acc[mt][nt], a[mt], b[nt]);
  }
  double s = 0.0;
  for (int mt = 0; mt < 2; ++mt)
    for (int nt = 0; nt < 4; ++nt)
      for (int v = 0; v < 4; ++v) s += acc[mt][nt][v];
  if (s == 12345.678) sink[threadIdx.x] = s;
}

template <int Mode>
double run(int warps, int sms, int iters, const float* bglob, double* sink) {
  const size_t smem = (Mode & 8) ? 190 * 1024 : kSmemDoubles * sizeof(double);
  FB_CUDA_CHECK(cudaFuncSetAttribute(feed<Mode>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  cudaEvent_t e0, e1;
  FB_CUDA_CHECK(cudaEventCreate(&e0));
  FB_CUDA_CHECK(cudaEventCreate(&e1));
  feed<Mode><<<sms, 32 * warps, smem>>>(bglob, iters / 10, sink);
  FB_CUDA_CHECK(cudaEventRecord(e0));
  feed<Mode><<<sms, 32 * warps, smem>>>(bglob, iters, sink);
  FB_CUDA_CHECK(cudaEventRecord(e1));
  FB_CUDA_CHECK(cudaEventSynchronize(e1));
  FB_CUDA_CHECK(cudaGetLastError());
  float ms = 0.0f;
  FB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
  return 2.0 * 16 * 8 * 16 * 8.0 * iters * warps * static_cast<double>(sms) / (ms * 1e-3) / 1e12;
}

static int probe(int argc, char** argv) {
  int iters = 2000;
  for (int i = 1; i + 1 < argc; i += 2)
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
  cudaDeviceProp prop{};
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  float* bglob;
  double* sink;
  FB_CUDA_CHECK(cudaMalloc(&bglob, kBigB * sizeof(float)));
  FB_CUDA_CHECK(cudaMemset(bglob, 0, kBigB * sizeof(float)));
  FB_CUDA_CHECK(cudaMalloc(&sink, 1024 * sizeof(double)));
  const int sms = prop.multiProcessorCount;
  std::printf("DMMAFEED %s: 8 MMAs per k16 step per warp; TFLOP/s by operand path\n", prop.name);
  for (int w : {4, 8, 12}) {
    std::printf("DMMAFEED warps/SM %2d (%d per scheduler): regs %6.2f | A from smem %6.2f | B from global + cvt %6.2f | both %6.2f | both, koff table %6.2f | that, B from L2 %6.2f\n",
                w, w / 4, run<0>(w, sms, iters, bglob, sink), run<1>(w, sms, iters, bglob, sink),
                run<2>(w, sms, iters, bglob, sink), run<3>(w, sms, iters, bglob, sink), run<7>(w, sms, iters, bglob, sink), run<15>(w, sms, iters, bglob, sink));
  }
  return 0;
}

int main(int argc, char** argv) {
  return fb::probes::run_probe("dmma_feed", [&] { return probe(argc, argv); });
}
