#pragma once
/// The fuzz domain of convt2d_mul_gap, declared once (harness/model/fuzz_domain.h): read by its generator and
/// `list` (harness/models/convt2d_mul_gap.cpp) and by its GPU self-test's draw()
/// (property_tests/selftest/convt2d_mul_gap.cpp). Torch-free.
#include "harness/model/fuzz_domain.h"

namespace fb::models {

// #44: ConvTranspose2d with stride, padding and output_padding, then a multiplier of either sign.
[[nodiscard]] inline const domain::convt_domain& convt2d_mul_gap_domain() {
  static const domain::convt_domain domain = [] {
    using domain::distribution;
    domain::convt_domain d;
    d.dims = 2;
    d.strided = true;
    d.output_padding = true;
    d.reals = {{"multiplier", -3.0, 3.0}};
    // At +100 the fp32 libtorch reference misses the gate against fp64 (measured 5.9e-5 on an output
    // of 1.1: the conv sum of large positive inputs cancels), so offset inputs sit at +10 here.
    d.input_offset = 10.0;
    return d;
  }();
  return domain;
}

}  // namespace fb::models
