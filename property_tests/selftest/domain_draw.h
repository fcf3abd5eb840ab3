#pragma once
/// The self-test's draws of a model's declared fuzz domain (harness/model/fuzz_domain.h), from its own
/// random source (rng_t: range(lo, hi) with both ends included, u01() on [0, 1)): the same ranges and
/// distributions the harness draws through RapidCheck (harness/model/generators.h). Torch-free.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "harness/model/fuzz_domain.h"

namespace fb::selftest {

/// An integer of `r`.
template <class Rng>
[[nodiscard]] int64_t draw_from(Rng& rng, const domain::integer_range& r) {
  return rng.range(r.lo, r.hi);
}

/// A value of a real field, by its distribution.
template <class Rng>
[[nodiscard]] double draw_from(Rng& rng, const domain::real_field& f) {
  if (f.dist == domain::distribution::log_uniform)
    return std::exp(std::log(f.lo) + rng.u01() * (std::log(f.hi) - std::log(f.lo)));
  return f.lo + rng.u01() * (f.hi - f.lo);
}

/// A padding as the domain draws it: 0..kernel_size, one case in wide_padding_one_in 0..`most` (the
/// largest PyTorch accepts at the problem's sizes); never above `most`.
template <class Rng>
[[nodiscard]] int64_t draw_padding(Rng& rng, const domain::convt_domain& d, int64_t kernel_size, int64_t most) {
  const bool wide = rng.range(0, std::max(1, d.wide_padding_one_in) - 1) == 0;
  return rng.range(0, wide ? most : std::min(most, kernel_size));
}

}  // namespace fb::selftest
