#pragma once
/// Winograd F(2,2) in fp64: two outputs of a two-tap phase of a transposed convolution from three
/// products per dimension, 27 for a 2 x 2 x 2 block of bases in 3-D instead of 64. The algebra of #34's
/// next engine (issue 36; the choice and its measurements: reports/nvidia-h200/probe-2026-11-28-split-scheme/).
///
/// A phase with two taps per dimension (convt_phase.cuh: base q reads input q - j with tap j) computes
/// y[q] = x[q] g0 + x[q - 1] g1. For the bases q0, q0 + 1, with x0 = x[q0 - 1], x1 = x[q0], x2 = x[q0 + 1]:
///
///   m0 = (x0 - x1) g1,   m1 = x1 (g0 + g1),   m2 = (x2 - x1) g0;   y[q0] = m0 + m1,   y[q0 + 1] = m1 + m2.
///
/// Why this form and not a larger tile (F(4,2), F(6,2)): every output is computed from its own patch's
/// inputs only (y[q0] never reads x2, y[q0 + 1] never x0), so a value of a neighbouring patch cannot
/// enter an output and cancel there, however large; and with fp32 operands the transforms are exact in
/// fp64 (a sum or difference of two fp32 values whose exponents differ by at most 29; beyond that one
/// rounding at 2^-53 of the larger), the products of two such 25-bit values exact, and only the fp64
/// sums over the channels and the output transform round: the error is fp64 rounding of the patch's own
/// terms, as in the direct fp64 engine. In 3-D the transforms are the tensor products (separable: w,
/// then h, then d), each output from the 2 x 2 x 2 points of its own patch.
#include "fused/arch/host_device.cuh"

namespace fb::fused::math::winograd {

constexpr int k_points = 3;  ///< transform points per dimension
constexpr int k_outputs = 2;  ///< bases per dimension
constexpr int k_taps = 2;     ///< taps per dimension

/// The inputs x0 = x[q0 - 1], x1 = x[q0], x2 = x[q0 + 1] at the three points.
FB_HOST_DEVICE void transform_input(double x0, double x1, double x2, double (&t)[k_points]) {
  t[0] = x0 - x1;
  t[1] = x1;
  t[2] = x2 - x1;
}

/// The taps g0 (input q) and g1 (input q - 1) at the three points.
FB_HOST_DEVICE void transform_weights(double g0, double g1, double (&t)[k_points]) {
  t[0] = g1;
  t[1] = g0 + g1;
  t[2] = g0;
}

/// The two bases' outputs from the three points' products.
FB_HOST_DEVICE void transform_output(const double (&m)[k_points], double (&y)[k_outputs]) {
  y[0] = m[0] + m[1];
  y[1] = m[1] + m[2];
}

/// 3-D input transform of a 3 x 3 x 3 block x[d][h][w] (inputs q0 - 1 .. q0 + 1 per dimension).
FB_HOST_DEVICE void transform_input_3d(const double (&x)[k_points][k_points][k_points],
                                       double (&t)[k_points][k_points][k_points]) {
  double tw[k_points][k_points][k_points], th[k_points][k_points][k_points];
  for (int d = 0; d < k_points; ++d)
    for (int h = 0; h < k_points; ++h) transform_input(x[d][h][0], x[d][h][1], x[d][h][2], tw[d][h]);
  for (int d = 0; d < k_points; ++d)
    for (int w = 0; w < k_points; ++w) {
      double v[k_points];
      transform_input(tw[d][0][w], tw[d][1][w], tw[d][2][w], v);
      for (int p = 0; p < k_points; ++p) th[d][p][w] = v[p];
    }
  for (int h = 0; h < k_points; ++h)
    for (int w = 0; w < k_points; ++w) {
      double v[k_points];
      transform_input(th[0][h][w], th[1][h][w], th[2][h][w], v);
      for (int p = 0; p < k_points; ++p) t[p][h][w] = v[p];
    }
}

/// 3-D weight transform of the taps g[jd][jh][jw] (tap j reads input q - j).
FB_HOST_DEVICE void transform_weights_3d(const double (&g)[k_taps][k_taps][k_taps],
                                         double (&t)[k_points][k_points][k_points]) {
  double tw[k_taps][k_taps][k_points], th[k_taps][k_points][k_points];
  for (int d = 0; d < k_taps; ++d)
    for (int h = 0; h < k_taps; ++h) transform_weights(g[d][h][0], g[d][h][1], tw[d][h]);
  for (int d = 0; d < k_taps; ++d)
    for (int w = 0; w < k_points; ++w) {
      double v[k_points];
      transform_weights(tw[d][0][w], tw[d][1][w], v);
      for (int p = 0; p < k_points; ++p) th[d][p][w] = v[p];
    }
  for (int h = 0; h < k_points; ++h)
    for (int w = 0; w < k_points; ++w) {
      double v[k_points];
      transform_weights(th[0][h][w], th[1][h][w], v);
      for (int p = 0; p < k_points; ++p) t[p][h][w] = v[p];
    }
}

/// 3-D output transform: the 2 x 2 x 2 outputs y[d][h][w] (bases q0, q0 + 1 per dimension) from the
/// 27 points' sums m (each the sum over the input channels of transformed input x transformed weight).
FB_HOST_DEVICE void transform_output_3d(const double (&m)[k_points][k_points][k_points],
                                        double (&y)[k_outputs][k_outputs][k_outputs]) {
  double yw[k_points][k_points][k_outputs], yh[k_points][k_outputs][k_outputs];
  for (int d = 0; d < k_points; ++d)
    for (int h = 0; h < k_points; ++h) transform_output(m[d][h], yw[d][h]);
  for (int d = 0; d < k_points; ++d)
    for (int w = 0; w < k_outputs; ++w) {
      const double v[k_points] = {yw[d][0][w], yw[d][1][w], yw[d][2][w]};
      double o[k_outputs];
      transform_output(v, o);
      for (int p = 0; p < k_outputs; ++p) yh[d][p][w] = o[p];
    }
  for (int h = 0; h < k_outputs; ++h)
    for (int w = 0; w < k_outputs; ++w) {
      const double v[k_points] = {yh[0][h][w], yh[1][h][w], yh[2][h][w]};
      double o[k_outputs];
      transform_output(v, o);
      for (int p = 0; p < k_outputs; ++p) y[p][h][w] = o[p];
    }
}

}  // namespace fb::fused::math::winograd
