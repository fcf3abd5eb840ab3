/// The equivalence check must fail on planted mistakes: each test double below is a deliberately
/// wrong implementation (the reference plus one bug), and each must be caught for the right reason.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>

#include "harness/registry.h"
#include "harness/repro_bundle.h"
#include "harness/verify_plan.h"

namespace {

using fb::check_result;
using fb::implementation;
using fb::mismatch;
using fb::model_case;
using fb::output_slots;

/// Wraps the CPU reference: `bug` runs after the reference filled the slots.
implementation planted(const fb::model_entry& model, std::function<void(const model_case&, output_slots&)> bug) {
  implementation good = fb::reference_implementation(model, fb::device_kind::cpu);
  implementation bad = good;
  bad.name = "planted";
  bad.run = [good, bug](const model_case& c, output_slots& s) {
    good.run(c, s);
    bug(c, s);
  };
  return bad;
}

check_result check(const fb::model_entry& model, const implementation& impl, uint64_t seed = 11) {
  fb::gen::case_recipe recipe;
  recipe.config = model.default_config;
  // A small valid config so the test is quick; C_in != C_out so a layout mix-up could show.
  for (const char* key : {"height", "width", "depth"})
    if (recipe.config.contains(key)) recipe.config[key] = 7;
  recipe.config["batch_size"] = 2;
  recipe.config["in_channels"] = 3;
  recipe.config["out_channels"] = 5;
  recipe.seed = seed;
  const model_case first = fb::gen::make_case(model, recipe);
  const model_case fresh = fb::gen::make_fresh_case(model, recipe);
  return fb::check_equivalence(model, impl, first, fresh, fb::reference_expectation(model, fb::device_kind::cpu));
}

const fb::model_entry& plain_model() { return fb::find_model("convt2d_mul_gap"); }
const fb::model_entry& batch_norm_model() { return fb::find_model("convt3d_scale_bn_gap"); }

TEST(EquivalenceDoubles, TheUnmodifiedReferencePasses) {
  for (const fb::model_entry* m : {&plain_model(), &batch_norm_model()}) {
    const check_result r = check(*m, fb::reference_implementation(*m, fb::device_kind::cpu));
    EXPECT_EQ(r.result, fb::outcome::passed) << m->id << ": " << r.message;
  }
}

TEST(EquivalenceDoubles, OutputOffBy2e5IsCaught) {
  const check_result r = check(plain_model(), planted(plain_model(), [](const model_case&, output_slots& s) {
    // Perturb the element with the smallest |value|, where the tolerance is closest to atol = 1e-5.
    at::Tensor flat = s.output.view(-1);
    const int64_t i = flat.abs().argmin().item<int64_t>();
    flat[i] += 2e-5;
  }));
  EXPECT_EQ(r.result, fb::outcome::incorrect);
  EXPECT_TRUE(r.has(mismatch::values)) << r.message;
  EXPECT_EQ(r.vs_expected.violations, 1);
  EXPECT_NEAR(r.vs_expected.max_abs, 2e-5, 1e-6);
}

TEST(EquivalenceDoubles, OneUnwrittenElementIsCaught) {
  const auto impl = planted(plain_model(), [](const model_case& c, output_slots& s) {
    // Redo the call into a scratch tensor and copy all but the last element: that one keeps the poison.
    at::Tensor full = plain_model().reference(c.config, c.params, c.input).output.view(-1);
    at::Tensor out = s.output.view(-1);
    at::Tensor poison = at::full({1}, static_cast<int32_t>(fb::poison_bits), at::kInt).view(at::kFloat);
    out.narrow(0, out.numel() - 1, 1).copy_(poison);
    out.narrow(0, 0, out.numel() - 1).copy_(full.narrow(0, 0, out.numel() - 1));
  });
  const check_result r = check(plain_model(), impl);
  EXPECT_TRUE(r.has(mismatch::unwritten)) << r.message;
  EXPECT_FALSE(r.has(mismatch::nonfinite)) << "an unwritten element is reported as unwritten, not as a NaN";
}

TEST(EquivalenceDoubles, NaNInOutputIsCaught) {
  const check_result r = check(plain_model(), planted(plain_model(), [](const model_case&, output_slots& s) {
    s.output.view(-1)[3] = std::nanf("");
  }));
  EXPECT_TRUE(r.has(mismatch::nonfinite)) << r.message;
  EXPECT_FALSE(r.has(mismatch::unwritten)) << "a computed NaN is not the poison pattern";
}

TEST(EquivalenceDoubles, WriteOutsideTheOutputIsCaught) {
  const check_result r = check(plain_model(), planted(plain_model(), [](const model_case&, output_slots& s) {
    // One element past the end: lands in the harness's guard zone.
    s.output.view(-1).data_ptr<float>()[s.output.numel()] = 0.0f;
  }));
  EXPECT_TRUE(r.has(mismatch::out_of_bounds)) << r.message;
}

TEST(EquivalenceDoubles, ModifiedInputIsCaught) {
  const check_result r = check(plain_model(), planted(plain_model(), [](const model_case& c, output_slots&) {
    at::Tensor x = c.input;  // shares storage with the harness's copy
    x.view(-1)[0] += 1.0f;
  }));
  EXPECT_TRUE(r.has(mismatch::input_modified)) << r.message;
}

TEST(EquivalenceDoubles, ModifiedParameterIsCaught) {
  const check_result r = check(plain_model(), planted(plain_model(), [](const model_case& c, output_slots&) {
    at::Tensor w = c.params.at("conv_transpose.weight");
    w.view(-1)[0] *= 2.0f;
  }));
  EXPECT_TRUE(r.has(mismatch::input_modified)) << r.message;
}

TEST(EquivalenceDoubles, BatchNormBuffersNotUpdatedAreCaught) {
  const fb::model_entry& m = batch_norm_model();
  const check_result r = check(m, planted(m, [](const model_case& c, output_slots& s) {
    for (auto& [name, t] : s.buffers) t.copy_(c.params.at(name));  // undo the update
  }));
  EXPECT_TRUE(r.has(mismatch::buffers)) << r.message;
  EXPECT_FALSE(r.has(mismatch::values)) << "the output itself is right";
}

TEST(EquivalenceDoubles, NondeterministicOutputIsCaught) {
  auto calls = std::make_shared<int>(0);
  const check_result r = check(plain_model(), planted(plain_model(), [calls](const model_case&, output_slots& s) {
    // One ulp on every other call: within tolerance, but not bitwise reproducible.
    if ((*calls)++ % 2 == 1) {
      float* p = s.output.data_ptr<float>();
      p[0] = std::nextafter(p[0], INFINITY);
    }
  }));
  EXPECT_TRUE(r.has(mismatch::nondeterministic)) << r.message;
  EXPECT_FALSE(r.has(mismatch::values));
}

TEST(EquivalenceDoubles, ResultCachedFromTheFirstCallIsCaught) {
  auto cache = std::make_shared<at::Tensor>();
  implementation cached = fb::reference_implementation(plain_model(), fb::device_kind::cpu);
  const auto good = cached.run;
  cached.run = [good, cache](const model_case& c, output_slots& s) {
    if (!cache->defined()) {
      good(c, s);
      *cache = s.output.clone();
    }
    s.output.copy_(*cache);
  };
  const check_result r = check(plain_model(), cached);
  EXPECT_TRUE(r.has(mismatch::stale)) << r.message;
  EXPECT_FALSE(r.has(mismatch::values)) << "the first call is right";
}

TEST(EquivalenceDoubles, AThrowingImplementationFailsOnlyItsCase) {
  implementation broken = fb::reference_implementation(plain_model(), fb::device_kind::cpu);
  broken.run = [](const model_case&, output_slots&) { throw std::runtime_error("kernel launch failed"); };
  const check_result r = check(plain_model(), broken);
  EXPECT_EQ(r.result, fb::outcome::failed);
  EXPECT_NE(r.message.find("kernel launch failed"), std::string::npos);
}

TEST(ReproBundle, RoundTripsEveryTensorUnderStateDictKeys) {
  const fb::model_entry& m = batch_norm_model();
  fb::gen::case_recipe recipe;
  recipe.config = m.default_config;
  recipe.config["depth"] = recipe.config["height"] = recipe.config["width"] = 3;
  recipe.seed = 5;
  const model_case c = fb::gen::make_case(m, recipe);
  const auto dir = std::filesystem::temp_directory_path() / "fusebench_bundle_test";
  std::filesystem::remove_all(dir);
  fb::repro_bundle b{m.id, "planted", recipe, c, c.input * 2, c.input, {}, "fusebench verify ..."};
  const std::string path = fb::save_repro_bundle(b, dir.string());
  const fb::tensor_map loaded = fb::load_bundle_tensors(path + "/tensors.pt");
  for (const auto& [name, t] : c.params) {
    ASSERT_TRUE(loaded.count(name)) << name;
    EXPECT_TRUE(loaded.at(name).equal(t)) << name;
  }
  EXPECT_TRUE(loaded.at("input").equal(c.input));
  EXPECT_TRUE(std::filesystem::exists(path + "/config.json"));
  EXPECT_TRUE(std::filesystem::exists(path + "/repro.txt"));
}

TEST(Generators, SameSeedGivesTheSameCases) {
  for (const fb::model_entry& m : fb::all_models()) {
    for (int i = 0; i < 5; ++i) {
      const auto a = fb::gen::sample_case(m, fb::fuzz_budget::cpu(), 42, i);
      const auto b = fb::gen::sample_case(m, fb::fuzz_budget::cpu(), 42, i);
      EXPECT_EQ(a.config, b.config);
      EXPECT_EQ(a.seed, b.seed);
      const model_case ca = fb::gen::make_case(m, a), cb = fb::gen::make_case(m, b);
      EXPECT_TRUE(ca.input.equal(cb.input));
    }
    EXPECT_NE(fb::gen::sample_case(m, fb::fuzz_budget::cpu(), 42, 0).seed,
              fb::gen::sample_case(m, fb::fuzz_budget::cpu(), 43, 0).seed);
  }
}

}  // namespace
