#pragma once
/// FB_HOST_DEVICE marks math written once for kernels and host executors
/// (like CUTLASS_HOST_DEVICE): `__host__ __device__ inline` under nvcc, plain `inline` elsewhere.
#if defined(__CUDACC__)
#define FB_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FB_HOST_DEVICE inline
#endif
