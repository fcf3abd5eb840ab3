/// `compare BASE CUR`: verdicts on synthetic timings with known truth, regression rules, exit codes.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

#include "harness/cli/reporting_commands.h"
#include "harness/report/compare.h"
#include "harness/results/results.h"

namespace {

using namespace fb;
namespace fs = std::filesystem;

/// n timings around `median` [seconds] with a relative spread `spread` (lognormal, as GPU timings).
std::vector<double> timings(double median, double spread, std::uint64_t seed, int n = 30) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, spread);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(median * std::exp(normal(rng)));
  return v;
}

case_result timed_case(const std::string& impl, std::vector<double> samples, outcome o = outcome::passed,
                       const std::string& label = "default") {
  case_result c;
  c.model = "convt2d_mul_gap";
  c.kernelbench_id = 44;
  c.config = nlohmann::json::object();
  c.config_label = label;
  c.problem_size = 1e6;
  c.implementation = impl;
  c.outcome = o;
  if (o != outcome::passed) c.message = "values differ";
  c.stats = summarize_samples(std::move(samples));
  return c;
}

results_file run_of(std::vector<case_result> cases, const std::string& gpu = "NVIDIA H200") {
  results_file r;
  r.environment.device = "cuda";
  r.environment.gpu_name = gpu;
  r.cases = std::move(cases);
  return r;
}

report::case_comparison only_case(const results_file& base, const results_file& cur, report::compare_settings s = {}) {
  const report::comparison c = report::compare_results(base, cur, s);
  EXPECT_EQ(c.cases.size(), 1u);
  return c.cases.at(0);
}

/// Writes two runs to files and runs the subcommand the way main() would.
class compare_files : public testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("fusebench_compare_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
             std::to_string(::getpid()));
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }
  int run(const results_file& base, const results_file& cur, cli::compare_options o = {}) {
    o.base = m_dir / "base.json";
    o.cur = m_dir / "cur.json";
    save_results(base, o.base);
    save_results(cur, o.cur);
    return cli::run_compare(o);
  }
  fs::path m_dir;
};

TEST(compare, a_clear_regression_is_slower) {
  const auto c = only_case(run_of({timed_case("fused_cuda", timings(1e-3, 0.01, 1))}),
                           run_of({timed_case("fused_cuda", timings(1.10e-3, 0.01, 2))}));
  EXPECT_EQ(c.result, report::verdict::slower);
  EXPECT_TRUE(c.regression);
  ASSERT_TRUE(c.p_value && c.ratio);
  EXPECT_LT(*c.p_value, 1e-6);
  EXPECT_NEAR(*c.ratio, 1.10, 0.02);
}

TEST(compare, pure_noise_is_same) {
  // Same distribution, different seeds: whatever the rank test says, the median never moves 5%.
  int significant = 0;
  for (std::uint64_t seed = 0; seed < 40; seed += 2) {
    const auto c = only_case(run_of({timed_case("fused_cuda", timings(1e-3, 0.02, seed))}),
                             run_of({timed_case("fused_cuda", timings(1e-3, 0.02, seed + 1))}));
    EXPECT_EQ(c.result, report::verdict::same) << "seed " << seed;
    EXPECT_FALSE(c.regression);
    significant += *c.p_value < 0.01;
  }
  EXPECT_LE(significant, 2);  // about 1% of pairs at alpha 0.01
}

TEST(compare, a_significant_change_below_min_effect_is_same_unless_the_threshold_is_lowered) {
  const results_file base = run_of({timed_case("fused_cuda", timings(1e-3, 0.01, 11, 200))});
  const results_file cur = run_of({timed_case("fused_cuda", timings(1.03e-3, 0.01, 12, 200))});
  const auto c = only_case(base, cur);
  EXPECT_LT(*c.p_value, 1e-6);  // real, but only 3%
  EXPECT_EQ(c.result, report::verdict::same);
  report::compare_settings strict;
  strict.min_effect = 0.01;
  EXPECT_EQ(only_case(base, cur, strict).result, report::verdict::slower);
}

TEST(compare, an_improvement_is_faster) {
  const auto c = only_case(run_of({timed_case("fused_cuda", timings(1e-3, 0.01, 3))}),
                           run_of({timed_case("fused_cuda", timings(0.8e-3, 0.01, 4))}));
  EXPECT_EQ(c.result, report::verdict::faster);
  EXPECT_FALSE(c.regression);
}

