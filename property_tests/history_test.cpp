/// `history`: planted steps of known size are found, and only they, on seeded noise; the committed
/// H100 runs order by commit and show #15's steps; copies of a run count once, and bad or mixed
/// inputs are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include <fmt/format.h>

#include "harness/history/history_model.h"
#include "harness/history/history_writers.h"
#include "harness/results/results.h"
#include "harness/stats/change_points.h"
#include "harness/stats/mann_whitney.h"
#include "harness/stats/summary.h"

namespace {

using namespace fb;
namespace fs = std::filesystem;

/// Standard normal numbers from raw 64-bit draws (Box-Muller), so the series are the same with every
/// standard library (std::normal_distribution's output is not specified).
class seeded_normal {
 public:
  explicit seeded_normal(std::uint64_t seed) : m_bits(seed) {}
  double operator()() {
    const double u1 = (static_cast<double>(m_bits() >> 11) + 0.5) / 9007199254740992.0;
    const double u2 = static_cast<double>(m_bits() >> 11) / 9007199254740992.0;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::mt19937_64 m_bits;
};

/// Runs of `samples` each at the given levels [seconds], with a run-to-run drift of `run_noise` and a
/// sample noise of `sample_noise` (log-normal, as fractions).
std::vector<std::vector<double>> noisy_runs(const std::vector<double>& levels, std::uint64_t seed, int samples = 10,
                                            double run_noise = 0.01, double sample_noise = 0.015) {
  seeded_normal normal(seed);
  std::vector<std::vector<double>> runs;
  for (double level : levels) {
    const double run_level = level * std::exp(run_noise * normal());
    std::vector<double> run;
    for (int i = 0; i < samples; ++i) run.push_back(run_level * std::exp(sample_noise * normal()));
    runs.push_back(std::move(run));
  }
  return runs;
}

/// `count` runs at `level`, appended to `levels`.
void add_level(std::vector<double>& levels, int count, double level) { levels.insert(levels.end(), count, level); }

TEST(change_points, planted_steps_are_found_and_only_they) {
  // 12 runs at 1 ms, 15 at 1.3 ms (+30%), 13 at 0.9 ms (-31%); 30 seeds of noise.
  std::vector<double> levels;
  add_level(levels, 12, 1e-3);
  add_level(levels, 15, 1.3e-3);
  add_level(levels, 13, 0.9e-3);
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const auto steps = stats::find_change_points(noisy_runs(levels, seed));
    ASSERT_EQ(steps.size(), 2u) << "seed " << seed;
    EXPECT_EQ(steps[0].index, 12u) << "seed " << seed;
    EXPECT_EQ(steps[1].index, 27u) << "seed " << seed;
    EXPECT_NEAR(steps[0].ratio, 1.3, 0.03) << "seed " << seed;
    EXPECT_NEAR(steps[1].ratio, 0.9 / 1.3, 0.03) << "seed " << seed;
    EXPECT_LT(steps[0].p_value, 1e-6);
    EXPECT_EQ(steps[0].before_first, 0u);
    EXPECT_EQ(steps[1].after_end, levels.size());
  }
}

TEST(change_points, noise_alone_makes_no_step) {
  const std::vector<double> levels(40, 2e-3);
  for (std::uint64_t seed = 1; seed <= 50; ++seed)
    EXPECT_TRUE(stats::find_change_points(noisy_runs(levels, seed)).empty()) << "seed " << seed;
}

TEST(change_points, the_minimum_effect_decides_small_steps) {
  // A 3% step is real (p tiny with 150 samples a side) but below the 5% minimum effect; 8% is above.
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<double> small;
    add_level(small, 15, 1e-3);
    add_level(small, 15, 1.03e-3);
    EXPECT_TRUE(stats::find_change_points(noisy_runs(small, seed, 10, 0.003, 0.01)).empty()) << "seed " << seed;
    std::vector<double> large;
    add_level(large, 15, 1e-3);
    add_level(large, 15, 1.08e-3);
    const auto steps = stats::find_change_points(noisy_runs(large, seed, 10, 0.003, 0.01));
    ASSERT_EQ(steps.size(), 1u) << "seed " << seed;
    EXPECT_EQ(steps[0].index, 15u);
    // A looser minimum effect finds the 3% step too.
    stats::change_point_settings loose;
    loose.min_effect = 0.02;
    EXPECT_EQ(stats::find_change_points(noisy_runs(small, seed, 10, 0.003, 0.01), loose).size(), 1u) << "seed " << seed;
  }
}

