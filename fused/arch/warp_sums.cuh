#pragma once
/// Device-only streaming sums (nvcc only): one warp sums a contiguous fp32 range with 16-byte
/// coalesced loads, kUnroll float4 loads per lane in flight, scalar head/tail for ranges whose start
/// is not 16-byte aligned or whose length is not a multiple of 4.
#if !defined(__CUDACC__)
#error "fused/arch/warp_sums.cuh is CUDA-only"
#endif
#include <cstdint>

namespace fb::fused::arch {

/// Precision of the per-float4 sum. kExact: every element converted to fp64 (exact) before adding;
/// needed where sums are later cancelled by inclusion-exclusion (#44). Otherwise the 4 lanes of a
/// float4 are paired in fp32 ((x+y)+(z+w): <= 2 roundings of 4 elements, ~1e-7 of their magnitude,
/// random across float4s) and then added in fp64; 4x fewer fp32->fp64 conversions for #42, whose
/// plane sums are used directly, never cancelled.
template <bool kExact>
__device__ __forceinline__ double sum4(const float4 v) {
  if constexpr (kExact) {
    return (static_cast<double>(v.x) + static_cast<double>(v.y)) +
           (static_cast<double>(v.z) + static_cast<double>(v.w));
  } else {
    return static_cast<double>((v.x + v.y) + (v.z + v.w));
  }
}

/// This lane's fp64 share of sum(p[0..n)); the caller reduces over the warp (all 32 lanes call it
/// with the same p, n). The element-to-lane assignment depends only on (p mod 16, n), so results are
/// deterministic. Accumulation: fp64 per lane over at most n/32 float4 sums.
template <int kUnroll, bool kExact>
__device__ __forceinline__ double warp_lane_range_sum(const float* __restrict__ p, int64_t n, int lane) {
  // Floats before the first 16-byte boundary (x is 4-byte aligned as any float pointer).
  int64_t head = static_cast<int64_t>((4u - ((static_cast<unsigned>(reinterpret_cast<uintptr_t>(p)) >> 2) & 3u)) & 3u);
  if (head > n) head = n;
  double acc0 = 0.0;
  double acc1 = 0.0;
  if (lane < head) acc0 = static_cast<double>(__ldg(p + lane));
  const float4* __restrict__ v = reinterpret_cast<const float4*>(p + head);
  const int64_t nv = (n - head) >> 2;
  int64_t i = lane;
  // Main loop: kUnroll independent 16-byte loads per lane issued before any use.
  for (; i + 32 * (kUnroll - 1) < nv; i += 32 * kUnroll) {
    float4 r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) r[u] = __ldg(v + i + 32 * u);
#pragma unroll
    for (int u = 0; u < kUnroll; u += 2) {
      acc0 += sum4<kExact>(r[u]);
      if (u + 1 < kUnroll) acc1 += sum4<kExact>(r[u + 1]);
    }
  }
  for (; i < nv; i += 32) acc0 += sum4<kExact>(__ldg(v + i));
  const int64_t tail = head + (nv << 2);
  if (lane < n - tail) acc1 += static_cast<double>(__ldg(p + tail + lane));
  return acc0 + acc1;
}

}  // namespace fb::fused::arch
