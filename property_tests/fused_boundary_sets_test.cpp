// The fused models' boundary sets (property_tests/selftest/<id>_boundary.h) against their plans, on
// the CPU: every declared path is reached by some problem of the set (on an H100/H200's resident
// limits), or is declared unreachable with a reason; no problem reaches an undeclared path; every
// loop path ">=2" is declared with its problem; the problems are valid and small enough for
// compute-sanitizer. The GPU gate runs the same sets under the sanitizers and the stress stage.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "property_tests/selftest/boundary.h"
#include "property_tests/selftest/convt2d_gap_bias_lse_boundary.h"
#include "property_tests/selftest/convt2d_mul_gap_boundary.h"
#include "property_tests/selftest/convt3d_bn_sub_boundary.h"
#include "property_tests/selftest/convt3d_ln_gelu_scale_boundary.h"
#include "property_tests/selftest/convt3d_scale_bn_gap_boundary.h"

namespace {

using fb::boundary::all_sets;
using fb::boundary::device_limits;
using fb::boundary::model_set;

/// Inputs + outputs of one boundary problem, at most: the sanitizers run each problem three times
/// (twice, then as a graph) at ~100x the kernels' time, beside the host executor's run.
constexpr double k_max_elements = 2.5e6;

TEST(BoundarySets, EveryFusedModelDeclaresOne) {
  std::set<std::string> ids;
  for (const model_set& s : all_sets()) ids.insert(s.model);
  for (const char* id : {"convt2d_gap_bias_lse", "convt2d_mul_gap", "convt3d_bn_sub", "convt3d_ln_gelu_scale",
                         "convt3d_scale_bn_gap"})
    EXPECT_TRUE(ids.count(id)) << id << " has no boundary set";
}

TEST(BoundarySets, EveryDeclaredPathIsReachedOrDeclaredUnreachable) {
  const device_limits h100;  // 132 SMs
  for (const model_set& s : all_sets()) {
    const fb::boundary::coverage_gaps g = fb::boundary::gaps_of(s, h100);
    EXPECT_TRUE(g.unreached.empty()) << s.model << ": no boundary problem reaches " << fb::boundary::join(g.unreached, ", ");
    EXPECT_TRUE(g.undeclared.empty()) << s.model << ": problems reach undeclared paths "
                                      << fb::boundary::join(g.undeclared, ", ");
  }
}

TEST(BoundarySets, EveryModelDeclaresItsKernelsAndUnreachablePathsSayWhy) {
  for (const model_set& s : all_sets()) {
    int kernels = 0;
    std::set<std::string> names;
    for (const fb::boundary::path& p : s.paths) {
      kernels += p.name.rfind("kernel:", 0) == 0;
      EXPECT_TRUE(names.insert(p.name).second) << s.model << ": path " << p.name << " declared twice";
      EXPECT_FALSE(p.what.empty()) << s.model << ": path " << p.name << " says nothing about what it exercises";
      if (!p.unreachable.empty()) {
        EXPECT_GT(p.unreachable.size(), 20u) << s.model << ": " << p.name << " is declared unreachable without a reason";
      }
    }
    EXPECT_GE(kernels, 1) << s.model << " declares no kernel";
  }
}

TEST(BoundarySets, ProblemsAreValidAndSmallEnoughForTheSanitizers) {
  for (const model_set& s : all_sets()) {
    ASSERT_FALSE(s.problem_names.empty()) << s.model;
    for (std::size_t i = 0; i < s.problem_names.size(); ++i) {
      EXPECT_NO_THROW((void)s.reached(i, device_limits{})) << s.model << " " << s.problem_names[i];
      EXPECT_LE(s.elements(i), k_max_elements) << s.model << " " << s.problem_names[i];
      EXPECT_EQ(s.config_json(i).front(), '{') << s.model << " " << s.problem_names[i];
    }
  }
}

// A device with more SMs keeps more blocks resident: the persistent-grid paths then need more
// items, and the check says so instead of passing silently.
TEST(BoundarySets, ResidencyPathsDependOnTheDevice) {
  device_limits huge;
  huge.sms = 100000;
  bool checked = false;
  for (const model_set& s : all_sets())
    if (s.model == "convt2d_mul_gap") {
      const fb::boundary::coverage_gaps g = fb::boundary::gaps_of(s, huge);
      EXPECT_FALSE(g.unreached.empty()) << "a 100000-SM device would leave block_items>=2 unreached";
      checked = true;
    }
  EXPECT_TRUE(checked) << "convt2d_mul_gap has no boundary set";
}

}  // namespace