TEST(change_points, a_single_run_level_at_either_end_is_a_step) {
  // As #15's first gate run: one run at the old level, then the new one.
  std::vector<double> levels{1.13e-3};
  add_level(levels, 6, 0.87e-3);
  levels.push_back(0.6e-3);
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const auto steps = stats::find_change_points(noisy_runs(levels, seed));
    ASSERT_EQ(steps.size(), 2u) << "seed " << seed;
    EXPECT_EQ(steps[0].index, 1u);
    EXPECT_EQ(steps[1].index, 7u);
  }
}

TEST(change_points, a_large_noisy_wobble_is_no_step) {
  // Bimodal timings (a clock that flips between 1 ms and 2 ms): the later runs have one sample more
  // in the slow mode, which moves the pooled median by a third, far above the minimum effect, while
  // the samples say nothing (p near 0.6). Only the p-value can keep it from being a step (issue 40:
  // `p < 1 - alpha` in place of `p < alpha` passed every other test).
  const auto bimodal_run = [](int fast, int slow, int run) {
    std::vector<double> samples;
    for (int i = 0; i < fast; ++i) samples.push_back(1e-3 * (1.0 + 1e-3 * i + 1e-5 * run));
    for (int i = 0; i < slow; ++i) samples.push_back(1e-3 * (2.0 + 1e-3 * i + 1e-5 * run));
    return samples;
  };
  std::vector<std::vector<double>> runs;
  for (int run = 0; run < 3; ++run) runs.push_back(bimodal_run(10, 10, run));
  for (int run = 3; run < 6; ++run) runs.push_back(bimodal_run(9, 11, run));
  std::vector<double> before, after;
  for (int run = 0; run < 6; ++run) {
    std::vector<double>& side = run < 3 ? before : after;
    side.insert(side.end(), runs[run].begin(), runs[run].end());
  }
  const double ratio = stats::median(after) / stats::median(before);
  const double p = stats::mann_whitney_u(before, after).p_value;
  const stats::change_point_settings settings;
  ASSERT_GT(ratio, 1.0 + 5 * settings.min_effect) << "the wobble is large";
  ASSERT_GT(p, 0.3) << "and pure noise";
  ASSERT_LT(p, 1.0 - 10 * settings.alpha) << "a p-value a reversed test would accept";
  EXPECT_TRUE(stats::find_change_points(runs, settings).empty());
}

TEST(change_points, slow_outlier_repetitions_make_no_step) {
  // One repetition in each run 5x slow (a preempted sample): ranks ignore how slow it was.
  const std::vector<double> levels(20, 1e-3);
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    auto runs = noisy_runs(levels, seed);
    for (std::size_t i = 10; i < runs.size(); ++i) runs[i][3] *= 5.0;
    EXPECT_TRUE(stats::find_change_points(runs).empty()) << "seed " << seed;
  }
}

TEST(change_points, rejects_bad_settings_and_empty_runs) {
  EXPECT_THROW((void)stats::find_change_points({{1.0}, {}}), std::invalid_argument);
  stats::change_point_settings bad;
  bad.alpha = 0.0;
  EXPECT_THROW((void)stats::find_change_points({{1.0}}, bad), std::invalid_argument);
  EXPECT_TRUE(stats::find_change_points({}).empty());
  EXPECT_TRUE(stats::find_change_points({{1.0, 2.0}}).empty());
}

// --- history over results files ---

/// A complete run of one model with ref and fused_cuda at the given medians [seconds].
results_file make_run(const std::string& gpu, const std::string& commit, const std::string& date, double ref_median,
                      double fused_median, std::uint64_t seed) {
  results_file r;
  r.environment.device = "cuda";
  r.environment.gpu_name = gpu;
  r.environment.git_commit = commit;
  r.environment.date = date;
  r.environment.hostname = "host";
  r.environment.sweep = "quick";
  r.status.planned_cases = 2;
  for (const auto& [implementation, median] : {std::pair<std::string, double>{"ref", ref_median}, {"fused_cuda", fused_median}}) {
    case_result c;
    c.model = "convt3d_bn_sub";
    c.kernelbench_id = 15;
    c.config = nlohmann::json{{"batch_size", 16}};
    c.config_label = "default";
    c.implementation = implementation;
    c.outcome = outcome::passed;
    c.stats = summarize_samples(noisy_runs({median}, seed + (implementation == "ref" ? 1000 : 0)).front());
    r.cases.push_back(std::move(c));
  }
  return r;
}

std::string date_of(int day) { return fmt::format("2026-11-{:02d}T10:00:00Z", day); }

