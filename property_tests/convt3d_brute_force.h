#pragma once
/// The fp64 ConvTranspose3d by its scatter definition, for the host-executor tests of the cubic 3-D
/// models (#15, #34, #77): y[b, co, i*s - p + t] += x[b, ci, i] * w[ci, co, t] (+ bias[co]), per
/// dimension. Its output size is written here from the definition, not taken from fused/: the tests
/// judge the fused code, so they share no formula with it. Torch-free.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fb::convt3d_test {

/// Sizes of a cubic transposed convolution (kernel, stride and padding the same in every dim).
struct convt3d_dims {
  int64_t batch, in_channels, out_channels, depth, height, width, kernel_size, stride, padding;

  /// (n - 1)s - 2p + k: the output size along an input size n.
  [[nodiscard]] int64_t out(int64_t n) const { return (n - 1) * stride - 2 * padding + kernel_size; }
  /// Output elements of one (sample, channel).
  [[nodiscard]] int64_t out_volume() const { return out(depth) * out(height) * out(width); }
};

/// The convolution in fp64, (B, C_out, D', H', W') row-major. `x` is (B, C_in, D, H, W), `w` is
/// (C_in, C_out, k, k, k), `bias` (C_out) or null. With `square_terms`, also the sum of the squared
/// terms x*w of each output (its fp32 rounding scale), same layout.
template <class X, class W>
[[nodiscard]] std::vector<double> conv_transpose3d_fp64(const convt3d_dims& d, const X* x, const W* w,
                                                        const float* bias,
                                                        std::vector<double>* square_terms = nullptr) {
  const int64_t k = d.kernel_size, s = d.stride, pd = d.padding;
  const int64_t Do = d.out(d.depth), Ho = d.out(d.height), Wo = d.out(d.width), S = Do * Ho * Wo;
  const int64_t Co = d.out_channels, Ci = d.in_channels;
  std::vector<double> y(static_cast<std::size_t>(d.batch * Co * S), 0.0);
  if (square_terms != nullptr) square_terms->assign(y.size(), 0.0);
  if (bias != nullptr)
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t co = 0; co < Co; ++co)
        for (int64_t e = 0; e < S; ++e) y[static_cast<std::size_t>((b * Co + co) * S + e)] = bias[co];
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t ci = 0; ci < Ci; ++ci)
      for (int64_t i = 0; i < d.depth; ++i)
        for (int64_t j = 0; j < d.height; ++j)
          for (int64_t l = 0; l < d.width; ++l) {
            const double xv = x[(((b * Ci + ci) * d.depth + i) * d.height + j) * d.width + l];
            if (xv == 0.0) continue;
            for (int64_t td = 0; td < k; ++td) {
              const int64_t od = i * s - pd + td;
              if (od < 0 || od >= Do) continue;
              for (int64_t th = 0; th < k; ++th) {
                const int64_t oh = j * s - pd + th;
                if (oh < 0 || oh >= Ho) continue;
                for (int64_t tw = 0; tw < k; ++tw) {
                  const int64_t ow = l * s - pd + tw;
                  if (ow < 0 || ow >= Wo) continue;
                  for (int64_t co = 0; co < Co; ++co) {
                    const double term = xv * static_cast<double>(w[(((ci * Co + co) * k + td) * k + th) * k + tw]);
                    const std::size_t at = static_cast<std::size_t>((b * Co + co) * S + (od * Ho + oh) * Wo + ow);
                    y[at] += term;
                    if (square_terms != nullptr) (*square_terms)[at] += term * term;
                  }
                }
              }
            }
          }
  return y;
}

}  // namespace fb::convt3d_test
