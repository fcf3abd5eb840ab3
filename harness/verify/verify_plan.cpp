#include "harness/verify/verify_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/device/device.h"
#include "harness/device/resources.h"

namespace fb {

std::vector<verify_target> verify_targets(const model_entry& model, device_kind device) {
  std::vector<verify_target> targets{{reference_implementation(model, device), true}};
  for (const implementation& impl : model.fused)
    if (impl.device == device) targets.push_back({impl, false});
  return targets;
}

std::string expectation_name(const verify_target& target) {
  return target.is_reference ? "fp64 oracle" : "reference fp32/fp64";
}

bool oracle_affordable(const model_entry& model, const parsed_config& config) {
  const fuzz_budget b = fuzz_budget::oracle();
  return model.problem_size(config) <= static_cast<double>(b.max_output_elements) &&
         model.conv_macs(config) <= static_cast<double>(b.max_macs);
}

void require_fits_in_memory(const model_entry& model, const parsed_config& config, device_kind device) {
  const double need = case_bytes_estimate(model, config, /*input_sets=*/2, /*with_fp64=*/true);
  const double have = available_bytes(device);
  if (have > 0 && need > usable_memory_fraction * have)
    throw std::invalid_argument(fmt::format("{}: this config needs ~{:.1f} GiB on {}, {:.1f} GiB are available",
                                            model.id, to_gib(need), to_string(device), to_gib(have)));
}

double case_conditioning(const model_entry& model, const model_case& c, device_kind device) {
  const model_case d = on_device(c, device);
  return model.conditioning(d.config, d.params, d.input);
}

judged_case prepare_case(const model_entry& model, const parsed_config& config, const gen::case_recipe& recipe,
                         device_kind device) {
  judged_case c;
  c.first = gen::make_case(model, config, recipe);
  c.fresh = gen::make_fresh_case(model, config, recipe);
  c.first_expected = reference_expectations(model, c.first, device);
  c.fresh_expected = reference_expectations(model, c.fresh, device);
  return c;
}

judged_case prepare_case(const model_entry& model, const gen::case_recipe& recipe, device_kind device) {
  return prepare_case(model, model.parse(recipe.config), recipe, device);
}

check_result check_target(const model_entry& model, const verify_target& target, const judged_case& c,
                          const check_options& options) {
  if (target.is_reference) return check_reference_semantics(model, c.first, target.candidate.device);
  return check_equivalence(model, target.candidate, c, options);
}

check_result verify_case(const model_entry& model, const verify_target& target, const gen::case_recipe& recipe,
                         const check_options& options) {
  try {
    if (target.is_reference) {
      return check_reference_semantics(model, gen::make_case(model, recipe), target.candidate.device);
    }
    return check_equivalence(model, target.candidate,
                             prepare_case(model, model.parse(recipe.config), recipe, target.candidate.device), options);
  } catch (const std::exception& e) {  // making the case or its expectations failed (e.g. out of memory)
    check_result r;
    r.result = outcome::failed;
    r.message = std::string("preparing the case: ") + e.what();
    return r;
  }
}

}  // namespace fb