TEST(compare, a_large_but_noisy_change_is_same) {
  // 10 vs 10 samples spread 50%: a 10% shift of the median is not distinguishable from noise.
  const auto c = only_case(run_of({timed_case("fused_cuda", timings(1e-3, 0.5, 5, 10))}),
                           run_of({timed_case("fused_cuda", timings(1.1e-3, 0.5, 6, 10))}));
  EXPECT_GE(*c.p_value, 0.01);
  EXPECT_EQ(c.result, report::verdict::same);
}

TEST(compare, failing_missing_new_and_fixed_cases) {
  const auto t = [](std::uint64_t seed) { return timings(1e-3, 0.01, seed); };
  const results_file base = run_of({timed_case("ref", t(1)), timed_case("fused_cuda", t(2)),
                                    timed_case("fused_host", t(3), outcome::failed),
                                    timed_case("fused_cuda", t(4), outcome::passed, "batch x2"),
                                    timed_case("fused_cuda", t(5), outcome::incorrect, "batch x0.5")});
  const results_file cur = run_of({timed_case("ref", t(6)), timed_case("fused_cuda", t(7), outcome::incorrect),
                                   timed_case("fused_host", t(8), outcome::failed),
                                   timed_case("fused_cuda", t(9), outcome::passed, "batch x0.5"),
                                   timed_case("ref", t(10), outcome::passed, "batch x4")});
  const report::comparison c = report::compare_results(base, cur);
  ASSERT_EQ(c.cases.size(), 6u);
  EXPECT_EQ(c.cases[0].result, report::verdict::same);     // ref/default
  EXPECT_EQ(c.cases[1].result, report::verdict::fail);     // passed -> incorrect
  EXPECT_TRUE(c.cases[1].regression);
  EXPECT_FALSE(c.cases[1].cur_median.has_value());         // a failing case's time is never compared
  EXPECT_EQ(c.cases[2].result, report::verdict::fail);     // failed -> failed: known, not new
  EXPECT_FALSE(c.cases[2].regression);
  EXPECT_EQ(c.cases[3].result, report::verdict::missing);  // batch x2 gone
  EXPECT_EQ(c.cases[4].result, report::verdict::fixed);    // batch x0.5 incorrect -> passed
  EXPECT_EQ(c.cases[5].result, report::verdict::added);    // batch x4 new
  EXPECT_EQ(report::to_string(c.cases[5].result), "new");
  EXPECT_TRUE(c.has_regression());
  EXPECT_EQ(report::comparison_summary(c).rfind("REGRESSION: 0 slower, 1 newly failing;", 0), 0u)
      << report::comparison_summary(c);
}

TEST(compare, markdown_table_lists_every_case) {
  // 30 samples symmetric around 1 ms, and the same scaled by 1.2: medians exactly 1 ms and 1.2 ms.
  std::vector<double> base_samples;
  std::vector<double> cur_samples;
  for (int k = 0; k < 30; ++k) {
    base_samples.push_back(1e-3 + (k - 14.5) * 1e-6);
    cur_samples.push_back(1.2 * base_samples.back());
  }
  const report::comparison c = report::compare_results(run_of({timed_case("fused_cuda", base_samples)}),
                                                       run_of({timed_case("fused_cuda", cur_samples)}));
  std::ostringstream out;
  report::print_comparison_markdown(out, c);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("| case | base median | cur median | ratio | p-value | verdict |\n|---|--:|--:|--:|--:|---|\n", 0), 0u);
  EXPECT_NE(text.find("| convt2d_mul_gap/default/fused_cuda | 1.00 ms | 1.20 ms | 1.200 | 3e-11 | **slower** |\n"), std::string::npos) << text;
  EXPECT_NE(text.find("| **slower** |"), std::string::npos) << text;
}

TEST(compare, different_gpus_are_refused_unless_allowed) {
  const results_file h100 = run_of({timed_case("fused_cuda", timings(1e-3, 0.01, 1))}, "NVIDIA H100 80GB HBM3");
  const results_file h200 = run_of({timed_case("fused_cuda", timings(1e-3, 0.01, 2))}, "NVIDIA H200");
  try {
    (void)report::compare_results(h100, h200);
    FAIL() << "no exception";
  } catch (const report::compare_error& e) {
    EXPECT_NE(std::string(e.what()).find("'NVIDIA H100 80GB HBM3'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--allow-different-gpu"), std::string::npos) << e.what();
  }
  report::compare_settings allow;
  allow.allow_different_gpu = true;
  EXPECT_EQ(report::compare_results(h100, h200, allow).cases.size(), 1u);
}

