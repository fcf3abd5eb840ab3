#pragma once
/// What happened to one case (cf. CUTLASS's Disposition). Torch-free so that reports can use it.
#include <array>
#include <optional>
#include <string_view>

namespace fb {

enum class outcome {
  passed,          ///< every check of the equivalence contract held
  incorrect,       ///< it ran, and some check failed (values, writes, buffers, determinism, ...)
  failed,          ///< it threw (CUDA error, bad allocation, ...): only this case is marked
  not_run,         ///< skipped on purpose (e.g. does not fit in device memory)
  not_supported,   ///< this implementation does not exist for the device
  invalid_config,  ///< the config breaks a rule of the model
};

inline constexpr std::array<outcome, 6> all_outcomes = {outcome::passed,        outcome::incorrect,
                                                        outcome::failed,        outcome::not_run,
                                                        outcome::not_supported, outcome::invalid_config};

[[nodiscard]] constexpr std::string_view to_string(outcome o) {
  switch (o) {
    case outcome::passed: return "passed";
    case outcome::incorrect: return "incorrect";
    case outcome::failed: return "failed";
    case outcome::not_run: return "not_run";
    case outcome::not_supported: return "not_supported";
    case outcome::invalid_config: return "invalid_config";
  }
  return "failed";
}

/// Inverse of to_string; nullopt for an unknown name.
[[nodiscard]] inline std::optional<outcome> outcome_from_string(std::string_view s) {
  for (outcome o : all_outcomes)
    if (to_string(o) == s) return o;
  return std::nullopt;
}

}  // namespace fb
