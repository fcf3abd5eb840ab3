#pragma once
/// The test-only model's "fused" implementation: a torch-free host executor over raw pointers, as a
/// fused/<id>/<id>.h API is, in gather form (each output element sums the taps that land on it; the
/// reference and oracle scatter). `bias_after_relu` is the deliberately wrong variant: ReLU before the
/// bias is added, a plausible fusion slip that the verify fuzz must catch.
#include <algorithm>
#include <cstdint>

namespace fb::sixth_model {

struct problem {
  int64_t batch, in_channels, out_channels, height, width, kernel_size, stride, padding, output_padding;
  float scale;
};

/// (n - 1) s - 2p + k + op: written here again, not taken from reference/ (the oracle judges this).
[[nodiscard]] inline int64_t output_size(int64_t n, const problem& p) {
  return (n - 1) * p.stride - 2 * p.padding + p.kernel_size + p.output_padding;
}

/// x (B, C_in, H, W), weight (C_in, C_out, k, k), bias (C_out) -> out (B, C_out, H', W').
template <bool bias_after_relu = false>
void run_host(const problem& p, const float* x, const float* weight, const float* bias, float* out) {
  const int64_t ho = output_size(p.height, p), wo = output_size(p.width, p), k = p.kernel_size;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t co = 0; co < p.out_channels; ++co)
      for (int64_t oh = 0; oh < ho; ++oh)
        for (int64_t ow = 0; ow < wo; ++ow) {
          double acc = 0.0;
          for (int64_t th = 0; th < k; ++th) {
            const int64_t nh = oh + p.padding - th;  // = ih * stride
            if (nh < 0 || nh % p.stride != 0 || nh / p.stride >= p.height) continue;
            for (int64_t tw = 0; tw < k; ++tw) {
              const int64_t nw = ow + p.padding - tw;
              if (nw < 0 || nw % p.stride != 0 || nw / p.stride >= p.width) continue;
              for (int64_t ci = 0; ci < p.in_channels; ++ci)
                acc += static_cast<double>(x[((b * p.in_channels + ci) * p.height + nh / p.stride) * p.width +
                                             nw / p.stride]) *
                       weight[((ci * p.out_channels + co) * k + th) * k + tw];
            }
          }
          const double y = bias_after_relu ? std::max(acc, 0.0) + bias[co] : std::max(acc + bias[co], 0.0);
          out[((b * p.out_channels + co) * ho + oh) * wo + ow] = static_cast<float>(y * p.scale);
        }
}

}  // namespace fb::sixth_model
