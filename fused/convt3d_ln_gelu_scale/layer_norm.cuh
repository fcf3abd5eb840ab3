#pragma once
/// #34's row math, host and device alike: fp64 operations spelled out, the exact GELU in fp32, and
/// a LayerNorm row's statistics in one pass (row_moments). Used by the epilogue (epilogue.cuh) and
/// tested on its own (fused_convt3d_ln_gelu_scale_test.cpp).
#include <cmath>
#include <cstdint>

#include "fused/arch/host_device.cuh"

namespace fb::fused::convt3d_ln_gelu_scale::detail {

/// A row's LayerNorm statistics: its mean and 1/sqrt(var + eps), var biased.
struct row_norm {
  double mean, rstd;
};

// ---------------------------------------------------------------------------------------------
// The row math, written once: fp64 operations spelled out, so that neither compiler can contract
// them differently (host and device round alike).
// ---------------------------------------------------------------------------------------------

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
/// 1/sqrt(v): on the GPU CUDA's rsqrt (within 1 ulp; a reciprocal square-root seed and a few
/// fp64 FMAs), on the host 1/sqrt (two correctly rounded operations). The two may differ in the
/// last bit of an fp64 rstd, far below the fp32 output's rounding; the GPU's fp64 division and
/// square root are long chains of fp64 operations, each waiting on the pipe the MMAs hold (measured
/// on an H100: -0.4% for the kernel with the division-free statistics).
FB_HOST_DEVICE double rsqrt64(double v) {
#if defined(__CUDA_ARCH__)
  return rsqrt(v);
#else
  return 1.0 / std::sqrt(v);
#endif
}

/// 2^q in fp32: on the GPU the special-function unit's ex2.approx (one MUFU.EX2; relative error
/// below 2^-22, subnormal results flushed to 0), on the host std::exp2.
FB_HOST_DEVICE float exp2_f32(float q) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(q));
  return r;
#else
  return std::exp2(q);
#endif
}

/// Exact (erf) GELU of an fp32 value in fp32: u Phi(u), Phi(u) = (1 + erf(u / sqrt 2)) / 2 the
/// normal CDF (PyTorch's gelu, approximate='none'; not the tanh form). Phi's smaller side,
/// Phi(-|u|) = erfc(t) / 2 with t = |u| / sqrt 2, is 2^(t P(t) - 1) with P of degree 7 (a weighted
/// minimax fit of log2 erfc on [0, 3.92]: erfc's absolute error below 1.6e-8 there, its fp32
/// coefficients below; t P(t) keeps falling past 3.92, so 2^q -> 0 and GELU(u) -> 0 or u), and
/// Phi(u) = 1 - that for u >= 0; 1 / sqrt 2 is folded into P's coefficients (a polynomial of |u|).
/// One exp2 and 8 fmaf, no branch: about half the instructions of 0.5 u (1 + erff(u / sqrt 2))
/// (CUDA's erff selects one of two coefficient sets per value): -2.3% for the #34 kernel on an H100.
/// Measured on the host over every 9973rd fp32 bit pattern with 1e-30 <= |u| <= 1e4, against long
/// double erfc: |error| <= 1.83 x 2^-24 |u| (the erff form: 1.8);
/// the GPU's ex2 adds at most 2^-22 of Phi's smaller side, |u| 2^-23 at most. Host and device differ
/// by that ex2 alone (the self-test's tolerance), as they did by their erff before.
FB_HOST_DEVICE float gelu_erf(float u) {
  const float a = fabsf(u);  // t P(t) as a polynomial of |u| = sqrt 2 t: the fit's c_k times 2^-(k+1)/2
  float p = -2.83490567e-06f;
  p = fmaf(p, a, 3.93775917e-05f);
  p = fmaf(p, a, -1.86179721e-04f);
  p = fmaf(p, a, -1.36937684e-04f);
  p = fmaf(p, a, 7.06342189e-03f);
  p = fmaf(p, a, -5.24961799e-02f);
  p = fmaf(p, a, -4.59208190e-01f);
  p = fmaf(p, a, -1.15110517e+00f);  // ~ -sqrt(2 / pi) / ln 2: erfc(t) = 1 - 2t / sqrt(pi) + ...
  const float phi_small = exp2_f32(fmaf(a, p, -1.0f));
  return u * (u >= 0.0f ? 1.0f - phi_small : phi_small);
}

/// One output from its row's fp64 mean and 1/sqrt(var + eps): scale * GELU(gamma * (y - mean) *
/// rstd + beta), the normalisation in fp64, rounded once to fp32 before the GELU and the scale.
/// gamma and beta are the fp32 parameters, held as fp64 (exact).
FB_HOST_DEVICE float ln_gelu_scale(float y, double mean, double rstd, double gamma, double beta, float scale) {
  const double z = mul64(sub64(static_cast<double>(y), mean), rstd);
  const float u = static_cast<float>(fma(z, gamma, beta));
  return gelu_erf(u) * scale;
}

