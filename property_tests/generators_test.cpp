/// The generators themselves: over a verify run's worth of cases, every model's configs vary in the
/// geometry, and the BatchNorm models draw both modes (a generator that silently stuck to one value
/// would leave a whole branch of the kernels and the reference unfuzzed).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <set>
#include <string>

#include "harness/model/fuzz_domain.h"
#include "harness/model/generators.h"
#include "harness/model/inputs.h"
#include "harness/model/registry.h"
#include "property_tests/readme_domain_table.h"

namespace {

TEST(Generators, ConfigsVaryAndBatchNormModelsDrawBothModes) {
  for (const fb::model_entry& model : fb::all_models()) {
    std::set<std::string> batch, in_channels, kernel, training;
    for (int i = 0; i < 64; ++i) {
      const fb::json c = fb::gen::sample_case(model, fb::fuzz_budget::cpu(), 20261122, i).config;
      batch.insert(c.at("batch_size").dump());
      in_channels.insert(c.at("in_channels").dump());
      kernel.insert(c.at("kernel_size").dump());
      if (c.contains("training")) training.insert(c.at("training").dump());
    }
    EXPECT_GT(batch.size(), 1u) << model.id;
    EXPECT_GT(in_channels.size(), 3u) << model.id;
    EXPECT_GT(kernel.size(), 2u) << model.id;
    if (model.default_config.contains("training")) EXPECT_EQ(training.size(), 2u) << model.id << ": training";
  }
}

}  // namespace

namespace {

TEST(Generators, BoundaryConfigsCrossTheKernelsWorkSplits) {
  // #44 splits planes into work items of 32768 elements, #42 into chunks of 4096: a run of verify's
  // size must contain planes larger than one of them, on the CPU's budget as on the GPU's.
  const std::vector<std::pair<std::string, int64_t>> splits = {{"convt2d_mul_gap", 32768}, {"convt2d_gap_bias_lse", 4096}};
  for (const auto& [id, split] : splits) {
    const fb::model_entry& model = fb::find_model(id);
    ASSERT_TRUE(static_cast<bool>(model.gen_boundary_config)) << id;
    for (const fb::fuzz_budget& budget : {fb::fuzz_budget::cpu(), fb::fuzz_budget::cuda()}) {
      int crossing = 0;
      for (int i = 0; i < 100; ++i) {
        const fb::json c = fb::gen::sample_case(model, budget, 20261123, i).config;
        crossing += c.at("height").get<int64_t>() * c.at("width").get<int64_t>() > split;
        EXPECT_NO_THROW((void)model.canonicalize(c)) << c.dump();
        EXPECT_LE(model.problem_size(model.parse(c)), static_cast<double>(budget.max_output_elements)) << c.dump();
      }
      EXPECT_GE(crossing, 10) << id << ": planes larger than one work split in 100 cases";
    }
  }
}

}  // namespace

namespace {

// The verify fuzz reaches every config PyTorch accepts: padding above the kernel size (crops at both
// borders) and every output_padding below the stride, on the CPU's budget as on the GPU's, and every
// config it draws is valid.
TEST(Generators, VerifyFuzzDrawsPaddingAboveTheKernelSizeAndEveryOutputPadding) {
  for (const fb::model_entry& model : fb::all_models()) {
    if (!model.fuzz_domain.strided) continue;
    for (const fb::fuzz_budget& budget : {fb::fuzz_budget::cpu(), fb::fuzz_budget::cuda()}) {
      int above_kernel = 0, output_padding_at_most = 0;
      for (int i = 0; i < 200; ++i) {
        const fb::json c = fb::gen::sample_case(model, budget, 20261126, i).config;
        EXPECT_NO_THROW((void)model.parse(c)) << model.id << ": " << c.dump();
        above_kernel += c.at("padding").get<int64_t>() > c.at("kernel_size").get<int64_t>();
        if (c.contains("output_padding"))
          output_padding_at_most += c.at("output_padding").get<int64_t>() == c.at("stride").get<int64_t>() - 1 &&
                                    c.at("stride").get<int64_t>() > 1;
      }
      EXPECT_GE(above_kernel, 10) << model.id << ": configs with padding > kernel_size in 200 verify cases";
      if (model.fuzz_domain.output_padding)
        EXPECT_GE(output_padding_at_most, 10) << model.id << ": configs with output_padding = stride - 1";
    }
  }
}

// The README's fuzz-domain table is the registry's declared domains, row for row, in registry order,
// and nothing else (README.md, "The fuzz domain"): a model added to the registry, removed from it or
// with another domain fails here, with the rows to paste.
TEST(Generators, ReadmeDomainTableIsTheDeclaredDomains) {
  const std::optional<std::string> rows = fb::readme::domain_table_rows(FUSEBENCH_SOURCE_DIR "/README.md");
  ASSERT_TRUE(rows) << "README.md has no fuzz-domain table headed\n" << fb::readme::domain_table_header;
  const std::string declared = fb::readme::declared_domain_table_rows(fb::all_models());
  EXPECT_EQ(*rows, declared) << "README.md's fuzz-domain table differs from the registry's; its rows should read:\n"
                             << declared;
}

}  // namespace

