#include "harness/verify_plan.h"

#include <algorithm>

#include "harness/device.h"

namespace fb {

std::vector<verify_target> verify_targets(const model_entry& model, device_kind device) {
  std::vector<verify_target> targets{{reference_implementation(model, device), true}};
  for (const implementation& impl : model.fused)
    if (impl.device == device) targets.push_back({impl, false});
  return targets;
}

bool oracle_affordable(const model_entry& model, const json& config) {
  const fuzz_budget b = fuzz_budget::oracle();
  return model.problem_size(config) <= static_cast<double>(b.max_output_elements) &&
         model.conv_macs(config) <= static_cast<double>(b.max_macs);
}

expectation expectation_for(const model_entry& model, const verify_target& target, const json& config) {
  if (!target.is_reference) return reference_expectation(model, target.candidate.device);
  if (oracle_affordable(model, config)) return oracle_expectation(model);
  return fp64_reference_expectation(model, target.candidate.device);
}

double case_conditioning(const model_entry& model, const model_case& c, device_kind device) {
  const model_case d = on_device(c, device);
  return model.conditioning(d.config, d.params, d.input);
}

check_result verify_case(const model_entry& model, const verify_target& target, const gen::case_recipe& recipe,
                         const check_options& options) {
  const model_case first = gen::make_case(model, recipe);
  const model_case fresh = gen::make_fresh_case(model, recipe);
  const double kappa = std::max(case_conditioning(model, first, target.candidate.device),
                                case_conditioning(model, fresh, target.candidate.device));
  if (kappa > max_reference_conditioning) {
    check_result r;
    r.result = outcome::not_run;
    r.conditioning = kappa;
    r.message = "ill-conditioned for an fp32 reference (conditioning " + std::to_string(kappa) + " > " +
                std::to_string(max_reference_conditioning) + ")";
    return r;
  }
  check_result r = check_equivalence(model, target.candidate, first, fresh,
                                     expectation_for(model, target, first.config), options);
  r.conditioning = kappa;
  return r;
}

}  // namespace fb
