/// `compare BASE CUR`: verdicts on synthetic timings with known truth, regression rules, exit codes.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

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
  if (!samples.empty()) c.stats = summarize_samples(std::move(samples));
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

TEST_F(compare_files, only_the_implementations_under_test_gate_unless_all_impls) {
  // libtorch's ref got 15% slower (a machine or libtorch change), the fused code did not move.
  const auto base = run_of({timed_case("ref", timings(1e-3, 0.01, 1)), timed_case("fused_cuda", timings(1e-3, 0.01, 2))});
  const auto cur = run_of({timed_case("ref", timings(1.15e-3, 0.01, 3)), timed_case("fused_cuda", timings(1e-3, 0.01, 4))});
  testing::internal::CaptureStdout();
  EXPECT_EQ(run(base, cur), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("| slower (reference: information, --all-impls gates it) |"), std::string::npos) << out;
  cli::compare_options all;
  all.all_impls = true;
  testing::internal::CaptureStdout();
  EXPECT_EQ(run(base, cur, all), 1);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("REGRESSION: 1 slower"), std::string::npos);
}

TEST_F(compare_files, a_peer_is_information_even_under_all_impls) {
  // Issue 38: torch's eager got 30% slower and its TF32 compile now misses the tolerance; neither is
  // the code's failure, with or without --all-impls.
  const auto base = run_of({timed_case("peer:eager", timings(1e-3, 0.01, 1)),
                            timed_case("peer:compile_tf32", timings(1e-3, 0.01, 2)),
                            timed_case("fused_cuda", timings(1e-3, 0.01, 3))});
  const auto cur = run_of({timed_case("peer:eager", timings(1.3e-3, 0.01, 4)),
                           timed_case("peer:compile_tf32", timings(1e-3, 0.01, 5), outcome::incorrect),
                           timed_case("fused_cuda", timings(1e-3, 0.01, 6))});
  cli::compare_options all;
  all.all_impls = true;
  for (const cli::compare_options& o : {cli::compare_options{}, all}) {
    testing::internal::CaptureStdout();
    EXPECT_EQ(run(base, cur, o), 0);
    const std::string out = testing::internal::GetCapturedStdout();
    EXPECT_NE(out.find("| slower (peer: information, never gated) |"), std::string::npos) << out;
    EXPECT_NE(out.find("(peer: information, never gated)"), std::string::npos) << out;
  }
  const report::comparison c = report::compare_results(base, cur, {});
  for (const report::case_comparison& cc : c.cases)
    if (is_peer_implementation(cc.implementation)) {
      EXPECT_FALSE(cc.gated) << cc.implementation;
      EXPECT_FALSE(cc.failing) << cc.implementation;
    }
}

