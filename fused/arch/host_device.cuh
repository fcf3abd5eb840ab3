#pragma once
/// FB_HOST_DEVICE marks math written once for kernels and host executors
/// (like CUTLASS_HOST_DEVICE): `__host__ __device__ inline` under nvcc, plain `inline` elsewhere.
#if defined(__CUDACC__)
#define FB_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FB_HOST_DEVICE inline
#endif

/// The same, never inlined: for a rarely taken path called from many unrolled places, where inlined
/// copies would make the kernel large enough to miss in the instruction cache.
#if defined(__CUDACC__)
#define FB_HOST_DEVICE_OUT_OF_LINE inline __host__ __device__ __noinline__
#elif defined(__GNUC__)
#define FB_HOST_DEVICE_OUT_OF_LINE inline __attribute__((noinline))
#else
#define FB_HOST_DEVICE_OUT_OF_LINE inline
#endif

/// Loop unrolling requests that both compilers honour (loops over compile-time register tiles).
#if defined(__CUDA_ARCH__)
#define FB_UNROLL _Pragma("unroll")
#define FB_NO_UNROLL _Pragma("unroll 1")
#elif defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define FB_UNROLL _Pragma("GCC unroll 64")
#define FB_NO_UNROLL
#else
#define FB_UNROLL
#define FB_NO_UNROLL
#endif
