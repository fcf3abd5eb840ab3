#pragma once
/// Loads of data that no thread writes while the kernel runs (inputs, parameters, earlier launches'
/// results), written once for kernels and host executors: the read-only (non-coherent) data path on
/// the GPU, a plain load on the host.
#include "fused/arch/host_device.cuh"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace fb::fused {

/// T: float, double or int (the types __ldg serves that the kernels read).
template <class T>
FB_HOST_DEVICE T load_ro(const T* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

/// 16 bytes (p 16-byte aligned).
FB_HOST_DEVICE void load_ro4(const float* p, float (&v)[4]) {
#if defined(__CUDA_ARCH__)
  const float4 t = __ldg(reinterpret_cast<const float4*>(p));
  v[0] = t.x, v[1] = t.y, v[2] = t.z, v[3] = t.w;
#else
  for (int u = 0; u < 4; ++u) v[u] = p[u];
#endif
}

/// p itself, as a value the GPU compiler cannot see into: a base pointer that stays one register
/// pair, so that base + 32-bit offset is one wide multiply-add per address (the compiler otherwise
/// keeps the 64-bit offset of a pointer sum and rebuilds each address from the kernel argument).
template <class T>
FB_HOST_DEVICE const T* opaque(const T* p) {
#if defined(__CUDA_ARCH__)
  asm("mov.b64 %0, %0;" : "+l"(p));
#endif
  return p;
}

}  // namespace fb::fused
