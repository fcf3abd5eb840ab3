/// The generators themselves: over a verify run's worth of cases, every model's configs vary in the
/// geometry, and the BatchNorm models draw both modes (a generator that silently stuck to one value
/// would leave a whole branch of the kernels and the reference unfuzzed).
#include <gtest/gtest.h>

#include <set>
#include <string>

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
