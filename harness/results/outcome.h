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
  declined,        ///< an outside plug-in declined the config (its own limits): counted, never passed
};

inline constexpr std::array<outcome, 7> all_outcomes = {outcome::passed,        outcome::incorrect,
                                                        outcome::failed,        outcome::not_run,
                                                        outcome::not_supported, outcome::invalid_config,
                                                        outcome::declined};

[[nodiscard]] constexpr std::string_view to_string(outcome o) {
  switch (o) {
    case outcome::passed: return "passed";
    case outcome::incorrect: return "incorrect";
    case outcome::failed: return "failed";
    case outcome::not_run: return "not_run";
    case outcome::not_supported: return "not_supported";
    case outcome::invalid_config: return "invalid_config";
    case outcome::declined: return "declined";
  }
  return "failed";
}

/// Inverse of to_string; nullopt for an unknown name.
[[nodiscard]] inline std::optional<outcome> outcome_from_string(std::string_view s) {
  for (outcome o : all_outcomes)
    if (to_string(o) == s) return o;
  return std::nullopt;
}

/// Which rule of the equivalence contract decided a case (README "Verdict rules").
enum class verdict_rule {
  none,              ///< no values were judged (the case threw, was not run, or is a timing row)
  fp32_reference,    ///< |cand - ref32| <= atol + rtol*|ref32|: the fp32 reference is itself within
                     ///< tolerance of fp64 everywhere, so it is the expectation
  fp64_allowance,    ///< the fp32 reference misses fp64 somewhere, or the candidate misses the fp32
                     ///< window: judged against fp64 with the reference's own largest error as the allowance:
                     ///< |cand - ref64| <= atol + rtol*|ref64| + max|ref32 - ref64| at every element
  fp64_oracle,       ///< the reference's semantics: the libtorch reference run in fp64 against the
                     ///< independent fp64 loop oracle, at a tolerance of 1e-9
};

inline constexpr std::array<verdict_rule, 4> all_verdict_rules = {verdict_rule::none, verdict_rule::fp32_reference,
                                                                  verdict_rule::fp64_allowance, verdict_rule::fp64_oracle};

[[nodiscard]] constexpr std::string_view to_string(verdict_rule r) {
  switch (r) {
    case verdict_rule::none: return "none";
    case verdict_rule::fp32_reference: return "fp32_reference";
    case verdict_rule::fp64_allowance: return "fp64_allowance";
    case verdict_rule::fp64_oracle: return "fp64_oracle";
  }
  return "none";
}

/// Inverse of to_string; nullopt for an unknown name.
[[nodiscard]] inline std::optional<verdict_rule> verdict_rule_from_string(std::string_view s) {
  for (verdict_rule r : all_verdict_rules)
    if (to_string(r) == s) return r;
  return std::nullopt;
}

}  // namespace fb