TEST_F(compare_files, exit_codes_follow_the_verdicts) {
  const auto base = run_of({timed_case("fused_cuda", timings(1e-3, 0.01, 1))});
  testing::internal::CaptureStdout();
  EXPECT_EQ(run(base, run_of({timed_case("fused_cuda", timings(1.15e-3, 0.01, 2))})), 1);  // regression
  EXPECT_EQ(run(base, run_of({timed_case("fused_cuda", timings(0.85e-3, 0.01, 3))})), 0);  // improvement
  EXPECT_EQ(run(base, run_of({timed_case("fused_cuda", timings(1e-3, 0.01, 4))})), 0);     // noise
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("REGRESSION: 1 slower"), std::string::npos) << out;
  EXPECT_NE(out.find("no regression: 1 faster"), std::string::npos) << out;
}

TEST_F(compare_files, different_gpus_exit_2_unless_allowed) {
  const auto base = run_of({timed_case("fused_cuda", timings(1e-3, 0.01, 1))}, "NVIDIA H100 80GB HBM3");
  const auto cur = run_of({timed_case("fused_cuda", timings(1e-3, 0.01, 2))}, "NVIDIA H200");
  testing::internal::CaptureStderr();
  EXPECT_EQ(run(base, cur), 2);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.rfind("fusebench: error: BASE was measured on 'NVIDIA H100 80GB HBM3' and CUR on 'NVIDIA H200'", 0), 0u) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1);  // one line
  cli::compare_options allow;
  allow.allow_different_gpu = true;
  testing::internal::CaptureStdout();
  EXPECT_EQ(run(base, cur, allow), 0);
  (void)testing::internal::GetCapturedStdout();
}

TEST_F(compare_files, out_file_gets_the_table_and_summary) {
  cli::compare_options o;
  o.out = m_dir / "compare.md";
  testing::internal::CaptureStdout();
  EXPECT_EQ(run(run_of({timed_case("ref", timings(1e-3, 0.01, 1))}), run_of({timed_case("ref", timings(1e-3, 0.01, 2))}), o), 0);
  (void)testing::internal::GetCapturedStdout();
  std::ifstream in(o.out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("| convt2d_mul_gap/default/ref |"), std::string::npos);
  EXPECT_NE(text.str().find("no regression: 0 faster, 1 same"), std::string::npos) << text.str();
}

TEST_F(compare_files, bad_files_exit_2_with_one_clear_line) {
  const auto good = run_of({timed_case("ref", timings(1e-3, 0.01, 1))});
  save_results(good, m_dir / "good.json");
  const std::string good_text = [&] {
    std::ifstream in(m_dir / "good.json");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }();
  nlohmann::json v2 = nlohmann::json::parse(good_text);
  v2["version"] = 7;
  const std::pair<std::string, std::string> bad_files[] = {
      {good_text.substr(0, good_text.size() - 40), "is not valid JSON (truncated or corrupt?) at byte"},
      {"\x01\x02garbage", "is not valid JSON"},
      {v2.dump(), "version 7 is not supported"},
  };
  for (const auto& [text, expected] : bad_files) {
    std::ofstream(m_dir / "bad.json", std::ios::binary | std::ios::trunc) << text;
    cli::compare_options o;
    o.base = m_dir / "good.json";
    o.cur = m_dir / "bad.json";
    testing::internal::CaptureStderr();
    EXPECT_EQ(cli::run_compare(o), 2);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.rfind("fusebench: error: results file '" + (m_dir / "bad.json").string() + "'", 0), 0u) << err;
    EXPECT_NE(err.find(expected), std::string::npos) << err;
  }
  cli::compare_options missing;
  missing.base = m_dir / "absent.json";
  missing.cur = m_dir / "good.json";
  testing::internal::CaptureStderr();
  EXPECT_EQ(cli::run_compare(missing), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("absent.json' does not exist"), std::string::npos);
}

}  // namespace