/// Four floats to p (16-byte aligned): one store on the GPU.
FB_HOST_DEVICE void store_f4(float* p, const float (&v)[4]) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
#else
  for (int i = 0; i < 4; ++i) p[i] = v[i];
#endif
}

/// The two sums of a row's statistics: of the values less a shift c, and of their squares.
struct shifted_sums {
  double s1, s2;
};
FB_HOST_DEVICE shifted_sums add_sums(const shifted_sums& x, const shifted_sums& y) {
  return shifted_sums{add64(x.s1, y.s1), add64(x.s2, y.s2)};
}

/// Four partial sums rotated left by r (0..3): p[k] becomes p[(k + r) % 4].
FB_HOST_DEVICE void rotate_partials(shifted_sums (&p)[4], int r) {
  for (int i = 0; i < r; ++i) {
    const shifted_sums t = p[0];
    p[0] = p[1];
    p[1] = p[2];
    p[2] = p[3];
    p[3] = t;
  }
}

/// p[i % 4] = term(v[i], p[i % 4]) for i in [0, n), in index order.
template <class Term>
FB_HOST_DEVICE void add_to_partials(shifted_sums (&p)[4], const float* v, int n, const Term& term) {
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    p[0] = term(v[j], p[0]);
    p[1] = term(v[j + 1], p[1]);
    p[2] = term(v[j + 2], p[2]);
    p[3] = term(v[j + 3], p[3]);
  }
  if (j < n) p[0] = term(v[j], p[0]);
  if (j + 1 < n) p[1] = term(v[j + 1], p[1]);
  if (j + 2 < n) p[2] = term(v[j + 2], p[2]);
}

/// The same over the row a[0..region_row_values) followed by b[0..n_b): value j of the row goes to partial j % 4
/// (b's first value to partial region_row_values % 4: the partials are rotated around it), the partials then
/// combined as (0 + 1) + (2 + 3).
template <class Term>
FB_HOST_DEVICE shifted_sums row_sums(const float* a, int region_row_values, const float* b, int n_b, const Term& term) {
  shifted_sums p[4] = {};
  add_to_partials(p, a, region_row_values, term);
  rotate_partials(p, region_row_values % 4);
  add_to_partials(p, b, n_b, term);
  rotate_partials(p, (4 - region_row_values % 4) % 4);
  return add_sums(add_sums(p[0], p[1]), add_sums(p[2], p[3]));
}

/// The statistics of a row of n = region_row_values + n_b fp32 values, a[0..region_row_values) then b[0..n_b), in one pass:
/// with c the row's first value, d = y - c (fp64: exact unless the two magnitudes are more than 2^29
/// apart), S1 = sum d and S2 = sum d^2 (fp64, 4 interleaved partial sums each: row_sums); then
/// mean = c + S1/n and the biased variance (S2 - S1 (S1/n)) / n (one fused multiply-add), 1/sqrt(var
/// + eps) (rsqrt64). 1/n is the same for every row of a block, so the GPU works it out once.
///
/// Why shifted by c and not E[y^2] - E[y]^2: the subtraction cancels by S2 / (n var) = 1 + (c -
/// mean)^2 / var, at most n + 1 since c is one of the row's values ((c - mean)^2 <= n var), so the
/// variance keeps all but ~log2(n) of fp64's 53 bits (relative error below ~n^2 2^-53 ~ 2e-12 at
/// n = 128), where the raw second moment loses everything on offset rows. One pass instead of a
/// mean pass and a centred pass: the fp64 operations per value are the same three, but each thread
/// reads its row once and its dependency chains are half as long (the kernel -1.9% on an H100, -2.5%
/// on an H200, outputs bitwise equal in the probe's sample).
FB_HOST_DEVICE row_norm row_moments(const float* a, int region_row_values, const float* b, int n_b, double eps) {
  const int n = region_row_values + n_b;
  const double inv_n = 1.0 / static_cast<double>(n);
  const double c = static_cast<double>(region_row_values > 0 ? a[0] : b[0]);
  const shifted_sums s = row_sums(a, region_row_values, b, n_b, [c](float v, const shifted_sums& acc) {
    const double d = sub64(static_cast<double>(v), c);
    return shifted_sums{add64(acc.s1, d), fma(d, d, acc.s2)};
  });
  const double m1 = mul64(s.s1, inv_n);
  row_norm rn;
  rn.mean = add64(c, m1);
  rn.rstd = rsqrt64(add64(mul64(fma(-s.s1, m1, s.s2), inv_n), eps));
  return rn;
}
/// The same for n contiguous floats.
FB_HOST_DEVICE row_norm row_moments(const float* row, int n, double eps) { return row_moments(row, n, row, 0, eps); }

}  // namespace fb::fused::convt3d_ln_gelu_scale::detail
