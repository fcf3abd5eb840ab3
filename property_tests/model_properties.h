#pragma once
/// The properties every model must have (SPEC §2), written once and instantiated per model by
/// FB_STANDARD_MODEL_PROPERTIES in property_tests/<id>_test.cpp. Failures print a repro command;
/// RapidCheck shrinks the config first.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "harness/device.h"
#include "harness/registry.h"
#include "harness/verify_plan.h"

namespace fb::gen {
/// RapidCheck prints counterexamples through this (found by ADL).
void showValue(const case_recipe& r, std::ostream& os);
}  // namespace fb::gen

namespace fb::testing {

/// The fp32 reference passes the whole contract against the fp64 loop oracle (small shapes).
void reference_matches_oracle(const model_entry& model);
/// The fp32 reference passes against the fp64 libtorch reference over the fuzz domain of `device`:
/// this is what makes the fuzz domain valid for fused kernels.
void reference_matches_fp64(const model_entry& model, device_kind device);
/// Shape inference equals the shape the reference produces.
void output_shape_is_inferred(const model_entry& model);
/// Setting any size field to a non-positive value is rejected with a config_error naming it.
void non_positive_sizes_are_rejected(const model_entry& model);
/// Every fused implementation registered for `device` passes the contract against the fp32 reference.
void fused_matches_reference(const model_entry& model, device_kind device);
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

/// The standard property tests of one model. CUDA ones run under rc::check inside a TEST so they can
/// skip, with a message saying why, where there is no GPU.
#define FB_STANDARD_MODEL_PROPERTIES(Suite, model_id)                                                       \
  RC_GTEST_PROP(Suite, ReferenceMatchesFp64Oracle, ()) {                                                    \
    fb::testing::reference_matches_oracle(fb::find_model(model_id));                                        \
  }                                                                                                         \
  RC_GTEST_PROP(Suite, ReferenceFp32MatchesFp64OverCpuFuzzDomain, ()) {                                     \
    fb::testing::reference_matches_fp64(fb::find_model(model_id), fb::device_kind::cpu);                    \
  }                                                                                                         \
  RC_GTEST_PROP(Suite, OutputShapeIsInferred, ()) { fb::testing::output_shape_is_inferred(fb::find_model(model_id)); } \
  RC_GTEST_PROP(Suite, NonPositiveSizesAreRejected, ()) {                                                   \
    fb::testing::non_positive_sizes_are_rejected(fb::find_model(model_id));                                 \
  }                                                                                                         \
  TEST(Suite, MissingRequiredKeyIsNamedAndDefaultIsValid) {                                                \
    fb::testing::expect_required_keys_and_valid_default(fb::find_model(model_id));                          \
  }                                                                                                         \
  TEST(Suite, FusedHostExecutorsMatchReference) {                                                           \
    const fb::model_entry& m = fb::find_model(model_id);                                                    \
    if (fb::testing::fused_count(m, fb::device_kind::cpu) == 0)                                             \
      GTEST_SKIP() << model_id << " has no fused host executor registered yet";                             \
    EXPECT_TRUE(rc::check(model_id " host executors vs reference",                                          \
                          [&m] { fb::testing::fused_matches_reference(m, fb::device_kind::cpu); }));        \
  }                                                                                                         \
  TEST(Suite, Cuda_ReferenceFp32MatchesFp64) {                                                              \
    if (const std::string why = fb::testing::cuda_skip_reason(); !why.empty()) GTEST_SKIP() << why;         \
    EXPECT_TRUE(rc::check(model_id " cuda fp32 reference vs fp64", [] {                                     \
      fb::testing::reference_matches_fp64(fb::find_model(model_id), fb::device_kind::cuda);                 \
    }));                                                                                                    \
  }                                                                                                         \
  TEST(Suite, Cuda_FusedKernelsMatchReference) {                                                            \
    if (const std::string why = fb::testing::cuda_skip_reason(); !why.empty()) GTEST_SKIP() << why;         \
    const fb::model_entry& m = fb::find_model(model_id);                                                    \
    if (fb::testing::fused_count(m, fb::device_kind::cuda) == 0)                                            \
      GTEST_SKIP() << model_id << " has no fused CUDA implementation registered yet";                       \
    EXPECT_TRUE(rc::check(model_id " cuda fused vs reference",                                              \
                          [&m] { fb::testing::fused_matches_reference(m, fb::device_kind::cuda); }));       \
  }