TEST(history, orders_by_date_without_a_repository_and_finds_the_planted_step) {
  std::vector<history::loaded_results> files;
  for (int day = 1; day <= 8; ++day)  // given out of order on purpose
    files.push_back({fmt::format("run{}.json", 9 - day),
                     make_run("GPU X", fmt::format("{:040x}", 9 - day), date_of(9 - day), 4e-3, 9 - day <= 4 ? 1e-3 : 0.6e-3,
                              static_cast<std::uint64_t>(day))});
  const history::history h = history::build_history(files, {}, {});
  ASSERT_EQ(h.runs.size(), 8u);
  for (std::size_t i = 0; i < h.runs.size(); ++i) EXPECT_EQ(h.runs[i].date, date_of(static_cast<int>(i) + 1));
  ASSERT_EQ(h.charts.size(), 1u);
  ASSERT_EQ(h.series.size(), 2u);
  const history::run_series& fused = h.series[h.charts[0].series[1]];
  EXPECT_EQ(fused.implementation, "fused_cuda");
  ASSERT_EQ(fused.steps.size(), 1u);
  EXPECT_EQ(fused.steps[0].last_run_before, 3u);
  EXPECT_EQ(fused.steps[0].first_run_after, 4u);
  EXPECT_NEAR(fused.steps[0].ratio, 0.6, 0.02);
  EXPECT_TRUE(h.series[h.charts[0].series[0]].steps.empty());  // the reference did not move
  EXPECT_NEAR(fused.points[0].speedup, 4.0, 0.1);
}

TEST(history, commit_order_wins_over_run_dates) {
  // Run A measured later but at an older commit.
  std::vector<history::loaded_results> files{
      {"a.json", make_run("GPU X", std::string(40, 'a'), date_of(5), 4e-3, 1e-3, 1)},
      {"b.json", make_run("GPU X", std::string(40, 'b'), date_of(2), 4e-3, 1e-3, 2)}};
  history::commit_order commits{{std::string(40, 'a'), {0, 100}}, {std::string(40, 'b'), {1, 200}}};
  const history::history h = history::build_history(files, commits, {});
  ASSERT_EQ(h.runs.size(), 2u);
  EXPECT_EQ(h.runs[0].sources.front(), "a.json");
  EXPECT_TRUE(h.runs[0].commit_in_repository);
}

TEST(history, the_source_digest_places_a_run_and_a_mismatch_is_shown) {
  // Run L's file records the older commit 'a' as dirty (a device copy whose .git lagged), but its
  // digest is commit 'b''s: it is b's run, clean, and the mismatch is in its caveat. Run N's digest is
  // no commit's: a dirty run of its recorded commit, flagged. Run O has no digest (an older file).
  const std::string a(40, 'a'), b(40, 'b'), c(40, 'c');
  std::vector<history::loaded_results> files{
      {"lagging.json", make_run("GPU X", a + "-dirty", date_of(1), 4e-3, 1e-3, 1), {}},
      {"nowhere.json", make_run("GPU X", c, date_of(2), 4e-3, 1e-3, 2), {}},
      {"older.json", make_run("GPU X", a, date_of(3), 4e-3, 1e-3, 3), {}}};
  files[0].source_check.verdict = provenance::status::matches_other;
  files[0].source_check.recorded = a + "-dirty";
  files[0].source_check.commit = b;
  files[1].source_check.verdict = provenance::status::matches_none;
  files[1].source_check.recorded = c;
  history::commit_order commits{{a, {0, 100}}, {b, {1, 200}}, {c, {2, 300}}};
  const history::history h = history::build_history(files, commits, {});
  ASSERT_EQ(h.runs.size(), 3u);
  // Order by commit: older.json at a, lagging.json at b, nowhere.json at c.
  EXPECT_EQ(h.runs[0].sources.front(), "older.json");
  EXPECT_EQ(h.runs[0].get_caveat(), "");
  EXPECT_NE(h.runs[0].source_check.find("no source digest"), std::string::npos);
  EXPECT_EQ(h.runs[1].sources.front(), "lagging.json");
  EXPECT_EQ(h.runs[1].commit, b);
  EXPECT_FALSE(h.runs[1].dirty);
  EXPECT_NE(h.runs[1].get_caveat().find("DIGEST MISMATCH: recorded " + a + "-dirty, but the sources are bbbbbbb's"),
            std::string::npos)
      << h.runs[1].get_caveat();
  EXPECT_EQ(h.runs[2].sources.front(), "nowhere.json");
  EXPECT_TRUE(h.runs[2].dirty);
  EXPECT_NE(h.runs[2].get_caveat().find("no commit of the repository has these sources"), std::string::npos);
  // The tables say it too.
  const std::string markdown = history::render_history_markdown(h);
  EXPECT_NE(markdown.find("| sources |"), std::string::npos);
  EXPECT_NE(markdown.find("DIGEST MISMATCH"), std::string::npos);
}

