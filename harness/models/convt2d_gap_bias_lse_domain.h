#pragma once
/// The fuzz domain of convt2d_gap_bias_lse, declared once (harness/model/fuzz_domain.h): read by its generator
/// and `list` (harness/models/convt2d_gap_bias_lse.cpp) and by its GPU self-test's draw()
/// (property_tests/selftest/convt2d_gap_bias_lse.cpp). Torch-free.
#include "harness/model/fuzz_domain.h"

namespace fb::models {

// #42: stride 1 and padding 0 are fixed by the module (not config keys).
[[nodiscard]] inline const domain::convt_domain& convt2d_gap_bias_lse_domain() {
  static const domain::convt_domain domain = [] {
    using domain::distribution;
    domain::convt_domain d;
    d.dims = 2;
    d.strided = false;
    d.note = "bias drawn up to +-150 (unstabilised logsumexp overflows)";
    return d;
  }();
  return domain;
}

}  // namespace fb::models