namespace {

// The split-scheme attacks (issue 36): a model that declares them draws every one of them within a
// run of 4 x (distributions) consecutive cases; a model that does not draws none of them.
TEST(Generators, SplitSchemeAttacksAreDrawnWhereDeclaredOnly) {
  bool some_model_declares = false;
  for (const fb::model_entry& model : fb::all_models()) {
    const bool attacks = model.fuzz_domain.split_scheme_attacks;
    some_model_declares |= attacks;
    std::set<fb::input_distribution> inputs;
    std::set<fb::ref::param_init> params;
    for (int i = 0; i < 28; ++i) {
      const fb::gen::case_recipe r = fb::gen::sample_case(model, fb::fuzz_budget::cpu(), 20261128, i);
      inputs.insert(r.inputs);
      params.insert(r.params);
    }
    EXPECT_EQ(inputs.count(fb::input_distribution::wide), attacks ? 1u : 0u) << model.id;
    EXPECT_EQ(inputs.count(fb::input_distribution::near_constant), attacks ? 1u : 0u) << model.id;
    EXPECT_EQ(params.count(fb::ref::param_init::outlier_weights), attacks ? 1u : 0u) << model.id;
    EXPECT_EQ(params.count(fb::ref::param_init::pytorch_default), 1u) << model.id;
    EXPECT_EQ(params.count(fb::ref::param_init::randomized), 1u) << model.id;
  }
  EXPECT_TRUE(some_model_declares) << "#34 declares the split-scheme attacks";
}

// `wide` spans 60 binades (every patch holds values 2^60 apart) below 2^12, `near_constant` stays within
// a few 1e-3 of 1, and the names round-trip.
TEST(Generators, AttackInputsHaveTheirDeclaredRange) {
  const at::Tensor wide = fb::make_input({4, 16, 16, 16}, fb::input_distribution::wide, 7);
  const at::Tensor mag = wide.abs();
  const at::Tensor nonzero = mag.gt(0);
  const double largest = mag.max().item<double>();
  const double smallest = mag.masked_select(nonzero).min().item<double>();
  EXPECT_GT(std::log2(largest / smallest), 56.0) << largest << " / " << smallest;
  EXPECT_GT(largest, std::ldexp(1.0, 7));
  EXPECT_LT(largest, std::ldexp(1.0, 12));  // libtorch's fp64 LayerNorm stays within the oracle's 1e-9
  EXPECT_LT(smallest, std::ldexp(1.0, -48));
  const at::Tensor flat = fb::make_input({4, 16, 16, 16}, fb::input_distribution::near_constant, 7);
  EXPECT_LT((flat - 1.0).abs().max().item<double>(), 1e-2);
  EXPECT_GT((flat - 1.0).abs().max().item<double>(), 1e-3);
  for (fb::input_distribution d : fb::all_input_distributions)
    EXPECT_EQ(fb::input_distribution_from_string(fb::to_string(d)), d);
  EXPECT_EQ(fb::param_init_from_string("outliers"), fb::ref::param_init::outlier_weights);
}

// The outlier regime: a few conv weights 2^10 times those the randomised regime draws from the same
// seed, every other weight unchanged.
TEST(Generators, OutlierWeightsAreFewAndHuge) {
  for (const fb::model_entry& model : fb::all_models()) {
    if (!model.fuzz_domain.split_scheme_attacks) continue;
    const fb::parsed_config config = model.parse(model.default_config);
    const auto random = model.make_parameters(config, fb::ref::param_init::randomized, 11);
    const auto outliers = model.make_parameters(config, fb::ref::param_init::outlier_weights, 11);
    const at::Tensor w = random.at("conv_transpose.weight"), o = outliers.at("conv_transpose.weight");
    const at::Tensor changed = o.ne(w);
    const int64_t n_changed = changed.sum().item<int64_t>();
    EXPECT_GE(n_changed, 1) << model.id;
    EXPECT_LT(n_changed, w.numel() / 100) << model.id;
    EXPECT_TRUE(at::equal(o.masked_select(changed), w.masked_select(changed) * 1024.0)) << model.id;
  }
}

}  // namespace