TEST(history, dirty_and_incomplete_runs_are_marked_and_left_out_of_steps_on_request) {
  std::vector<history::loaded_results> files;
  for (int day = 1; day <= 6; ++day)
    files.push_back({fmt::format("run{}.json", day),
                     make_run("GPU X", fmt::format("{:040x}", day), date_of(day), 4e-3, 1e-3, static_cast<std::uint64_t>(day))});
  // A dirty run and an incomplete run, both 2x slower: no step may come of them.
  files.push_back({"dirty.json", make_run("GPU X", fmt::format("{:040x}-dirty", 7), date_of(7), 4e-3, 2e-3, 7)});
  results_file incomplete = make_run("GPU X", fmt::format("{:040x}", 8), date_of(8), 4e-3, 2e-3, 8);
  incomplete.status.complete = false;
  incomplete.status.incomplete_reason = "interrupted by SIGINT after 2 of 3 cases";
  files.push_back({"incomplete.json", incomplete});
  history::history_settings clean;
  clean.clean_runs_only = true;
  const history::history h = history::build_history(files, {}, clean);
  ASSERT_EQ(h.runs.size(), 8u);
  EXPECT_TRUE(h.runs[6].dirty);
  EXPECT_EQ(h.runs[6].get_caveat(), "dirty tree");
  EXPECT_FALSE(h.runs[7].complete);
  const history::run_series& fused = h.series[h.charts[0].series[1]];
  EXPECT_TRUE(fused.steps.empty());
  EXPECT_EQ(fused.points[6].excluded_because, "dirty tree");
  EXPECT_EQ(fused.points[7].excluded_because, "incomplete run");
  // By default every run counts: the 2x is a step, and the page marks its runs.
  const history::history all = history::build_history(files, {}, {});
  EXPECT_EQ(all.series[all.charts[0].series[1]].steps.size(), 1u);
  EXPECT_TRUE(all.series[all.charts[0].series[1]].points[6].excluded_because.empty());
  // A case that did not pass is never used.
  files.back().results.cases[1].outcome = outcome::incorrect;
  files[6].results.cases[1].outcome = outcome::failed;
  const history::history failing = history::build_history(files, {}, {});
  EXPECT_TRUE(failing.series[failing.charts[0].series[1]].steps.empty());
  EXPECT_EQ(failing.series[failing.charts[0].series[1]].points[7].excluded_because, "case incorrect");
  // The page says so.
  const std::string html = history::render_history_html(h);
  EXPECT_NE(html.find("dirty tree"), std::string::npos);
  EXPECT_NE(html.find("INCOMPLETE RUN"), std::string::npos);
}

TEST(history, gpus_are_never_mixed) {
  std::vector<history::loaded_results> files{{"x.json", make_run("GPU X", std::string(40, 'a'), date_of(1), 4e-3, 1e-3, 1)},
                                             {"y.json", make_run("GPU Y", std::string(40, 'a'), date_of(1), 4e-3, 1e-3, 2)}};
  const history::history h = history::build_history(files, {}, {});
  EXPECT_EQ(h.charts.size(), 2u);
  EXPECT_EQ(h.series.size(), 4u);
  for (const history::run_series& s : h.series) EXPECT_EQ(s.points.size(), 1u);
  history::history_settings only_y;
  only_y.gpus = {"gpu-y"};
  EXPECT_EQ(history::build_history(files, {}, only_y).runs.size(), 1u);
  only_y.gpus = {"GPU Z"};
  EXPECT_THROW((void)history::build_history(files, {}, only_y), history::history_error);
}

TEST(history, copies_count_once_and_a_different_file_for_the_same_run_is_refused) {
  const results_file run = make_run("GPU X", std::string(40, 'a'), date_of(1), 4e-3, 1e-3, 1);
  const history::history h = history::build_history({{"a.json", run}, {"copy.json", run}}, {}, {});
  ASSERT_EQ(h.runs.size(), 1u);
  EXPECT_EQ(h.runs[0].sources.size(), 2u);
  results_file edited = run;
  edited.cases[1].stats->median *= 0.5;
  EXPECT_THROW((void)history::build_history({{"a.json", run}, {"edited.json", edited}}, {}, {}), history::history_error);
  results_file shard = run;
  shard.environment.shard = "1/2";
  EXPECT_THROW((void)history::build_history({{"shard.json", shard}}, {}, {}), history::history_error);
  EXPECT_THROW((void)history::build_history({}, {}, {}), history::history_error);
}

