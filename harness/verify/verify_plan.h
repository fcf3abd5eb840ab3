#pragma once
/// What `verify`, `bench` and the property tests check on a device: the reference's semantics (the
/// libtorch reference in fp64 against the fp64 loop oracle) and every fused implementation of that
/// device against the libtorch reference under the verdict rules (harness/verify/equivalence.h).
#include <string>
#include <vector>

#include "harness/model/case_recipe.h"
#include "harness/verify/equivalence.h"

namespace fb {

/// One candidate on one device.
struct verify_target {
  implementation candidate;
  bool is_reference = false;  ///< the reference itself: its semantics are checked against the oracle
};

/// The reference (its semantics check) plus the fused implementations registered for `device`.
[[nodiscard]] std::vector<verify_target> verify_targets(const model_entry& model, device_kind device);

/// The name of what a target is checked against: "fp64 oracle" for the reference, "reference (fp32/fp64)"
/// for fused implementations.
[[nodiscard]] std::string expectation_name(const verify_target& target);

/// True when the loop oracle can afford this config (fuzz_budget::oracle()).
[[nodiscard]] bool oracle_affordable(const model_entry& model, const parsed_config& config);

/// Throws std::invalid_argument ("<model>: this config needs ~X GiB on <device>, Y GiB are available")
/// when one verify case of `config` (both calls, fp32 and fp64 expectations: harness/device/resources.h)
/// needs more than the usable share of what `device` has available now.
void require_fits_in_memory(const model_entry& model, const parsed_config& config, device_kind device);

/// model_entry::conditioning of a case on `device`: how much the fp32 reference amplifies rounding.
/// A diagnostic only (verify's table shows its maximum); it decides nothing.
[[nodiscard]] double case_conditioning(const model_entry& model, const model_case& c, device_kind device);

/// The two calls of a recipe with their expectations on `device`, built once for all candidates from
/// the recipe's config parsed once.
[[nodiscard]] judged_case prepare_case(const model_entry& model, const parsed_config& config,
                                       const gen::case_recipe& recipe, device_kind device);

/// The same, parsing the recipe's config (once).
[[nodiscard]] judged_case prepare_case(const model_entry& model, const gen::case_recipe& recipe, device_kind device);

/// Checks a fused target on a prepared case, or the reference's semantics on the case's first call.
[[nodiscard]] check_result check_target(const model_entry& model, const verify_target& target, const judged_case& c,
                                        const check_options& options);

/// prepare_case, then check_target: one target on one recipe.
[[nodiscard]] check_result verify_case(const model_entry& model, const verify_target& target,
                                       const gen::case_recipe& recipe, const check_options& options);

}  // namespace fb
