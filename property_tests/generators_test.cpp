/// The generators themselves: over a verify run's worth of cases, every model's configs vary in the
/// geometry, and the BatchNorm models draw both modes (a generator that silently stuck to one value
/// would leave a whole branch of the kernels and the reference unfuzzed).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "harness/fuzz_domain.h"
#include "harness/generators.h"
#include "harness/registry.h"

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

// The README's fuzz-domain table is the declared domains, row for row (README.md, "The fuzz domain").
TEST(Generators, ReadmeDomainTableIsTheDeclaredDomains) {
  std::ifstream f(FUSEBENCH_SOURCE_DIR "/README.md");
  ASSERT_TRUE(f) << "README.md";
  const std::string readme((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (const fb::model_entry& model : fb::all_models()) {
    const std::string row = fb::domain::table_row(model.id, model.kernelbench_id, model.fuzz_domain);
    EXPECT_NE(readme.find(row + "\n"), std::string::npos) << "README.md lacks this row (or has another):\n" << row;
  }
}

}  // namespace
