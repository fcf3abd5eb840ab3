#pragma once
/// Scalar fp32 and fp64 operations, each correctly rounded to nearest and never contracted with
/// another (no FMA formed from a multiply and an add), written once for kernels and host executors:
/// on the GPU the __*_rn intrinsics (which nvcc does not contract), on the host plain operators
/// (the build targets x86-64's baseline, which has no FMA instruction to contract into) and
/// std::fma where one rounding of a b + c is meant. Code whose host executor must equal the GPU bit
/// for bit spells its arithmetic with these (the LayerNorm statistics, float-float, DFT twiddles).
#include <cmath>

#include "fused/arch/host_device.cuh"

namespace fb::fused::rn {

FB_HOST_DEVICE float add32(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
FB_HOST_DEVICE float sub32(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
FB_HOST_DEVICE float mul32(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
FB_HOST_DEVICE float div32(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
FB_HOST_DEVICE float sqrt32(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
/// a b + c rounded once (fp32).
FB_HOST_DEVICE float ffma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

FB_HOST_DEVICE double add64(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
FB_HOST_DEVICE double sub64(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
FB_HOST_DEVICE double mul64(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
/// a b + c rounded once (fp64).
FB_HOST_DEVICE double dfma(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

}  // namespace fb::fused::rn
