/// The bench flow on the CPU: one tiny config of convt2d_mul_gap with ref, fused_host and two
/// planted broken fused implementations. A broken implementation must be recorded as a failure and
/// never timed; the good ones must be verified, timed to the policy and given a floor.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "harness/bench/runner.h"
#include "harness/registry.h"
#include "harness/results/results.h"

namespace fb {
namespace {

json tiny_config() {
  return json{{"in_channels", 3}, {"out_channels", 4}, {"kernel_size", 3}, {"stride", 2},  {"padding", 1},
              {"output_padding", 1}, {"multiplier", 0.5}, {"batch_size", 2}, {"height", 8}, {"width", 8}};
}

/// Writes zeros: runs, writes every element, and is wrong.
implementation planted_wrong_values() {
  implementation impl;
  impl.name = "fused_planted_bug";
  impl.device = device_kind::cpu;
  impl.workspace_bytes = [](const json&) { return std::size_t{0}; };
  impl.run = [](const model_case&, output_slots& slots) { slots.output.zero_(); };
  return impl;
}

/// Throws, as a kernel with a launch error would.
implementation planted_exception() {
  implementation impl = planted_wrong_values();
  impl.name = "fused_planted_throw";
  impl.run = [](const model_case&, output_slots&) { throw std::runtime_error("planted launch failure"); };
  return impl;
}

std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / (name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

const case_result& find_case(const results_file& r, const std::string& implementation) {
  for (const case_result& c : r.cases)
    if (c.implementation == implementation) return c;
  throw std::runtime_error("no case for " + implementation);
}

TEST(bench, cpu_flow_verifies_times_and_records_failures) {
  model_entry model = find_model("convt2d_mul_gap");  // a copy we may extend
  model.fused.push_back(planted_wrong_values());
  model.fused.push_back(planted_exception());
  const std::vector<bench::bench_point> points{{&model, "tiny", model.canonicalize(tiny_config())}};

  std::ostringstream log;
  bench::bench_settings settings;
  settings.device = device_kind::cpu;
  settings.out_dir = fresh_dir("bench_test");
  settings.seed = 3;
  settings.policy.min_samples = 7;
  settings.policy.time_cap = 0.2;
  settings.sweep_name = "test";
  settings.progress_out = &log;
  const bench::bench_summary summary = bench::run_bench(points, settings);

  const results_file r = load_results(settings.out_dir / "results.json");
  EXPECT_EQ(r.environment.device, "cpu");
  EXPECT_GT(r.environment.measured_bandwidth, 0.0);
  EXPECT_GT(r.environment.measured_fp32_peak, 0.0);
  EXPECT_FALSE(r.environment.git_commit.empty());
  EXPECT_FALSE(r.environment.libtorch.empty());
  EXPECT_FALSE(r.environment.date.empty());
  ASSERT_EQ(r.cases.size(), 5u) << log.str();

  for (const char* name : {"ref", "fused_host"}) {
    const case_result& c = find_case(r, name);
    EXPECT_EQ(c.outcome, outcome::passed) << name << ": " << c.message;
    ASSERT_TRUE(c.stats.has_value()) << name;
    EXPECT_GE(c.stats->n, 7) << name;
    EXPECT_EQ(static_cast<std::size_t>(c.stats->n), c.stats->samples.size()) << name;
    EXPECT_GT(c.stats->median, 0.0) << name;
    EXPECT_LE(c.stats->p10, c.stats->median) << name;
    EXPECT_LE(c.stats->median, c.stats->p90) << name;
    EXPECT_EQ(c.config_label, "tiny");
    EXPECT_GT(c.problem_size, 0.0);
  }
  const case_result& fused = find_case(r, "fused_host");
  ASSERT_TRUE(fused.floor.has_value());
  EXPECT_GT(fused.floor->floor_seconds, 0.0);
  EXPECT_FALSE(fused.floor->impossible);
  EXPECT_GT(fused.floor->percent_of_floor, 0.0);
  EXPECT_LT(fused.max_abs_error, 1e-4);
  EXPECT_FALSE(find_case(r, "ref").floor.has_value()) << "the floor is the fused algorithm's";

  const case_result& tf32 = find_case(r, "ref_tf32");
  EXPECT_EQ(tf32.outcome, outcome::not_supported);
  EXPECT_FALSE(tf32.stats.has_value());

  const case_result& wrong = find_case(r, "fused_planted_bug");
  EXPECT_EQ(wrong.outcome, outcome::incorrect);
  EXPECT_FALSE(wrong.stats.has_value()) << "a failing case must never be timed";
  EXPECT_FALSE(wrong.floor.has_value());
  EXPECT_NE(wrong.message.find("values"), std::string::npos) << wrong.message;

  const case_result& thrown = find_case(r, "fused_planted_throw");
  EXPECT_EQ(thrown.outcome, outcome::failed);
  EXPECT_FALSE(thrown.stats.has_value());
  EXPECT_NE(thrown.message.find("planted launch failure"), std::string::npos) << thrown.message;

  EXPECT_EQ(summary.failing, 2);
  EXPECT_EQ(summary.impossible, 0);
  EXPECT_EQ(summary.timed, 2);

  // The Google Benchmark export holds every sample of the timed cases and flags the failing ones.
  std::ifstream gbench(settings.out_dir / "gbench.json");
  ASSERT_TRUE(gbench.good());
  const json g = json::parse(gbench);
  int fused_iterations = 0;
  bool wrong_flagged = false;
  for (const json& b : g.at("benchmarks")) {
    const std::string name = b.at("name").get<std::string>();
    if (name == "convt2d_mul_gap/tiny/fused_host" && b.value("run_type", "") == "iteration") ++fused_iterations;
    if (name == "convt2d_mul_gap/tiny/fused_planted_bug") wrong_flagged = b.value("error_occurred", false);
  }
  EXPECT_EQ(fused_iterations, fused.stats->n);
  EXPECT_TRUE(wrong_flagged);
}

TEST(bench, a_time_below_the_floor_is_flagged_impossible) {
  const model_entry& model = find_model("convt2d_mul_gap");
  const std::vector<bench::bench_point> points{{&model, "tiny", model.canonicalize(tiny_config())}};
  std::ostringstream log;
  bench::bench_settings settings;
  settings.device = device_kind::cpu;
  settings.out_dir = fresh_dir("bench_impossible");
  settings.policy.min_samples = 3;
  settings.policy.time_cap = 0.05;
  settings.progress_out = &log;
  settings.calibration = bench::device_calibration{1e3, 1e3};  // 1 kB/s: every fused time beats this floor
  const bench::bench_summary summary = bench::run_bench(points, settings);
  EXPECT_EQ(summary.impossible, 1);
  EXPECT_EQ(summary.failing, 0);
  const results_file r = load_results(settings.out_dir / "results.json");
  const case_result& fused = find_case(r, "fused_host");
  ASSERT_TRUE(fused.floor.has_value());
  EXPECT_TRUE(fused.floor->impossible);
  EXPECT_NE(log.str().find("IMPOSSIBLE: convt2d_mul_gap/tiny/fused_host"), std::string::npos) << log.str();
}

TEST(bench, quick_sweep_on_cpu_is_small_and_valid) {
  std::vector<const model_entry*> models;
  for (const model_entry& m : all_models()) models.push_back(&m);
  const std::vector<bench::bench_point> points = bench::plan_sweep(models, "quick", true);
  ASSERT_EQ(points.size(), models.size());
  for (const bench::bench_point& p : points) {
    EXPECT_EQ(p.label, "default/cpu-small") << p.model->id;
    EXPECT_EQ(p.config.at("batch_size").get<int64_t>(), 1) << p.model->id;
    EXPECT_NO_THROW((void)p.model->canonicalize(p.config)) << p.model->id;
    EXPECT_LT(p.model->problem_size(p.config), p.model->problem_size(p.model->default_config) / 16) << p.model->id;
  }
  const std::vector<bench::bench_point> standard = bench::plan_sweep(models, "standard", false);
  EXPECT_GE(standard.size(), 5 * models.size());
  EXPECT_THROW((void)bench::plan_sweep(models, "huge", false), std::invalid_argument);
}

TEST(bench, config_file_takes_an_object_or_an_array) {
  const std::filesystem::path dir = fresh_dir("bench_config");
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const json& doc) {
    std::ofstream(dir / name) << doc.dump();
    return dir / name;
  };
  const json one{{"model", "convt2d_mul_gap"}, {"config", tiny_config()}, {"label", "tiny"}};
  const std::vector<bench::bench_point> a = bench::load_config_file(write("one.json", one));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].label, "tiny");
  EXPECT_EQ(a[0].model->id, "convt2d_mul_gap");

  json unlabelled = one;
  unlabelled.erase("label");
  const std::vector<bench::bench_point> b = bench::load_config_file(write("two.json", json::array({one, unlabelled})));
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[1].label, "custom 2");

  EXPECT_THROW((void)bench::load_config_file(write("dup.json", json::array({one, one}))), std::invalid_argument);
  EXPECT_THROW((void)bench::load_config_file(write("shape.json", json{{"config", tiny_config()}})),
               std::invalid_argument);
  json bad = one;
  bad["config"]["output_padding"] = 2;  // must be < stride
  EXPECT_THROW((void)bench::load_config_file(write("bad.json", bad)), ref::config_error);
  EXPECT_THROW((void)bench::load_config_file(dir / "missing.json"), std::invalid_argument);
}

}  // namespace
}  // namespace fb
