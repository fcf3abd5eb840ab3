#pragma once
// What the split-precision probes of issue 11 (tc_precision_bench.cu: mma.sync and DMMA;
// wgmma_bench.cu: wgmma) share: the CUDA error check, the tf32 conversion and mma.sync m16n8k8
// TF32 (fragment layouts in tc_precision_bench.cu's header), the sm_90 f64 mma.sync shapes, the timing loop, and the inputs (the
// generator, the distributions and their draws), so both measure the same numbers.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fused/runtime/cuda_check.h"

__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// The sm_90 f64 shapes (PTX ISA 7.8): m16n8k{4,8,16}. Fragments as for tf32 m16n8k8, with k
// extended in steps of 4 (g = lane / 4, t = lane % 4): A holds (g, t), (g+8, t), (g, t+4),
// (g+8, t+4), (g, t+8), ... ; B holds (t, g), (t+4, g), ... ; C/D (g, 2t) (g, 2t+1) (g+8, 2t)
// (g+8, 2t+1). (My reading of the ISA; tc_precision_bench's LAYOUT self-check is what proves it.)
template <int kK>
__device__ __forceinline__ void mma_f64_m16n8(double (&d)[4], const double (&a)[kK / 2], const double (&b)[kK / 4]) {
  if constexpr (kK == 4) {
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(b[0]));
  } else if constexpr (kK == 8) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
  } else {
    static_assert(kK == 16, "m16n8k4, k8 or k16");
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, {%0,%1,%2,%3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
          "d"(b[1]), "d"(b[2]), "d"(b[3]));
  }
}

/// Milliseconds of launch(): the median of 5 timed runs after one warm-up, cudaEvents.
template <class L>
double time_ms(L launch) {
  cudaEvent_t e0, e1;
  FB_CUDA_CHECK(cudaEventCreate(&e0));
  FB_CUDA_CHECK(cudaEventCreate(&e1));
  launch();
  FB_CUDA_CHECK(cudaGetLastError());
  FB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int r = 0; r < 5; ++r) {
    FB_CUDA_CHECK(cudaEventRecord(e0));
    launch();
    FB_CUDA_CHECK(cudaEventRecord(e1));
    FB_CUDA_CHECK(cudaEventSynchronize(e1));
    float m = 0;
    FB_CUDA_CHECK(cudaEventElapsedTime(&m, e0, e1));
    ms.push_back(m);
  }
  FB_CUDA_CHECK(cudaEventDestroy(e0));
  FB_CUDA_CHECK(cudaEventDestroy(e1));
  std::sort(ms.begin(), ms.end());
  return ms[2];
}

/// The inputs' generator (splitmix64), seeded per (K, distribution).
struct rng_t {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double u01() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  double normal() { return std::sqrt(-2.0 * std::log(std::max(u01(), 1e-300))) * std::cos(6.283185307179586 * u01()); }
};

/// Distributions of the activations (x); integers are small and exact in every scheme (layout checks).
enum class dist { uniform, normal, offset, sparse, integers };
inline const char* dist_name(dist d) {
  switch (d) {
    case dist::uniform: return "uniform";
    case dist::normal: return "normal";
    case dist::offset: return "offset+100";
    case dist::sparse: return "sparse";
    default: return "integers";
  }
}

/// One activation drawn from d.
inline float draw_x(dist d, rng_t& rng) {
  switch (d) {
    case dist::integers: return static_cast<float>(static_cast<int>(rng.next() % 9) - 4);
    case dist::uniform: return static_cast<float>(rng.u01());
    case dist::normal: return static_cast<float>(rng.normal());
    case dist::offset: return static_cast<float>(100.0 + rng.u01());
    default: return rng.u01() < 0.05 ? static_cast<float>(10.0 * rng.normal()) : 0.0f;  // sparse
  }
}
