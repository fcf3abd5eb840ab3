#pragma once
/// Asynchronous copies of 4, 8 or 16 bytes from global into shared memory (cp.async), written once
/// for the block programs of every model. On the GPU the load goes straight to shared memory: no
/// register holds the value, so a thread can have every copy of a staging step in flight at once
/// (measured on an H100: the register round trip with 4 loads in flight per thread left #15's passes
/// waiting on global loads ~30% of their samples). The issuing thread completes its copies with
/// cp_async_wait_all() (or commits groups and waits for all but the last one), and a barrier after
/// that publishes them to the block. On the host each copy is a plain copy and the waits do nothing:
/// the values are the same either way.
#include "fused/arch/host_device.cuh"

namespace fb::fused::arch {

/// *dst = *src, 4 bytes (cp.async.ca: cached in L1 too).
FB_HOST_DEVICE void cp_async_4(float* dst, const float* src) {
#if defined(__CUDA_ARCH__)
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d), "l"(src) : "memory");
#else
  *dst = *src;
#endif
}

/// *dst = ok ? *src : T{} for an 8-byte T: zero-filled when !ok, and src is then not read.
template <class T>
FB_HOST_DEVICE void cp_async_8_or_zero(T* dst, const T* src, bool ok) {
  static_assert(sizeof(T) == 8, "cp_async_8_or_zero copies 8 bytes");
#if defined(__CUDA_ARCH__)
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(d), "l"(src), "r"(ok ? 8 : 0) : "memory");
#else
  *dst = ok ? *src : T{};
#endif
}

/// dst[0..3] = src[0..3], 16 bytes, both addresses 16-byte aligned (cp.async.cg: L2 only).
FB_HOST_DEVICE void cp_async_16(float* dst, const float* src) {
#if defined(__CUDA_ARCH__)
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
#else
  for (int u = 0; u < 4; ++u) dst[u] = src[u];
#endif
}

/// Closes the thread's current group of asynchronous copies.
FB_HOST_DEVICE void cp_async_commit() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

/// Waits for every copy this thread has issued.
FB_HOST_DEVICE void cp_async_wait_all() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

/// Waits for all of the thread's committed copy groups but the most recent one.
FB_HOST_DEVICE void cp_async_wait_all_but_last() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.wait_group 1;" ::: "memory");
#endif
}

}  // namespace fb::fused::arch
