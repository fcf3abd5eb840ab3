#pragma once
/// #34's row math, host and device alike: fp64 operations spelled out, the exact GELU in fp32, and
/// a LayerNorm row's statistics in one pass (row_moments). Used by the epilogue (epilogue.cuh) and
/// tested on its own (fused_convt3d_ln_gelu_scale_test.cpp).
#include <cmath>
#include <cstdint>

#include "fused/arch/host_device.cuh"
#include "fused/math/float_float.cuh"

namespace fb::fused::convt3d_ln_gelu_scale::detail {

/// A row's LayerNorm statistics: its mean and 1/sqrt(var + eps), var biased.
struct row_norm {
  double mean, rstd;
};

// ---------------------------------------------------------------------------------------------
// The row math, written once: fp64 operations spelled out, so that neither compiler can contract
// them differently (host and device round alike).
// ---------------------------------------------------------------------------------------------

using rn::add64;
using rn::mul64;
using rn::sub64;

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
template <class P>
FB_HOST_DEVICE void rotate_partials(P (&p)[4], int r) {
  for (int i = 0; i < r; ++i) {
    const P t = p[0];
    p[0] = p[1];
    p[1] = p[2];
    p[2] = p[3];
    p[3] = t;
  }
}

/// p[i % 4] = term(v[i], p[i % 4]) for i in [0, n), in index order.
template <class P, class Term>
FB_HOST_DEVICE void add_to_partials(P (&p)[4], const float* v, int n, const Term& term) {
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

/// The partials of term over the row a[0..region_row_values) followed by b[0..n_b): value j of the row goes
/// to partial j % 4 (b's first value to partial region_row_values % 4: the partials are rotated around it).
template <class P, class Term>
FB_HOST_DEVICE void row_partials(P (&p)[4], const float* a, int region_row_values, const float* b, int n_b,
                                 const Term& term) {
  add_to_partials(p, a, region_row_values, term);
  rotate_partials(p, region_row_values % 4);
  add_to_partials(p, b, n_b, term);
  rotate_partials(p, (4 - region_row_values % 4) % 4);
}

/// The same, the partials then combined as (0 + 1) + (2 + 3).
template <class Term>
FB_HOST_DEVICE shifted_sums row_sums(const float* a, int region_row_values, const float* b, int n_b, const Term& term) {
  shifted_sums p[4] = {};
  row_partials(p, a, region_row_values, b, n_b, term);
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

// ---------------------------------------------------------------------------------------------
// The same row math without fp64 arithmetic, in float-float (fused/math/float_float.cuh): for warps
// that run beside fp64 MMA warps (issue 36's engine), where an fp64 add, multiply or FMA waits until
// no MMA is queued on its scheduler. Written for that engine; row_moments and ln_gelu_scale above
// remain the kernels' row math until it lands.
// ---------------------------------------------------------------------------------------------

/// eps as float-float: hi its fp32 rounding, lo the rest's (worked out once, on the host: fp64).
struct eps_ff {
  float hi, lo;
};
inline eps_ff split_eps(double eps) {
  const float hi = static_cast<float>(eps);
  return eps_ff{hi, static_cast<float>(eps - static_cast<double>(hi))};
}

FB_HOST_DEVICE int imax_ff(int a, int b) { return a > b ? a : b; }
constexpr float k_nan_f = __builtin_nanf("");

/// The biased exponent field of an fp32 value (0 for zeros and subnormals, 255 for inf and nan).
FB_HOST_DEVICE int biased_exponent(float v) { return static_cast<int>((ff::bits_of(v) >> 23) & 0xffu); }

/// A row's statistics in the row's own scale: its values are read as y 2^k, k = 127 - (the biased
/// exponent of its largest magnitude, at least 1), so that they lie in (-2, 2) whatever their size
/// (no float-float intermediate can overflow, and none underflows but for values 2^126 below the
/// largest). In that scale the mean is c + m1, c the row's first value (fp32, exact) and m1 = S1/n
/// the mean of the shifted values, and rstd = 1 / sqrt(var + eps) (var 2^2k + eps 2^2k), so that
/// z = ((y 2^k - c) - m1) rstd: y 2^k - c is exact, and m1 is as small as the row's spread, so z
/// keeps float-float's ~2^-46 relative to the spread however far the row is offset (mean = c + m1
/// rounded to float-float would lose that: 2^-46 of the offset). nan statistics for a row that holds
/// a non-finite value. A constant row whose eps 2^2k is below 2^-100 (values past ~2^33 with eps
/// 1e-5) gets rstd = the largest float: every z is 0 then, as for any finite rstd.
struct row_norm_ff {
  int k;
  float scale;  ///< 2^k (exact: -127 <= k <= 126), each value's factor into the row's scale
  float c;
  ff::ff32 m1, rstd;
};

/// Float-float partial sums of a row's shifted values: s1 of d, s2 of d^2 (hi and a running lo each).
struct shifted_sums_ff {
  float s1_hi, s1_lo, s2_hi, s2_lo;
};

/// row_moments without fp64 arithmetic, the same shape: c the row's first value, d = y 2^k - c exact
/// as a float pair (TwoSum), S1 = sum d and S2 = sum d^2 (d^2 = s^2 + 2 s e for d = s + e: the e^2
/// left out is below 2^-48 s^2) in float-float, 4 interleaved partials each (row_partials), then
/// m1 = S1/n, var = (S2 - S1 m1) / n (>= 0), rstd by one Newton step in float-float from
/// fp32's correctly rounded 1/sqrt (relative error ~2^-44; no special-function unit: the host's bits).
/// The sums' rounding is ~2^-46 of sum |d| and of sum d^2, which the shift keeps within ~n of var:
/// the variance to ~2^-40 on offset rows, as row_moments' fp64 to ~2^-46.
FB_HOST_DEVICE row_norm_ff row_moments_ff(const float* a, int region_row_values, const float* b, int n_b,
                                          const eps_ff& eps) {
  const int n = region_row_values + n_b;
  int e_max = 1;
  for (int j = 0; j < region_row_values; ++j) e_max = imax_ff(e_max, biased_exponent(a[j]));
  for (int j = 0; j < n_b; ++j) e_max = imax_ff(e_max, biased_exponent(b[j]));
  row_norm_ff norm;
  norm.k = 127 - (e_max == 255 ? 127 : e_max);
  norm.scale = ff::scale_pow2(1.0f, norm.k);
  if (e_max == 255) {  // inf or nan in the row: nan statistics, as row_moments' fp64 gives
    norm.c = k_nan_f;
    norm.m1 = ff::ff32{k_nan_f, k_nan_f};
    norm.rstd = ff::ff32{k_nan_f, k_nan_f};
    return norm;
  }
  const int k = norm.k;
  const float scale = norm.scale;
  const float c = rn::mul32(region_row_values > 0 ? a[0] : b[0], scale);
  norm.c = c;
  shifted_sums_ff p[4] = {};
  row_partials(p, a, region_row_values, b, n_b, [c, scale](float v, const shifted_sums_ff& acc) {
    const ff::ff32 d = ff::two_sum(rn::mul32(v, scale), -c);
    const ff::ff32 t1 = ff::two_sum(acc.s1_hi, d.hi);
    const ff::ff32 sq = ff::two_prod(d.hi, d.hi);
    const float sq_lo = rn::ffma(rn::add32(d.hi, d.hi), d.lo, sq.lo);
    const ff::ff32 t2 = ff::two_sum(acc.s2_hi, sq.hi);
    return shifted_sums_ff{t1.hi, rn::add32(acc.s1_lo, rn::add32(t1.lo, d.lo)), t2.hi,
                           rn::add32(acc.s2_lo, rn::add32(t2.lo, sq_lo))};
  });
  auto s1_of = [](const shifted_sums_ff& q) { return ff::two_sum(q.s1_hi, q.s1_lo); };
  auto s2_of = [](const shifted_sums_ff& q) { return ff::two_sum(q.s2_hi, q.s2_lo); };
  const ff::ff32 s1 = ff::add(ff::add(s1_of(p[0]), s1_of(p[1])), ff::add(s1_of(p[2]), s1_of(p[3])));
  const ff::ff32 s2 = ff::add(ff::add(s2_of(p[0]), s2_of(p[1])), ff::add(s2_of(p[2]), s2_of(p[3])));
  const auto nf = static_cast<float>(n);  // exact: rows have < 2^24 values
  const ff::ff32 m1 = ff::div(s1, nf);
  norm.m1 = m1;
  ff::ff32 var = ff::div(ff::add(s2, ff::neg(ff::mul(s1, m1))), nf);
  if (var.hi < 0.0f) var = ff::ff32{0.0f, 0.0f};  // rounding below an exact 0
  if (2 * k + biased_exponent(eps.hi) - 127 > 100) {
    // eps 2^2k past 2^100 (a row of tiny values): var (< 4) is below its last bit, and eps 2^2k
    // itself may overflow, so rstd = 2^-k / sqrt(eps), scaled after the root.
    const ff::ff32 r = ff::rsqrt(ff::ff32{eps.hi, eps.lo});
    norm.rstd = ff::ff32{ff::scale_pow2(r.hi, -k), ff::scale_pow2(r.lo, -k)};
    return norm;
  }
  // eps 2^2k in two exact steps (it may round to 0 for a row of huge values, the same on host and
  // device: then var decides).
  const ff::ff32 eps_k{ff::scale_pow2(ff::scale_pow2(eps.hi, k), k), ff::scale_pow2(ff::scale_pow2(eps.lo, k), k)};
  const ff::ff32 x = ff::add(var, eps_k);
  // var is 0 or at least ~2^-70 (the values lie in (-2, 2) with the largest in [1, 2), so nonzero
  // differences from c are at least 2^-23 when they are all near it), so x < 2^-100 means a constant
  // row whose eps 2^2k is tiny: every d is 0 and z = 0 for any finite rstd (ff::rsqrt needs a normal
  // x whose square root's reciprocal squared stays in range).
  norm.rstd = x.hi >= 7.88860905e-31f ? ff::rsqrt(x) : ff::ff32{3.40282347e+38f, 0.0f};  // 2^-100
  return norm;
}
/// The same for n contiguous floats.
FB_HOST_DEVICE row_norm_ff row_moments_ff(const float* row, int n, const eps_ff& eps) {
  return row_moments_ff(row, n, row, 0, eps);
}

/// The normalised value before the GELU from its row's float-float statistics: u = gamma z + beta in
/// float-float rounded once to fp32 (the low parts added to odd first: no double rounding), z =
/// ((y 2^k - c) - m1) rstd in float-float (row_norm_ff), ~66 fp32 operations with the GELU. It is the correctly rounded u but where u
/// lies within ~2^-44 of an fp32 rounding tie, on offset rows too (where the fp64 path's mean =
/// c + m1 rounds at 2^-53 of the offset).
FB_HOST_DEVICE float normalised_ff(float y, const row_norm_ff& norm, float gamma, float beta) {
  // d = (y 2^k - c) - m1: the first difference exact (TwoSum), then m1's high part off exactly too and
  // the low parts added (d.lo is not renormalised: z's product takes it as it is).
  const ff::ff32 s = ff::two_sum(rn::mul32(y, norm.scale), -norm.c);
  const ff::ff32 t = ff::two_sum(s.hi, -norm.m1.hi);
  const ff::ff32 d{t.hi, rn::add32(t.lo, rn::sub32(s.lo, norm.m1.lo))};
  // z = d rstd, its low part not renormalised either (g and the FMA below take it as it is).
  const ff::ff32 p = ff::two_prod(d.hi, norm.rstd.hi);
  const ff::ff32 z{p.hi, rn::ffma(d.lo, norm.rstd.hi, rn::ffma(d.hi, norm.rstd.lo, p.lo))};
  const ff::ff32 g = ff::two_prod(z.hi, gamma);
  const ff::ff32 u = ff::two_sum(g.hi, beta);
  return rn::add32(u.hi, ff::add_to_odd(u.lo, rn::ffma(z.lo, gamma, g.lo)));  // one rounding to nearest
}
/// One output: scale * GELU(normalised_ff), as ln_gelu_scale.
FB_HOST_DEVICE float ln_gelu_scale_ff(float y, const row_norm_ff& norm, float gamma, float beta, float scale) {
  return gelu_erf(normalised_ff(y, norm, gamma, beta)) * scale;
}

}  // namespace fb::fused::convt3d_ln_gelu_scale::detail