TEST(history, a_config_changed_under_its_label_is_its_own_series) {
  results_file old_config = make_run("GPU X", std::string(40, 'a'), date_of(1), 4e-3, 1e-3, 1);
  results_file new_config = make_run("GPU X", std::string(40, 'b'), date_of(2), 8e-3, 2e-3, 2);
  for (case_result& c : new_config.cases) c.config["batch_size"] = 32;
  const history::history h = history::build_history({{"a.json", old_config}, {"b.json", new_config}}, {}, {});
  EXPECT_EQ(h.series.size(), 4u);
  EXPECT_EQ(h.charts.size(), 1u);
  int second = 0;
  for (const history::run_series& s : h.series) second += s.config_variant == 2 ? 1 : 0;
  EXPECT_EQ(second, 2);
}

// --- the repository's own H100 runs ---

TEST(history, committed_h100_runs_show_the_steps_of_15) {
  std::vector<std::string> skipped;
  auto files = history::load_results_files({fs::path(FUSEBENCH_REPORTS_DIR)}, skipped);
  EXPECT_FALSE(skipped.empty());  // costs.json, gbench.json, verify JSON
  history::history_settings settings;
  settings.gpus = {"nvidia-h100-80gb-hbm3"};
  const history::history h = history::build_history(
      std::move(files), history::read_commit_order(history::find_repository(FUSEBENCH_REPORTS_DIR)), settings);
  EXPECT_EQ(h.charts.size(), 5u);  // one per model
  const history::run_series* fused15 = nullptr;
  for (const history::run_series& s : h.series)
    if (s.model == "convt3d_bn_sub" && s.implementation == "fused_cuda" && s.config_label == "default") fused15 = &s;
  ASSERT_NE(fused15, nullptr);
  // The gate benches from 1130.8 us (2026-11-23) down to 533.3 us (e54b1cf's gate, committed as
  // cd13c7b), in commit order; later gates append points.
  ASSERT_GE(fused15->points.size(), 8u);
  EXPECT_NEAR(fused15->points.front().median, 1130.8e-6, 0.1e-6);
  const auto e54b1cf = std::find_if(fused15->points.begin(), fused15->points.end(), [&](const auto& point) {
    return h.runs[point.run].commit.rfind("cd13c7b", 0) == 0;
  });
  ASSERT_NE(e54b1cf, fused15->points.end());
  EXPECT_NEAR(e54b1cf->median, 533.3e-6, 0.1e-6);
  for (std::size_t i = 1; i < fused15->points.size(); ++i)
    EXPECT_LE(fused15->points[i].median, fused15->points[i - 1].median * 1.02) << "point " << i;
  // Steps: 1131 -> ~873 (the rewrite of df3ae0f), ~873 -> 611 (one convolution), 611 -> ~540.
  ASSERT_EQ(fused15->steps.size(), 3u);
  EXPECT_NEAR(fused15->steps[0].before_median, 1130.8e-6, 1e-6);
  EXPECT_NEAR(fused15->steps[0].after_median, 873e-6, 4e-6);
  EXPECT_NEAR(fused15->steps[1].after_median, 610.7e-6, 1e-6);
  // The last level (546 us and the gates after it, down to ~533 us) grows as later gates append runs.
  EXPECT_GT(fused15->steps[2].after_median, 530e-6);
  EXPECT_LT(fused15->steps[2].after_median, 550e-6);
  for (const history::series_step& step : fused15->steps) {
    EXPECT_LT(step.ratio, 0.95);
    EXPECT_LT(step.p_value, 0.01);
  }
  // The step table names them.
  const std::string markdown = history::render_history_markdown(h);
  EXPECT_NE(markdown.find("| NVIDIA H100 80GB HBM3 | convt3d_bn_sub | fused_cuda default | 40f9cd5-dirty..20dcfc3-dirty | 1.13 ms | 873.1 us | 0.772× |"),
            std::string::npos)
      << markdown;
  // results.json, the baseline and the gate folder it came from hold one run, counted once.
  const auto latest = std::find_if(h.runs.begin(), h.runs.end(), [](const history::run_record& r) {
    return std::any_of(r.sources.begin(), r.sources.end(), [](const std::string& source) {
      return fs::path(source).filename() == "results.json" && fs::path(source).parent_path().filename() == "nvidia-h100-80gb-hbm3";
    });
  });
  ASSERT_NE(latest, h.runs.end());
  EXPECT_EQ(latest->sources.size(), 3u);
}

}  // namespace
