#pragma once
/// The properties every registered model must have (README "The equivalence contract"), written once in
/// model_properties.cpp and instantiated for every model of the registry: a new model gets them with no
/// test file of its own. A model's own checks (its invalid configs) go into property_tests/models/<id>_test.cpp.
/// Failures print a repro command; RapidCheck shrinks the config first.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "harness/device/device.h"
#include "harness/model/generators.h"
#include "harness/model/registry.h"
#include "harness/verify/verify_plan.h"

namespace fb::gen {
/// RapidCheck prints counterexamples through this (found by ADL).
void showValue(const case_recipe& r, std::ostream& os);
}  // namespace fb::gen

namespace fb::testing {

/// The libtorch reference, run in fp64, matches the fp64 loop oracle (an independent implementation
/// written from the definitions) on oracle-sized fuzz cases, on `device`.
void reference_matches_oracle(const model_entry& model, device_kind device);
/// Shape inference equals the shape the reference produces.
void output_shape_is_inferred(const model_entry& model);
/// Setting any size field to a non-positive value is rejected with a config_error naming it.
void non_positive_sizes_are_rejected(const model_entry& model);
/// Every fused implementation registered for `device` passes the contract against the reference under
/// the verdict rules; asserts that it checked every one of them (so the property cannot pass by checking
/// nothing). Returns the number of fused implementations checked.
int fused_matches_reference(const model_entry& model, device_kind device);
/// An invalid config as a JSON patch on the default config, and the field its error must name.
struct invalid_row {
  const char* patch;
  const char* field;
};
/// Every row's config is rejected with a config_error naming the row's field.
void expect_rejected(const model_entry& model, std::initializer_list<invalid_row> rows);
/// The first required key, removed from the default config, is named in the error; the default
/// config itself is valid and canonical.
void expect_required_keys_and_valid_default(const model_entry& model);
/// Number of fused implementations of `model` on `device`.
[[nodiscard]] int fused_count(const model_entry& model, device_kind device);
/// The reason a CUDA test is skipped, or empty when CUDA is usable.
[[nodiscard]] std::string cuda_skip_reason();

}  // namespace fb::testing