TEST_F(compare_files, the_headline_counts_only_what_can_fail_the_comparison) {
  // Issue 40: the fused case is unchanged; the reference got slower and lost a config, a peer got
  // slower. None of those can fail the comparison, so none is in the headline or a gap line; they
  // are counted on the information line.
  const auto t = [](double median, std::uint64_t seed) { return timings(median, 0.01, seed); };
  const auto base = run_of({timed_case("ref", t(1e-3, 1)), timed_case("ref", t(1e-3, 2), outcome::passed, "batch x2"),
                            timed_case("peer:eager", t(1e-3, 3)), timed_case("fused_cuda", t(1e-3, 4))});
  const auto cur = run_of({timed_case("ref", t(1.3e-3, 5)), timed_case("peer:eager", t(1.3e-3, 6)),
                           timed_case("fused_cuda", t(1e-3, 7))});
  testing::internal::CaptureStdout();
  EXPECT_EQ(run(base, cur), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("no regression: 0 faster, 1 same, 0 undecided, 0 fixed, 0 failing, 0 missing, 0 new of 1 case "
                     "under test (alpha 0.01, min effect 5%)\n"
                     "information, never failing the comparison (references without --all-impls, peers): 2 slower, 0 "
                     "faster, 0 same, 0 undecided, 0 fixed, 0 failing, 1 missing, 0 new of 3 cases\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("missing from CUR"), std::string::npos) << out;  // no gap line: nothing gated is missing
  // --all-impls gates the references: the same changes are then a regression in the headline.
  cli::compare_options all;
  all.all_impls = true;
  testing::internal::CaptureStdout();
  EXPECT_EQ(run(base, cur, all), 1);
  const std::string gated = testing::internal::GetCapturedStdout();
  EXPECT_NE(gated.find("REGRESSION: 1 slower, 0 newly failing; 0 faster, 1 same, 0 undecided, 0 fixed, 0 failing, 1 "
                       "missing, 0 new of 3 cases under test"),
            std::string::npos)
      << gated;
  EXPECT_NE(gated.find("information, never failing the comparison (peers): 1 slower"), std::string::npos) << gated;
  EXPECT_NE(gated.find("1 case of BASE"), std::string::npos) << gated;
}

TEST(compare, an_implementation_the_run_cannot_have_is_not_a_failure) {
  // ref_tf32 on a CPU run: not_supported on both sides, and in a CUR only.
  const auto c = only_case(run_of({timed_case("ref_tf32", {}, outcome::not_supported)}),
                           run_of({timed_case("ref_tf32", {}, outcome::not_supported)}), {});
  EXPECT_EQ(c.result, report::verdict::same);
  EXPECT_FALSE(c.failing);
  report::compare_settings all;
  all.all_impls = true;
  const auto gated = only_case(run_of({}), run_of({timed_case("fused_host", {}, outcome::not_supported)}), all);
  EXPECT_EQ(gated.result, report::verdict::added);
  EXPECT_FALSE(gated.failing);
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
  // A reference alone: nothing under test, so nothing was judged, which is not a pass.
  EXPECT_EQ(run(run_of({timed_case("ref", timings(1e-3, 0.01, 1))}), run_of({timed_case("ref", timings(1e-3, 0.01, 2))}), o), 1);
  (void)testing::internal::GetCapturedStdout();
  std::ifstream in(o.out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("| convt2d_mul_gap/default/ref |"), std::string::npos);
  // Its "same" is counted as information (issue 40), and the headline says nothing could be seen.
  EXPECT_NE(text.str().find("NOTHING UNDER TEST: neither file holds a case that can fail the comparison"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("0 faster, 0 same, 0 undecided, 0 fixed, 0 failing, 0 missing, 0 new of 0 "
                            "cases under test"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("peers): 0 slower, 0 faster, 1 same"), std::string::npos) << text.str();
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

/// The committed H200 baseline against damaged copies of itself: what an empty, truncated, thinly
/// sampled or interrupted CUR must do to the gate.
class compare_baseline : public compare_files {
 protected:
  struct result {
    int code = 0;
    std::string out;
    std::string err;
  };
  /// Runs `compare BASELINE cur` where cur is `doc` written as JSON.
  result run_against(const nlohmann::json& doc, cli::compare_options o = {}) {
    o.base = baseline;
    o.cur = m_dir / "cur.json";
    std::ofstream(o.cur, std::ios::binary | std::ios::trunc) << doc.dump();
    return run_options(o);
  }
  result run_against(const results_file& cur, cli::compare_options o = {}) {
    return run_against(results_to_json(cur), std::move(o));
  }
  static result run_options(const cli::compare_options& o) {
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    result r;
    r.code = cli::run_compare(o);
    r.out = testing::internal::GetCapturedStdout();
    r.err = testing::internal::GetCapturedStderr();
    return r;
  }
  nlohmann::json baseline_json() const {
    std::ifstream in(baseline);
    return nlohmann::json::parse(in);
  }
  // The H200 baseline of 62520d2 (a standard sweep of the time: 11 fused cases, #42's and #44's), frozen
  // as a fixture so that refreshing reports/baselines/ changes no test.
  const fs::path baseline = fs::path(FUSEBENCH_FIXTURE_DIR) / "baseline-nvidia-h200-62520d2.json";
};

TEST_F(compare_baseline, the_baseline_against_itself_passes) {
  const result r = run_against(baseline_json());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // The headline counts what can fail (its 11 fused cases); the references are information apart.
  EXPECT_NE(r.out.find("no regression: 0 faster, 11 same, 0 undecided, 0 fixed, 0 failing, 0 missing, 0 new of 11 "
                       "cases under test"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\ninformation, never failing the comparison (references without --all-impls, peers): 0 slower, "
                       "0 faster, 52 same"),
            std::string::npos)
      << r.out;
}

TEST_F(compare_baseline, a_cur_without_cases_fails_naming_what_is_missing) {
  nlohmann::json doc = baseline_json();
  doc["cases"] = nlohmann::json::array();
  const result r = run_against(doc);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL: no slower case found, but CUR"), std::string::npos) << r.out;
  // Named: the 11 fused cases, whose absence fails the comparison; the 52 references' are counted as information.
  EXPECT_NE(r.out.find("11 cases of BASE (" + baseline.string() + ") missing from CUR"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("convt2d_gap_bias_lse/default/fused_cuda, convt2d_gap_bias_lse/batch x0.125/fused_cuda"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("and 6 more (a failure; --allow-missing accepts them)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 failing, 52 missing, 0 new of 52 cases"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("/ref,"), std::string::npos) << r.out;

  cli::compare_options allow;
  allow.allow_missing = true;
  const result allowed = run_against(doc, allow);
  EXPECT_EQ(allowed.code, 0) << allowed.out;
  EXPECT_NE(allowed.out.find("(accepted by --allow-missing)"), std::string::npos) << allowed.out;
}

TEST_F(compare_baseline, a_cur_truncated_to_half_fails) {
  nlohmann::json doc = baseline_json();
  nlohmann::json first_gone;  // the first fused case cut off: the gap line names the cases that can fail
  for (std::size_t i = 31; i < doc["cases"].size() && first_gone.is_null(); ++i)
    if (doc["cases"][i]["implementation"] == "fused_cuda") first_gone = doc["cases"][i];
  ASSERT_FALSE(first_gone.is_null());
  doc["cases"].erase(doc["cases"].begin() + 31, doc["cases"].end());
  const result r = run_against(doc);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const std::string name = fmt::format("{}/{}/{}", first_gone["model"].get<std::string>(),
                                       first_gone["config_label"].get<std::string>(),
                                       first_gone["implementation"].get<std::string>());
  EXPECT_NE(r.out.find("8 cases of BASE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("missing from CUR (" + (m_dir / "cur.json").string() + "): " + name), std::string::npos) << r.out;

  // Half of the file's text (a run killed while a careless writer wrote it): not JSON at all.
  const std::string text = doc.dump();
  cli::compare_options o;
  o.base = baseline;
  o.cur = m_dir / "torn.json";
  std::ofstream(o.cur, std::ios::binary) << text.substr(0, text.size() / 2);
  const result torn = run_options(o);
  EXPECT_EQ(torn.code, 2);
  EXPECT_NE(torn.err.find("is not valid JSON"), std::string::npos) << torn.err;
}

TEST_F(compare_baseline, a_case_with_emptied_samples_is_an_invalid_file) {
  nlohmann::json doc = baseline_json();
  doc["cases"][3]["stats"]["samples"] = nlohmann::json::array();
  const result r = run_against(doc);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.err.rfind("fusebench: error: results file '" + (m_dir / "cur.json").string() + "': field "
                        "cases[3].stats.samples is empty",
                        0),
            0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_EQ(r.out, "");
}

TEST_F(compare_baseline, a_3x_slowdown_measured_twice_is_undecided_and_fails) {
  results_file cur = load_results(baseline);
  case_result* fused = nullptr;
  for (case_result& c : cur.cases)
    if (c.model == "convt2d_mul_gap" && c.config_label == "default" && c.implementation == "fused_cuda") fused = &c;
  ASSERT_NE(fused, nullptr);
  const double slow = 3.0 * fused->stats->median;
  fused->stats = summarize_samples({slow, 1.01 * slow});
  const result r = run_against(cur);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("| **undecided** (n = 10 vs 2: a rank test cannot reach p < 0.01"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 case undecided: convt2d_mul_gap/default/fused_cuda (n = 10 vs 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(needs 6 per side)"), std::string::npos) << r.out;

  cli::compare_options allow;
  allow.allow_undecided = true;
  EXPECT_EQ(run_against(cur, allow).code, 0);
  // With both sides at 2 samples it is undecided too, even at alpha 0.1.
  results_file base2 = cur;
  for (case_result& c : base2.cases)
    if (&c - base2.cases.data() == fused - cur.cases.data()) c.stats = summarize_samples({slow / 3, slow / 3 * 1.01});
  save_results(base2, m_dir / "base2.json");
  cli::compare_options o;
  o.base = m_dir / "base2.json";
  o.cur = m_dir / "cur.json";
  o.alpha = 0.1;
  const result both = run_options(o);
  EXPECT_EQ(both.code, 1) << both.out;
  EXPECT_NE(both.out.find("(n = 2 vs 2: a rank test cannot reach p < 0.1"), std::string::npos) << both.out;
}

TEST_F(compare_baseline, an_incomplete_run_is_refused_unless_allowed) {
  results_file cur = load_results(baseline);
  cur.cases.resize(3);
  cur.status.complete = false;
  cur.status.incomplete_reason = "interrupted by SIGINT after 3 of 63 cases";
  cur.status.planned_cases = 63;
  const result r = run_against(cur);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.err, "fusebench: error: CUR (" + (m_dir / "cur.json").string() +
                       ") is an incomplete run (interrupted by SIGINT after 3 of 63 cases): pass --allow-incomplete "
                       "to compare its finished cases anyway\n");
  cli::compare_options o;
  o.allow_incomplete = true;
  EXPECT_EQ(run_against(cur, o).code, 1);  // allowed, but its 60 unfinished cases are still missing
  o.allow_missing = true;
  EXPECT_EQ(run_against(cur, o).code, 0);
}

TEST(compare, an_incomplete_base_is_refused_too) {
  results_file base = run_of({timed_case("ref", timings(1e-3, 0.01, 1))});
  base.status.complete = false;
  const results_file cur = run_of({timed_case("ref", timings(1e-3, 0.01, 2))});
  EXPECT_THROW((void)report::compare_results(base, cur), report::compare_error);
  report::compare_settings allow;
  allow.allow_incomplete = true;
  EXPECT_FALSE(report::compare_results(base, cur, allow).has_failure());
}

TEST(compare, timed_on_one_side_only_is_undecided) {
  case_result untimed = timed_case("fused_cuda", timings(1e-3, 0.01, 2));
  untimed.stats.reset();
  const auto c = only_case(run_of({timed_case("fused_cuda", timings(1e-3, 0.01, 1))}), run_of({untimed}));
  EXPECT_EQ(c.result, report::verdict::undecided);
  EXPECT_TRUE(c.failing);
  EXPECT_EQ(c.note, "not timed in CUR");
}

}  // namespace
