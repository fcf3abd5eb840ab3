#include "property_tests/model_properties.h"

#include <algorithm>
#include <sstream>

namespace fb::gen {
void showValue(const case_recipe& r, std::ostream& os) {
  os << "config " << r.config.dump() << ", seed " << r.seed << ", inputs " << to_string(r.inputs) << ", params "
     << (r.params == ref::param_init::randomized ? "random" : "default");
}
}  // namespace fb::gen

namespace fb::testing {
namespace {

/// Checks one target on one generated case and fails the property with the verdict and repro line.
void expect_equivalent(const model_entry& model, const verify_target& target, const gen::case_recipe& recipe,
                       device_kind device) {
  const check_result r = verify_case(model, target, recipe, check_options{});
  // Outside the fuzz domain (verify_plan.h: max_reference_conditioning) the fp32 reference cannot
  // judge at 1e-5: verify_case reports not_run, and the property discards and counts the case, as
  // the reference properties do (discard_ill_conditioned). Never a pass.
  const bool ill_conditioned = r.result == outcome::not_run && r.conditioning > max_reference_conditioning;
  RC_TAG(ill_conditioned ? "ill-conditioned (discarded)" : "in domain");
  RC_PRE(!ill_conditioned);
  if (r.result != outcome::passed) {
    RC_FAIL(std::string(model.id) + " " + target.candidate.name + ": " + std::string(to_string(r.result)) + ": " +
            r.message + "\n    repro: " + gen::repro_command(model, recipe, device));
  }
}

/// Outside the fuzz domain (verify_plan.h: max_reference_conditioning): RapidCheck discards the
/// case, counts it, and draws another.
void discard_ill_conditioned(const model_entry& model, const model_case& first, const model_case& fresh,
                             device_kind device) {
  const double kappa =
      std::max(case_conditioning(model, first, device), case_conditioning(model, fresh, device));
  RC_TAG(kappa > max_reference_conditioning ? "ill-conditioned (discarded)" : "in domain");
  RC_PRE(kappa <= max_reference_conditioning);
}

}  // namespace

std::string cuda_skip_reason() {
  if (!cuda_available())
    return "SKIPPED (GPU test): no CUDA device, or this build's libtorch is CPU-only; scripts/gpu-gate runs it";
  return {};
}

int fused_count(const model_entry& model, device_kind device) {
  int n = 0;
  for (const implementation& impl : model.fused) n += impl.device == device;
  return n;
}

void reference_matches_oracle(const model_entry& model) {
  const gen::case_recipe recipe = *gen::fuzz_case(model, fuzz_budget::oracle());
  const verify_target target{reference_implementation(model, device_kind::cpu), true};
  const model_case first = gen::make_case(model, recipe);
  const model_case fresh = gen::make_fresh_case(model, recipe);
  discard_ill_conditioned(model, first, fresh, device_kind::cpu);
  const check_result r = check_equivalence(model, target.candidate, first, fresh, oracle_expectation(model));
  if (r.result != outcome::passed)
    RC_FAIL(model.id + " reference vs oracle: " + r.message + "\n    repro: " +
            gen::repro_command(model, recipe, device_kind::cpu));
}

void reference_matches_fp64(const model_entry& model, device_kind device) {
  const fuzz_budget budget = device == device_kind::cuda ? fuzz_budget::cuda() : fuzz_budget::cpu();
  const gen::case_recipe recipe = *gen::fuzz_case(model, budget);
  const verify_target target{reference_implementation(model, device), true};
  const model_case first = gen::make_case(model, recipe);
  const model_case fresh = gen::make_fresh_case(model, recipe);
  discard_ill_conditioned(model, first, fresh, device);
  check_options opt;
  opt.check_determinism = false;  // determinism is a property of fused kernels, not of cuDNN
  const check_result r =
      check_equivalence(model, target.candidate, first, fresh, fp64_reference_expectation(model, device), opt);
  if (r.result != outcome::passed)
    RC_FAIL(model.id + " fp32 reference vs fp64 reference: " + r.message + "\n    repro: " +
            gen::repro_command(model, recipe, device));
}

void output_shape_is_inferred(const model_entry& model) {
  const gen::case_recipe recipe = *gen::fuzz_case(model, fuzz_budget::cpu());
  const model_case c = gen::make_case(model, recipe);
  const ref::forward_result r = model.reference(c.config, c.params, c.input);
  RC_ASSERT(r.output.sizes().vec() == model.output_shape(c.config));
  RC_ASSERT(r.output.scalar_type() == at::kFloat);
}

void non_positive_sizes_are_rejected(const model_entry& model) {
  const json valid = *model.gen_config(fuzz_budget::cpu());
  std::vector<std::string> sizes;
  for (const field_info& f : model.schema)
    if (f.type == field_type::integer && f.name != "padding" && f.name != "output_padding") sizes.push_back(f.name);
  const std::string field = *rc::gen::elementOf(sizes);
  const int64_t bad = *rc::gen::inRange<int64_t>(-3, 1);
  json invalid = valid;
  invalid[field] = bad;
  try {
    (void)model.canonicalize(invalid);
  } catch (const ref::config_error& e) {
    RC_ASSERT(e.field() == field);
    return;
  }
  RC_FAIL(model.id + ": " + field + " = " + std::to_string(bad) + " was accepted");
}

void expect_rejected(const model_entry& model, std::initializer_list<invalid_row> rows) {
  for (const invalid_row& row : rows) {
    json config = model.default_config;
    config.merge_patch(json::parse(row.patch));
    try {
      (void)model.canonicalize(config);
      ADD_FAILURE() << model.id << " accepted invalid config " << config.dump();
    } catch (const ref::config_error& e) {
      EXPECT_EQ(e.field(), row.field) << e.what();
    }
  }
}

void expect_required_keys_and_valid_default(const model_entry& model) {
  EXPECT_EQ(model.canonicalize(model.default_config), model.default_config);
  for (const field_info& f : model.schema) {
    if (!f.required) continue;
    json config = model.default_config;
    config.erase(f.name);
    try {
      (void)model.canonicalize(config);
      ADD_FAILURE() << model.id << " accepted a config without " << f.name;
    } catch (const ref::config_error& e) {
      EXPECT_EQ(e.field(), f.name) << e.what();
    }
  }
}

void fused_matches_reference(const model_entry& model, device_kind device) {
  const fuzz_budget budget = device == device_kind::cuda ? fuzz_budget::cuda() : fuzz_budget::cpu();
  const gen::case_recipe recipe = *gen::fuzz_case(model, budget);
  for (const verify_target& target : verify_targets(model, device))
    if (!target.is_reference) expect_equivalent(model, target, recipe, device);
}

}  // namespace fb::testing
