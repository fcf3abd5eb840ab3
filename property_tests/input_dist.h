#pragma once
/// The input distributions of the torch-free tests (the fused host-executor tests and the GPU
/// self-test), named as the harness names its own (harness/model/inputs.h): uniform [0,1), standard normal,
/// an offset (each test picks its centre), non-zero only on the borders, sparse. Each test fills its
/// tensors its own way (planes or volumes, its random source); the set, the names and fill_uniform
/// (parameters uniform in [lo, hi)) are these.
#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace fb::test_inputs {

enum class dist { uniform, normal, offset, border_only, sparse };

/// Every distribution, in order.
inline constexpr std::array<dist, 5> all_dists = {dist::uniform, dist::normal, dist::offset, dist::border_only,
                                                  dist::sparse};

/// "uniform", "normal", "offset", "border_only", "sparse".
[[nodiscard]] inline const char* dist_name(dist d) {
  switch (d) {
    case dist::uniform: return "uniform";
    case dist::normal: return "normal";
    case dist::offset: return "offset";
    case dist::border_only: return "border_only";
    case dist::sparse: return "sparse";
  }
  return "?";
}

/// The distribution at `index` (any integer; wraps): draws from a test's own random source.
[[nodiscard]] inline dist dist_at(int64_t index) {
  const int64_t n = static_cast<int64_t>(all_dists.size());
  return all_dists[static_cast<std::size_t>(((index % n) + n) % n)];
}

/// Fills v with values uniform in [lo, hi) (weights, biases and the other parameters).
inline void fill_uniform(std::vector<float>& v, float lo, float hi, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(lo, hi);
  for (float& f : v) f = u(rng);
}

}  // namespace fb::test_inputs
