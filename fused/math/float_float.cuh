#pragma once
/// Float-float arithmetic: a value held as the unevaluated sum hi + lo of two fp32 numbers (|lo| <=
/// ulp(hi) / 2 once normalised), about 48 bits, from fp32 operations alone. Host and device alike.
///
/// Why: on sm_90 an fp64 add, multiply or FMA does not run while another warp on its scheduler has
/// fp64 MMAs queued; conversions to and from fp64 do (probes/dmma_rate/dmma_overlap.cu,
/// reports/nvidia-h200/probe-2026-11-29-overlap/). Code that runs beside fp64 MMA warps and needs more
/// than fp32's precision (#34's LayerNorm statistics in issue 36's engine) computes in float-float.
///
/// Every operation below is a correctly rounded, uncontracted fp32 operation (fused/arch/rounded.cuh),
/// so the host computes the GPU's bits.
#include <cmath>

#include "fused/arch/host_device.cuh"
#include "fused/arch/rounded.cuh"

namespace fb::fused::ff {

/// hi + lo.
struct ff32 {
  float hi, lo;
};

/// An fp32 value's bits, and the value of 32 bits (host and device alike).
FB_HOST_DEVICE unsigned bits_of(float v) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(v);
#else
  unsigned bits;
  __builtin_memcpy(&bits, &v, sizeof(bits));
  return bits;
#endif
}
FB_HOST_DEVICE float float_of(unsigned bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float v;
  __builtin_memcpy(&v, &bits, sizeof(v));
  return v;
#endif
}

/// a + b = s + e exactly, any magnitudes (Knuth's TwoSum, 6 operations; exact unless s overflows).
FB_HOST_DEVICE ff32 two_sum(float a, float b) {
  const float s = rn::add32(a, b);
  const float bb = rn::sub32(s, a);
  const float e = rn::add32(rn::sub32(a, rn::sub32(s, bb)), rn::sub32(b, bb));
  return ff32{s, e};
}
/// The same where |a| >= |b| or a == 0 (Dekker's, 3 operations).
FB_HOST_DEVICE ff32 fast_two_sum(float a, float b) {
  const float s = rn::add32(a, b);
  return ff32{s, rn::sub32(b, rn::sub32(s, a))};
}
/// a b = p + e exactly (one FMA; exact unless the product underflows or overflows).
FB_HOST_DEVICE ff32 two_prod(float a, float b) {
  const float p = rn::mul32(a, b);
  return ff32{p, rn::ffma(a, b, -p)};
}

/// a + b rounded to odd: the nearest float toward zero or away whose last bit is 1 where the sum is
/// not exact (its exact sum otherwise). hi + add_to_odd(lo, c) then rounds hi + lo + c correctly to
/// nearest in one more addition: rounding to odd never lands on the half-ulp tie of hi (a power of
/// two, even) and keeps the side of it, so no double rounding (Boldo and Melquiond, 2008).
FB_HOST_DEVICE float add_to_odd(float a, float b) {
  const ff32 t = two_sum(a, b);
  if (t.lo == 0.0f) return t.hi;
  unsigned bits = bits_of(t.hi);
  if ((bits & 1u) == 0u) bits += ((t.hi > 0.0f) == (t.lo > 0.0f)) ? 1u : static_cast<unsigned>(-1);  // away / toward zero
  return float_of(bits);
}
/// a + b, normalised (the accurate float-float sum: relative error ~2^-46 even where they cancel).
FB_HOST_DEVICE ff32 add(const ff32& a, const ff32& b) {
  const ff32 s = two_sum(a.hi, b.hi);
  const ff32 t = two_sum(a.lo, b.lo);
  ff32 r = fast_two_sum(s.hi, rn::add32(s.lo, t.hi));
  r = fast_two_sum(r.hi, rn::add32(r.lo, t.lo));
  return r;
}
/// -a.
FB_HOST_DEVICE ff32 neg(const ff32& a) { return ff32{-a.hi, -a.lo}; }
/// a b, normalised (relative error ~2^-45).
FB_HOST_DEVICE ff32 mul(const ff32& a, const ff32& b) {
  const ff32 p = two_prod(a.hi, b.hi);
  return fast_two_sum(p.hi, rn::ffma(a.lo, b.hi, rn::ffma(a.hi, b.lo, p.lo)));
}
/// a / b for an fp32 b (one long-division step: relative error ~2^-45).
FB_HOST_DEVICE ff32 div(const ff32& a, float b) {
  const float q1 = rn::div32(a.hi, b);
  const ff32 p = two_prod(q1, b);
  const float r = rn::add32(rn::sub32(rn::sub32(a.hi, p.hi), p.lo), a.lo);
  return fast_two_sum(q1, rn::div32(r, b));
}
/// 1 / sqrt(x) for a positive, finite, normal x: fp32's correctly rounded 1 / sqrt(x.hi), then one
/// Newton step r (1 + (1 - x r^2) / 2) in float-float (relative error ~2^-44).
FB_HOST_DEVICE ff32 rsqrt(const ff32& x) {
  const float r0 = rn::div32(1.0f, rn::sqrt32(x.hi));
  const ff32 h = add(ff32{1.0f, 0.0f}, neg(mul(x, two_prod(r0, r0))));
  return fast_two_sum(r0, rn::mul32(rn::mul32(r0, h.hi), 0.5f));
}
/// x 2^k for an fp32 x and -149 <= k <= 127, exact unless the result is subnormal (then rounded
/// once, as on the host) or overflows: a multiplication by the power of two, itself exact in fp32.
FB_HOST_DEVICE float scale_pow2(float x, int k) {
  // 2^k for -126 <= k <= 127 is a normal float; below, a subnormal one (exact down to 2^-149).
  const float p = float_of(k >= -126 ? static_cast<unsigned>(k + 127) << 23 : 1u << (k + 149));
  return rn::mul32(x, p);
}

}  // namespace fb::fused::ff
