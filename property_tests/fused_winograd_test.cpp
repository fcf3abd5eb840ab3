// Winograd F(2,2) in fp64 (fused/math/winograd_f22.cuh), the algebra of #34's next engine (issue 36):
// the 27-product 3-D tile equals the direct sum to fp64 rounding of its own terms, also on the inputs
// that attack split schemes, and each output reads only its own patch (bitwise unchanged whatever the
// neighbouring patches hold).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "fused/math/winograd_f22.cuh"

namespace {

namespace wg = fb::fused::math::winograd;
using block = double[3][3][3];
using taps = double[2][2][2];

/// One 3-D tile the way an engine would run it: per channel the transformed input times the
/// transformed taps, summed over the channels per point (fp64, channels ascending), then the output
/// transform.
void winograd_tile(const std::vector<float>& x, const std::vector<float>& g, int channels, double (&y)[2][2][2]) {
  double m[3][3][3] = {};
  for (int c = 0; c < channels; ++c) {
    block xb;
    taps gb;
    for (int i = 0; i < 27; ++i) xb[i / 9][i / 3 % 3][i % 3] = x[c * 27 + i];
    for (int i = 0; i < 8; ++i) gb[i / 4][i / 2 % 2][i % 2] = g[c * 8 + i];
    block xt, gt;
    wg::transform_input_3d(xb, xt);
    wg::transform_weights_3d(gb, gt);
    for (int d = 0; d < 3; ++d)
      for (int h = 0; h < 3; ++h)
        for (int w = 0; w < 3; ++w) m[d][h][w] += xt[d][h][w] * gt[d][h][w];
  }
  wg::transform_output_3d(m, y);
}

/// Output (od, oh, ow) of the tile by definition, in long double: y[q] = sum over the taps j of
/// x[q - j] g[j] per dimension (block index of input q - j: 1 + o - j), and the scale of its terms,
/// sum |x| |g| with the tap pairs' partner weights (what the transforms add): the error bound's unit.
void direct(const std::vector<float>& x, const std::vector<float>& g, int channels, int od, int oh, int ow,
            long double& value, long double& scale) {
  value = 0;
  scale = 0;
  for (int c = 0; c < channels; ++c)
    for (int jd = 0; jd < 2; ++jd)
      for (int jh = 0; jh < 2; ++jh)
        for (int jw = 0; jw < 2; ++jw) {
          const long double xv = x[c * 27 + (1 + od - jd) * 9 + (1 + oh - jh) * 3 + (1 + ow - jw)];
          value += xv * g[c * 8 + jd * 4 + jh * 2 + jw];
          long double gsum = 0;
          for (int i = 0; i < 8; ++i) gsum += std::fabs(static_cast<long double>(g[c * 8 + i]));
          scale += std::fabs(xv) * gsum;
        }
}

struct draw {
  const char* name;
  int x_binades;      ///< x = N(0,1) 2^e, e uniform integer in [-x_binades/2, x_binades/2)
  int weight_outlier;  ///< one weight in 8 of every channel x 2^weight_outlier
};

TEST(WinogradF22, TileEqualsTheDirectSumToFp64RoundingOfItsOwnTerms) {
  const draw draws[] = {{"normal", 0, 0}, {"x over 60 binades", 60, 0}, {"weights x 2^20", 0, 20}, {"both", 60, 20}};
  std::mt19937_64 gen(20261128);
  std::normal_distribution<float> n01(0, 1);
  for (const draw& dr : draws)
    for (int trial = 0; trial < 200; ++trial) {
      const int channels = 1 + trial % 64;
      std::vector<float> x(channels * 27), g(channels * 8);
      std::uniform_int_distribution<int> binade(-dr.x_binades / 2, dr.x_binades / 2 - (dr.x_binades > 0));
      std::uniform_int_distribution<int> eighth(0, 7);
      for (float& v : x) v = std::ldexp(n01(gen), binade(gen));
      for (float& v : g) v = 0.05f * n01(gen);
      if (dr.weight_outlier > 0)
        for (int c = 0; c < channels; ++c) g[c * 8 + eighth(gen)] *= std::ldexp(1.0f, dr.weight_outlier);
      double y[2][2][2];
      winograd_tile(x, g, channels, y);
      for (int od = 0; od < 2; ++od)
        for (int oh = 0; oh < 2; ++oh)
          for (int ow = 0; ow < 2; ++ow) {
            long double value, scale;
            direct(x, g, channels, od, oh, ow, value, scale);
            // Each of the 8 points an output reads is a sum over the channels of terms of at most
            // |patch inputs| x |taps| (the transforms add inputs of the patch and the taps' weights
            // only): at most 8 (channels + 1) + 7 fp64 roundings of at most the scale, < 2^-43 scale.
            // A wrong point or transform is off by a sizeable part of the scale.
            const long double err = std::fabs(static_cast<long double>(y[od][oh][ow]) - value);
            ASSERT_LE(err, std::ldexp(scale, -43))
                << dr.name << " trial " << trial << " output " << od << oh << ow << ": " << y[od][oh][ow] << " vs "
                << static_cast<double>(value);
          }
    }
}

TEST(WinogradF22, EachOutputReadsOnlyItsOwnPatch) {
  std::mt19937_64 gen(7);
  std::normal_distribution<float> n01(0, 1);
  const int channels = 5;
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<float> x(channels * 27), g(channels * 8);
    for (float& v : x) v = n01(gen);
    for (float& v : g) v = n01(gen);
    double y[2][2][2];
    winograd_tile(x, g, channels, y);
    for (int od = 0; od < 2; ++od)
      for (int oh = 0; oh < 2; ++oh)
        for (int ow = 0; ow < 2; ++ow) {
          // Every input outside output (od, oh, ow)'s patch (block indices od..od+1 per dimension)
          // replaced by 2^40: the output must not change in a single bit.
          std::vector<float> far = x;
          for (int c = 0; c < channels; ++c)
            for (int i = 0; i < 27; ++i) {
              const int d = i / 9, h = i / 3 % 3, w = i % 3;
              const bool in_patch = d >= od && d <= od + 1 && h >= oh && h <= oh + 1 && w >= ow && w <= ow + 1;
              if (!in_patch) far[c * 27 + i] = std::ldexp(1.0f, 40);
            }
          double y_far[2][2][2];
          winograd_tile(far, g, channels, y_far);
          ASSERT_EQ(y_far[od][oh][ow], y[od][oh][ow]) << "output " << od << oh << ow << " read outside its patch";
        }
  }
}

TEST(WinogradF22, TransformsOfFp32ValuesAreExactInFp64) {
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> binade(-14, 14), sign(0, 1);  // exponents within 29 of each other
  auto value = [&] { return std::ldexp(static_cast<double>(mantissa(gen)), binade(gen)) * (sign(gen) ? 1 : -1); };
  for (int i = 0; i < 100000; ++i) {
    const double a = value(), b = value();
    double t[3];
    wg::transform_input(a, b, a, t);
    EXPECT_EQ(t[0] + b, a);  // x0 - x1 exact
    wg::transform_weights(a, b, t);
    EXPECT_EQ(t[1] - b, a);  // g0 + g1 exact
  }
}

}  // namespace
