#pragma once
/// One maker per model file in harness/models/; harness/registry.cpp lists them, one per line.
#include "harness/model_entry.h"

namespace fb::models {
[[nodiscard]] model_entry convt3d_bn_sub();
[[nodiscard]] model_entry convt3d_ln_gelu_scale();
[[nodiscard]] model_entry convt2d_gap_bias_lse();
[[nodiscard]] model_entry convt2d_mul_gap();
[[nodiscard]] model_entry convt3d_scale_bn_gap();
}  // namespace fb::models
