#pragma once
/// The pieces of the roofline floor that the cubic ConvTranspose3d models (#15, #34) share: the
/// fused algorithm reads x and the weights once and writes the output once, and multiplies only
/// the valid (input, tap) pairs of each dimension (fused/math/convt_phase.cuh). Each model adds
/// its own per-channel parameters and passes.
#include <cstdint>
#include <vector>

#include "fused/math/convt_phase.cuh"
#include "harness/model/typed_model.h"

namespace fb::models {

struct convt3d_floor_sizes {
  double x;     ///< input elements
  double w;     ///< weight elements
  double out;   ///< conv-output elements
  double macs;  ///< multiply-adds of the valid (input, tap) pairs, one pass
};

/// C: a config with batch_size, in_channels, out_channels, depth, height, width, kernel_size,
/// stride and padding; out_spatial: its conv output's (D', H', W').
template <class C>
convt3d_floor_sizes convt3d_floor(const C& c, const std::vector<int64_t>& out_spatial) {
  convt3d_floor_sizes s{};
  s.x = elements(c.batch_size, c.in_channels, {c.depth, c.height, c.width});
  const double k3 = static_cast<double>(c.kernel_size * c.kernel_size * c.kernel_size);
  s.w = static_cast<double>(c.in_channels) * static_cast<double>(c.out_channels) * k3;
  s.out = elements(c.batch_size, c.out_channels, out_spatial);
  s.macs = static_cast<double>(c.batch_size) * static_cast<double>(c.in_channels) * static_cast<double>(c.out_channels);
  const int64_t in_spatial[3] = {c.depth, c.height, c.width};
  for (int d = 0; d < 3; ++d)
    s.macs *= static_cast<double>(
        fb::fused::phase_dim{in_spatial[d], out_spatial[static_cast<std::size_t>(d)], c.kernel_size, c.stride,
                             c.padding}
            .valid_pairs());
  return s;
}

}  // namespace fb::models
