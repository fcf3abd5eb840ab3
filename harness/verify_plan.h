#pragma once
/// What `verify` (and the property tests) check on a device: the fp32 reference against an fp64
/// expectation, and every fused implementation of that device against the fp32 reference.
#include <string>
#include <vector>

#include "harness/equivalence.h"
#include "harness/generators.h"

namespace fb {

/// One candidate on one device.
struct verify_target {
  implementation candidate;
  bool is_reference = false;  ///< the fp32 reference itself (checked against fp64)
};

/// The reference plus the fused implementations registered for `device`.
[[nodiscard]] std::vector<verify_target> verify_targets(const model_entry& model, device_kind device);

/// The expectation for a target on a case: fused -> fp32 reference (TF32 off); the reference ->
/// the fp64 loop oracle when the case is small enough for it, else the fp64 libtorch reference.
[[nodiscard]] expectation expectation_for(const model_entry& model, const verify_target& target,
                                          const json& config);

/// True when the loop oracle can afford this config (fuzz_budget::oracle()).
[[nodiscard]] bool oracle_affordable(const model_entry& model, const json& config);

/// The fuzz domain ends where the fp32 reference stops being trustworthy: a case whose normalisation
/// amplifies fp32 rounding more than this (model_entry::conditioning) cannot judge a kernel at 1e-5,
/// because the fp32 reference itself misses the gate against fp64 there. Such cases are reported as
/// not_run ("ill-conditioned"), counted, and never silently passed. Calibrated by the property
/// "fp32 reference vs fp64 reference" (see the notes in README.md).
inline constexpr double max_reference_conditioning = 20.0;

/// model_entry::conditioning of a case, computed on `device`.
[[nodiscard]] double case_conditioning(const model_entry& model, const model_case& c, device_kind device);

/// Builds the two cases of a recipe and checks `target` on them.
[[nodiscard]] check_result verify_case(const model_entry& model, const verify_target& target,
                                       const gen::case_recipe& recipe, const check_options& options);

}  // namespace fb
