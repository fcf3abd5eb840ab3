#pragma once
/// Discrete Fourier transform pieces written once for kernels and host executors (#77
/// convt3d_scale_bn_gap computes the convolution's centred second moments by Parseval):
///   - roots of unity with an exact argument reduction, evaluated in fp64 by the same operations on
///     both sides, so that host and device tables hold the same bits;
///   - the conjugate row pairs of a 3-D real spectrum (which rows a kernel computes, which it gets
///     by conjugation);
///   - the half-spectrum weights of Parseval's identity;
///   - explicitly fused multiply-adds: nvcc contracts a*b+c on its own and g++ does not, so shared
///     fp32 code spells every fused operation out and leaves no a*b+c to either compiler.
/// Sign convention: X(f) = sum_n x(n) e^{-2 pi i n f / N} in every dimension, for the input and the
/// weights alike (the convolution theorem needs one convention; |Z|^2 does not care which).
#include <cmath>
#include <cstdint>

#include "fused/arch/host_device.cuh"
#include "fused/arch/rounded.cuh"

namespace fb::fused::math::dft {

/// A complex fp32 value (same layout as CUDA's float2, without CUDA headers).
struct alignas(8) cplx {
  float re;
  float im;
};

/// Two consecutive complex values: one 16-byte shared-memory access on the device.
struct alignas(16) cplx2 {
  cplx a;
  cplx b;
};

/// a*b + c rounded once, on host and device alike (fp32 and fp64).
using rn::dfma;
using rn::ffma;

/// acc += x * y for complex values, as four fused operations in a fixed order.
FB_HOST_DEVICE void cmac(cplx& acc, cplx x, cplx y) {
  acc.re = ffma(x.re, y.re, acc.re);
  acc.re = ffma(-x.im, y.im, acc.re);
  acc.im = ffma(x.re, y.im, acc.im);
  acc.im = ffma(x.im, y.re, acc.im);
}

/// |z|^2 in fp64 (the squares of fp32 values are exact in fp64).
FB_HOST_DEVICE double norm2(cplx z) {
  const double re = static_cast<double>(z.re);
  const double im = static_cast<double>(z.im);
  return dfma(re, re, im * im);
}

/// A complex fp64 value.
struct dcplx {
  double re;
  double im;
};

/// e^{-2 pi i m / n} for 0 <= m < n (callers reduce m*f mod n in integers first), as fp64 (unit_root_d)
/// and rounded to fp32 (unit_root).
/// The angle 2 pi m / n is reduced exactly to an octant o and an offset rho/n within it (integer
/// arithmetic on 8m), then sin and cos of phi = (pi/4) * rho / n in [0, pi/4] come from their
/// Taylor series (to x^17 and x^18: truncation below 1e-18) in fp64 with explicit fma, and the
/// octant's symmetry maps them back. Host and device run the same IEEE operations (mul, div, fma),
/// so the tables agree bitwise; the fp64 result is within ~1e-16 of the true value, so the fp32
/// rounding is the correctly rounded one except in rare ties.
FB_HOST_DEVICE dcplx unit_root_d(int64_t m, int64_t n) {
  const int64_t a = 8 * m;       // theta = (pi / 4) * a / n
  const int64_t o = a / n;       // octant, 0..7
  const int64_t r = a - o * n;   // offset within the octant, [0, n)
  const bool odd = (o & 1) != 0;
  const int64_t rho = odd ? n - r : r;  // measured from the octant's nearer axis
  const double phi = 0.78539816339744830962 * static_cast<double>(rho) / static_cast<double>(n);
  const double y = phi * phi;
  double ps = 1.0 / 355687428096000.0;  // sin: phi * sum_k (-1)^k y^k / (2k+1)!, k = 8..0
  ps = dfma(ps, y, -1.0 / 1307674368000.0);
  ps = dfma(ps, y, 1.0 / 6227020800.0);
  ps = dfma(ps, y, -1.0 / 39916800.0);
  ps = dfma(ps, y, 1.0 / 362880.0);
  ps = dfma(ps, y, -1.0 / 5040.0);
  ps = dfma(ps, y, 1.0 / 120.0);
  ps = dfma(ps, y, -1.0 / 6.0);
  ps = dfma(ps, y, 1.0);
  const double s = phi * ps;
  double pc = -1.0 / 6402373705728000.0;  // cos: sum_k (-1)^k y^k / (2k)!, k = 9..0
  pc = dfma(pc, y, 1.0 / 20922789888000.0);
  pc = dfma(pc, y, -1.0 / 87178291200.0);
  pc = dfma(pc, y, 1.0 / 479001600.0);
  pc = dfma(pc, y, -1.0 / 3628800.0);
  pc = dfma(pc, y, 1.0 / 40320.0);
  pc = dfma(pc, y, -1.0 / 720.0);
  pc = dfma(pc, y, 1.0 / 24.0);
  pc = dfma(pc, y, -0.5);
  const double c = dfma(pc, y, 1.0);
  double cos_t = c, sin_t = s;
  switch (o) {
    case 0: cos_t = c; sin_t = s; break;     // theta = phi
    case 1: cos_t = s; sin_t = c; break;     // pi/2 - phi
    case 2: cos_t = -s; sin_t = c; break;    // pi/2 + phi
    case 3: cos_t = -c; sin_t = s; break;    // pi - phi
    case 4: cos_t = -c; sin_t = -s; break;   // pi + phi
    case 5: cos_t = -s; sin_t = -c; break;   // 3pi/2 - phi
    case 6: cos_t = s; sin_t = -c; break;    // 3pi/2 + phi
    default: cos_t = c; sin_t = -s; break;   // 2pi - phi
  }
  return {cos_t, -sin_t};
}

FB_HOST_DEVICE cplx unit_root(int64_t m, int64_t n) {
  const dcplx r = unit_root_d(m, n);
  return {static_cast<float>(r.re), static_cast<float>(r.im)};
}

/// The DFT (size nn) of the indicator of [0, n) at frequency f in [0, nn):
///   sum_{i<n} e^{-2 pi i i f / nn} = (1 - e^{-2 pi i n f / nn}) / (1 - e^{-2 pi i f / nn}),  n at f = 0,
/// in fp64 from exactly reduced roots (exactly 0 where n f = 0 mod nn, f != 0), rounded to fp32.
/// Its product over the three dimensions is the spectrum of a constant volume: x's kernel transforms
/// x - c and adds c times this back, so that no fp32 sum has to cancel a large constant.
FB_HOST_DEVICE cplx box_dft(int64_t n, int64_t f, int64_t nn) {
  if (f == 0) return {static_cast<float>(n), 0.0f};
  const dcplx num_r = unit_root_d((n * f) % nn, nn);
  const dcplx den_r = unit_root_d(f, nn);
  const double ar = 1.0 - num_r.re, ai = -num_r.im;  // 1 - e^{-i n theta}
  const double br = 1.0 - den_r.re, bi = -den_r.im;  // 1 - e^{-i theta}, |.| >= 2 sin(pi/nn) > 0
  const double den = dfma(br, br, bi * bi);
  const double re = dfma(ar, br, ai * bi) / den;
  const double im = dfma(ai, br, -(ar * bi)) / den;
  return {static_cast<float>(re), static_cast<float>(im)};
}

/// Parseval weight of half-spectrum column fw of a real transform of size nw (fw in [0, nw/2]):
/// columns 0 and nw/2 (nw even) hold their own conjugates and count once, the others stand for
/// themselves and their mirror nw - fw and count twice.
FB_HOST_DEVICE int half_weight(int64_t fw, int64_t nw) { return (fw == 0 || 2 * fw == nw) ? 1 : 2; }

/// The rows (fd, fh) of a spectrum of size nd x nh, grouped into conjugate pairs
/// {(fd, fh), (-fd mod nd, -fh mod nh)}. A kernel computes one representative per pair (fd in
/// [0, nd/2]) and gets the other row by conjugation, because the weights are real:
/// W(-fd, -fh, fw) = conj(W(fd, fh, -fw)). Pairs are numbered plane by plane:
///   fd = 0:            fh in [0, nh/2]  (its partner fh' = -fh lies in the same plane);
///   0 < fd < nd/2:     fh in [0, nh)    (partners in plane nd - fd);
///   fd = nd/2, nd even: fh in [0, nh/2].
/// Rows (0,0), (0,nh/2), (nd/2,0), (nd/2,nh/2) (those that exist) are their own partners.
struct row_pairs {
  int64_t nd;
  int64_t nh;
  int64_t n_edge;      ///< pairs in an edge plane (fd = 0 or fd = nd/2): nh/2 + 1
  int64_t n_interior;  ///< planes with 0 < fd < nd/2: (nd - 1)/2
  int64_t count;       ///< all pairs
};

FB_HOST_DEVICE row_pairs make_row_pairs(int64_t nd, int64_t nh) {
  row_pairs r{nd, nh, nh / 2 + 1, (nd - 1) / 2, 0};
  r.count = r.n_edge + r.n_interior * nh + (nd % 2 == 0 ? r.n_edge : 0);
  return r;
}

/// One conjugate pair: the representative row and its partner, as flat row indices fd * nh + fh.
struct row_pair {
  int64_t fd;        ///< representative plane, in [0, nd/2]
  int64_t fh;        ///< representative column, in [0, nh)
  int64_t row;       ///< fd * nh + fh
  int64_t conj_row;  ///< the partner (-fd, -fh); == row for a self-conjugate row
};

/// Pair p (0 <= p < count) in the numbering above.
FB_HOST_DEVICE row_pair pair_at(const row_pairs& rp, int64_t p) {
  int64_t fd = 0, fh = p;
  if (p >= rp.n_edge) {
    const int64_t q = p - rp.n_edge;
    if (q < rp.n_interior * rp.nh) {
      fd = 1 + q / rp.nh;
      fh = q - (fd - 1) * rp.nh;
    } else {
      fd = rp.nd / 2;
      fh = q - rp.n_interior * rp.nh;
    }
  }
  const int64_t cfd = fd == 0 ? 0 : rp.nd - fd;
  const int64_t cfh = fh == 0 ? 0 : rp.nh - fh;
  return {fd, fh, fd * rp.nh + fh, cfd * rp.nh + cfh};
}

}  // namespace fb::fused::math::dft
