#pragma once
/// The fuzz domain of the test-only model test_convt2d_relu, declared once (harness/model/fuzz_domain.h):
/// its generator and `list` read it, as they read the five models' <id>_domain.h. Torch-free.
#include "harness/model/fuzz_domain.h"

namespace fb::models {

// ConvTranspose2d with stride, padding and output_padding, then ReLU and a scale of either sign.
[[nodiscard]] inline const domain::convt_domain& test_convt2d_relu_domain() {
  static const domain::convt_domain domain = [] {
    domain::convt_domain d;
    d.dims = 2;
    d.strided = true;
    d.output_padding = true;
    d.channels = {1, 16};
    d.spatial = {1, 24};
    d.reals = {{"scale", -2.0, 2.0}};
    // Offset inputs at +10, as #44's: at +100 the fp32 conv sums that cancel put the libtorch reference
    // itself past the gate against fp64.
    d.input_offset = 10.0;
    return d;
  }();
  return domain;
}

}  // namespace fb::models
