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

std::string expectation_name(const verify_target& target) {
  return target.is_reference ? "fp64 oracle" : "reference fp32/fp64";
}

bool oracle_affordable(const model_entry& model, const json& config) {
  const fuzz_budget b = fuzz_budget::oracle();
  return model.problem_size(config) <= static_cast<double>(b.max_output_elements) &&
         model.conv_macs(config) <= static_cast<double>(b.max_macs);
}

double case_memory_bytes(const model_entry& model, const json& config) {
  const auto product = [](const std::vector<int64_t>& shape) {
    double n = 1;
    for (int64_t s : shape) n *= static_cast<double>(s);
    return n;
  };
  const double in = product(model.input_shape(config));
  const double out = product(model.output_shape(config));
  const double conv = model.problem_size(config);
  // Weight elements: every input element meets C_out * k^dims weights (conv_macs), so the weight holds
  // conv_macs / (input elements / C_in) of them.
  const double c_in = config.contains("in_channels") ? config.at("in_channels").get<double>() : 1.0;
  const double weights = in > 0 ? model.conv_macs(config) / in * c_in : 0.0;
  const double fp64_reference_peak = 8.0 * (in + 4.0 * conv + out + weights);
  const double stored_per_call = 4.0 * in + 12.0 * out + 12.0 * weights;  // inputs, params, fp32 + fp64 expectations
  const double candidate = 4.0 * out * 3.0 + 8.0 * out * 3.0;            // three calls' outputs, compare copies
  return fp64_reference_peak + 2.0 * stored_per_call + candidate;
}

void require_fits_in_memory(const model_entry& model, const json& config, device_kind device) {
  const double need = case_memory_bytes(model, config);
  const double have = available_memory_bytes(device);
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  if (have > 0 && need > 0.9 * have)
    throw std::invalid_argument(model.id + ": this config needs ~" + std::to_string(need / gib).substr(0, 6) + " GiB on " +
                                std::string(to_string(device)) + ", " + std::to_string(have / gib).substr(0, 6) +
                                " GiB are available");
}

double case_conditioning(const model_entry& model, const model_case& c, device_kind device) {
  const model_case d = on_device(c, device);
  return model.conditioning(d.config, d.params, d.input);
}

judged_case prepare_case(const model_entry& model, const gen::case_recipe& recipe, device_kind device) {
  judged_case c;
  c.first = gen::make_case(model, recipe);
  c.fresh = gen::make_fresh_case(model, recipe);
  c.first_expected = reference_expectations(model, c.first, device);
  c.fresh_expected = reference_expectations(model, c.fresh, device);
  return c;
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
    return check_equivalence(model, target.candidate, prepare_case(model, recipe, target.candidate.device), options);
  } catch (const std::exception& e) {  // making the case or its expectations failed (e.g. out of memory)
    check_result r;
    r.result = outcome::failed;
    r.message = std::string("preparing the case: ") + e.what();
    return r;
  }
}

}  // namespace fb
