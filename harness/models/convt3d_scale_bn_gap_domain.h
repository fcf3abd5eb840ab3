#pragma once
/// The fuzz domain of convt3d_scale_bn_gap, declared once (harness/model/fuzz_domain.h): read by its generator
/// and `list` (harness/models/convt3d_scale_bn_gap.cpp) and by its GPU self-test's draw()
/// (property_tests/selftest/convt3d_scale_bn_gap.cpp). Torch-free.
#include "harness/model/fuzz_domain.h"

namespace fb::models {

// #77: stride 1 and padding 0 are fixed by the module; BatchNorm3d in training or eval.
[[nodiscard]] inline const domain::convt_domain& convt3d_scale_bn_gap_domain() {
  static const domain::convt_domain domain = [] {
    using domain::distribution;
    domain::convt_domain d;
    d.dims = 3;
    d.strided = false;
    d.reals = {{"scale_factor", -3.0, 3.0}, {"eps", 1e-6, 1.0, distribution::log_uniform}, {"momentum", 1e-3, 1.0}};
    d.flags = {"training"};
    d.batch_norm_training_flag = "training";
    // As for #15: at +100 the fp32 reference's running_var misses the gate (rel 1.7e-5 measured);
    // offset inputs sit at +2.
    d.input_offset = 2.0;
    return d;
  }();
  return domain;
}

}  // namespace fb::models
