#include "property_tests/model_properties.h"

#include <algorithm>
#include <sstream>

namespace fb::gen {
void showValue(const case_recipe& r, std::ostream& os) {
  os << "config " << r.config.dump() << ", seed " << r.seed << ", inputs " << to_string(r.inputs) << ", params "
     << to_string(r.params);
}
}  // namespace fb::gen

namespace fb::testing {

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

void reference_matches_oracle(const model_entry& model, device_kind device) {
  const gen::case_recipe recipe = *gen::fuzz_case(model, fuzz_budget::oracle());
  const check_result r = check_reference_semantics(model, gen::make_case(model, recipe), device);
  if (r.result != outcome::passed)
    RC_FAIL(model.id + " reference (fp64) vs oracle: " + r.message + "\n    repro: " +
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

int fused_matches_reference(const model_entry& model, device_kind device) {
  const fuzz_budget budget = device == device_kind::cuda ? fuzz_budget::cuda() : fuzz_budget::cpu();
  const gen::case_recipe recipe = *gen::fuzz_case(model, budget);
  const judged_case c = prepare_case(model, recipe, device);
  int checked = 0;
  for (const verify_target& target : verify_targets(model, device)) {
    if (target.is_reference) continue;
    const check_result r = check_equivalence(model, target.candidate, c, check_options{});
    RC_TAG(std::string("rule ") + std::string(to_string(r.rule)));
    if (r.result != outcome::passed)
      RC_FAIL(model.id + " " + target.candidate.name + ": " + std::string(to_string(r.result)) + ": " + r.message +
              "\n    repro: " + gen::repro_command(model, recipe, device));
    ++checked;
  }
  RC_ASSERT(checked == fused_count(model, device));
  RC_ASSERT(checked > 0);
  return checked;
}

namespace {

/// The standard properties, one instance per registered model.
class ModelProperties : public ::testing::TestWithParam<std::string> {
 protected:
  [[nodiscard]] const model_entry& model() const { return find_model(GetParam()); }
};

TEST_P(ModelProperties, ReferenceMatchesFp64Oracle) {
  const model_entry& m = model();
  EXPECT_TRUE(rc::check(m.id + " reference (fp64) vs oracle", [&m] { reference_matches_oracle(m, device_kind::cpu); }));
}

TEST_P(ModelProperties, OutputShapeIsInferred) {
  const model_entry& m = model();
  EXPECT_TRUE(rc::check(m.id + " output shape", [&m] { output_shape_is_inferred(m); }));
}

TEST_P(ModelProperties, NonPositiveSizesAreRejected) {
  const model_entry& m = model();
  EXPECT_TRUE(rc::check(m.id + " non-positive sizes", [&m] { non_positive_sizes_are_rejected(m); }));
}

TEST_P(ModelProperties, MissingRequiredKeyIsNamedAndDefaultIsValid) { expect_required_keys_and_valid_default(model()); }

TEST_P(ModelProperties, FusedHostExecutorsMatchReference) {
  const model_entry& m = model();
  if (fused_count(m, device_kind::cpu) == 0) GTEST_SKIP() << m.id << " has no fused host executor registered yet";
  EXPECT_TRUE(rc::check(m.id + " host executors vs reference", [&m] { (void)fused_matches_reference(m, device_kind::cpu); }));
}

TEST_P(ModelProperties, Cuda_ReferenceMatchesFp64Oracle) {
  if (const std::string why = cuda_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const model_entry& m = model();
  EXPECT_TRUE(rc::check(m.id + " cuda reference (fp64) vs oracle", [&m] { reference_matches_oracle(m, device_kind::cuda); }));
}

TEST_P(ModelProperties, Cuda_FusedKernelsMatchReference) {
  if (const std::string why = cuda_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const model_entry& m = model();
  if (fused_count(m, device_kind::cuda) == 0) GTEST_SKIP() << m.id << " has no fused CUDA implementation registered yet";
  EXPECT_TRUE(rc::check(m.id + " cuda fused vs reference", [&m] { (void)fused_matches_reference(m, device_kind::cuda); }));
}

std::vector<std::string> registered_ids() {
  std::vector<std::string> ids;
  for (const model_entry& m : all_models()) ids.push_back(m.id);
  return ids;
}

INSTANTIATE_TEST_SUITE_P(Registry, ModelProperties, ::testing::ValuesIn(registered_ids()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace fb::testing
