#pragma once
/// The input distributions of the cubic ConvTranspose3d models' host-executor tests (#15, #34), as
/// the harness draws them (harness/model/inputs.h): the offset is those models' +2 (at +100 the fp32
/// libtorch reference itself misses the gate, README), border_only is non-zero only on the border
/// rows and columns of the last two dims.
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "property_tests/input_dist.h"

namespace fb::convt3d_test_inputs {

using test_inputs::dist;
using test_inputs::dist_name;
using test_inputs::fill_uniform;

/// Fills x (planes of h x w, one after another) from distribution d.
inline void fill_x(std::vector<float>& v, int64_t h, int64_t w, dist d, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u01(0.0f, 1.0f);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  for (std::size_t e = 0; e < v.size(); ++e) {
    const int64_t in_plane = static_cast<int64_t>(e) % (h * w);
    const int64_t i = in_plane / w, j = in_plane % w;
    switch (d) {
      case dist::uniform: v[e] = u01(rng); break;
      case dist::normal: v[e] = n01(rng); break;
      case dist::offset: v[e] = 2.0f + u01(rng); break;
      case dist::border_only: v[e] = (i == 0 || j == 0 || i == h - 1 || j == w - 1) ? n01(rng) : 0.0f; break;
      case dist::sparse: v[e] = u01(rng) < 0.05f ? n01(rng) : 0.0f; break;
    }
  }
}

}  // namespace fb::convt3d_test_inputs
