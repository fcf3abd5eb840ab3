/// Statistics used by bench, report and compare: summary edge cases, Mann-Whitney against R's
/// wilcox.test, the bootstrap interval, and the bench building blocks that rest on them.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "harness/bench/bench_state.h"
#include "harness/bench/progress.h"
#include "harness/bench/repetition_policy.h"
#include "harness/results/results.h"
#include "harness/stats/mann_whitney.h"
#include "harness/stats/ratio_interval.h"
#include "harness/stats/summary.h"

namespace {

using namespace fb;

TEST(summary, median_of_odd_even_single_and_empty) {
  EXPECT_DOUBLE_EQ(stats::median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(stats::median({4.0, 1.0, 3.0, 2.0}), 2.5);  // mean of the two middle values
  EXPECT_DOUBLE_EQ(stats::median({7.0}), 7.0);
  EXPECT_DOUBLE_EQ(stats::median({5.0, 5.0, 5.0, 1.0}), 5.0);
  EXPECT_TRUE(std::isnan(stats::median({})));
}

TEST(summary, percentile_interpolates_linearly_like_numpy) {
  const std::vector<double> v{4.0, 1.0, 3.0, 2.0};
  EXPECT_DOUBLE_EQ(stats::percentile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(stats::percentile(v, 100.0), 4.0);
  EXPECT_DOUBLE_EQ(stats::percentile(v, 25.0), 1.75);  // numpy.percentile([1,2,3,4], 25) == 1.75
  EXPECT_DOUBLE_EQ(stats::percentile(v, 90.0), 3.7);   // position 2.7
  EXPECT_DOUBLE_EQ(stats::percentile(v, 10.0), 1.3);
  // Eleven values 0..10: the p-th percentile is p/10 exactly.
  std::vector<double> ramp;
  for (int i = 10; i >= 0; --i) ramp.push_back(i);
  EXPECT_DOUBLE_EQ(stats::percentile(ramp, 10.0), 1.0);
  EXPECT_DOUBLE_EQ(stats::percentile(ramp, 35.0), 3.5);
  EXPECT_DOUBLE_EQ(stats::percentile({42.0}, 90.0), 42.0);
  EXPECT_TRUE(std::isnan(stats::percentile({}, 50.0)));
}

TEST(summary, percentile_rejects_out_of_range_and_keeps_input_order) {
  EXPECT_THROW((void)stats::percentile({1.0}, -0.1), std::invalid_argument);
  EXPECT_THROW((void)stats::percentile({1.0}, 100.1), std::invalid_argument);
  EXPECT_THROW((void)stats::percentile({1.0}, std::nan("")), std::invalid_argument);
  const std::vector<double> v{3.0, 1.0, 2.0};
  (void)stats::percentile(v, 50.0);
  EXPECT_EQ(v, (std::vector<double>{3.0, 1.0, 2.0}));
}

TEST(summary, mean_stdev_and_relative_standard_error) {
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(stats::mean(v), 5.0);
  EXPECT_NEAR(stats::stdev(v), std::sqrt(32.0 / 7.0), 1e-12);  // sample (n-1) stdev, not population 2.0
  EXPECT_NEAR(stats::relative_standard_error(v), std::sqrt(32.0 / 7.0) / std::sqrt(8.0) / 5.0, 1e-12);
  EXPECT_DOUBLE_EQ(stats::stdev({3.0}), 0.0);
  EXPECT_TRUE(std::isnan(stats::stdev({})));
  EXPECT_TRUE(std::isinf(stats::relative_standard_error({1.0})));
  // Large offset: a one-pass E[x^2]-E[x]^2 would lose these digits.
  EXPECT_NEAR(stats::stdev({1e9 + 1, 1e9 + 2, 1e9 + 3}), 1.0, 1e-9);
}

// Reference values from R (wilcox.test(x, y, exact = FALSE, correct = TRUE)), as tabulated in
// scipy's test_mannwhitneyu.py.
const std::vector<double> r_x{210.052110, 110.190630, 307.918612};
const std::vector<double> r_y{436.08811482466416, 416.37397329768191, 179.96975939463582, 197.8118754228619,
                              34.038757281225756, 138.54220550921517, 128.7769351470246, 265.92721427951852,
                              275.6617533155341,  592.34083395416258, 448.73177590617018, 300.61495185038905,
                              187.97508449019588};

TEST(mann_whitney, matches_r_two_sided_with_continuity_correction) {
  const auto xy = stats::mann_whitney_u(r_x, r_y);
  EXPECT_DOUBLE_EQ(xy.u, 16.0);
  EXPECT_NEAR(xy.p_value, 0.6865041817876, 1e-10);
  const auto yx = stats::mann_whitney_u(r_y, r_x);
  EXPECT_DOUBLE_EQ(yx.u, 23.0);  // U of the first sample; U1 + U2 = n1 * n2 = 39
  EXPECT_NEAR(yx.p_value, 0.6865041817876, 1e-10);
}

TEST(mann_whitney, matches_r_with_ties) {
  const std::vector<double> x{1, 2, 3, 4};
  const std::vector<double> y0{1, 2, 3, 4, 5};
  const std::vector<double> dy{0, 1, 0, 1, 0};
  const std::vector<double> dy2{0, 0, 1, 0, 0};
  // y0 - 0.01, y0 - 0.01*dy, y0 - 0.01*dy2, y0, y0 + 0.01*dy2, y0 + 0.01*dy, y0 + 0.01
  const std::vector<std::pair<int, const std::vector<double>*>> shifts{{-1, nullptr}, {-1, &dy}, {-1, &dy2}, {0, nullptr},
                                                                       {1, &dy2},     {1, &dy},  {1, nullptr}};
  const double u_expected[] = {10, 9, 8.5, 8, 7.5, 7, 6};
  const double p_expected[] = {1, 0.9017048037317, 0.804080657472, 0.7086240584439, 0.6197963884941,
                               0.5368784563079, 0.3912672792826};
  for (std::size_t k = 0; k < shifts.size(); ++k) {
    std::vector<double> y = y0;
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] += 0.01 * shifts[k].first * (shifts[k].second == nullptr ? 1.0 : (*shifts[k].second)[i]);
    const auto r = stats::mann_whitney_u(x, y);
    EXPECT_DOUBLE_EQ(r.u, u_expected[k]) << "case " << k;
    EXPECT_NEAR(r.p_value, p_expected[k], 1e-10) << "case " << k;
  }
}

TEST(mann_whitney, separated_samples_and_degenerate_inputs) {
  std::vector<double> low;
  std::vector<double> high;
  for (int i = 1; i <= 10; ++i) {
    low.push_back(i);
    high.push_back(i + 10);
  }
  const auto r = stats::mann_whitney_u(low, high);
  EXPECT_DOUBLE_EQ(r.u, 0.0);
  // mean 50, sd sqrt(175), z = 49.5 / sqrt(175): p = erfc(z / sqrt 2)
  EXPECT_NEAR(r.p_value, std::erfc(49.5 / std::sqrt(175.0) / std::sqrt(2.0)), 1e-15);
  EXPECT_LT(r.p_value, 2e-4);
  EXPECT_DOUBLE_EQ(stats::mann_whitney_u({5, 5, 5}, {5, 5, 5, 5}).p_value, 1.0);  // all tied
  EXPECT_THROW((void)stats::mann_whitney_u({}, {1.0}), std::invalid_argument);
}

TEST(mann_whitney, min_p_value_is_the_floor_of_any_distinct_samples) {
  // Closed form of the separated case: z = (n_a n_b / 2 - 1/2) / sqrt(n_a n_b (n + 1) / 12).
  const auto closed = [](double a, double b) {
    return std::erfc((a * b / 2 - 0.5) / std::sqrt(a * b * (a + b + 1) / 12) / std::sqrt(2.0));
  };
  EXPECT_NEAR(stats::mann_whitney_min_p_value(2, 2), closed(2, 2), 1e-15);
  EXPECT_NEAR(stats::mann_whitney_min_p_value(10, 2), closed(10, 2), 1e-15);
  EXPECT_GT(stats::mann_whitney_min_p_value(2, 2), 0.24);   // 2 vs 2 samples can never show anything
  EXPECT_GT(stats::mann_whitney_min_p_value(10, 2), 0.04);  // nor 10 vs 2 at alpha 0.01
  EXPECT_LT(stats::mann_whitney_min_p_value(10, 10), 2e-4);
  // Any other ordering of distinct values gives a larger p.
  EXPECT_GT(stats::mann_whitney_u({1, 2, 4, 5, 6}, {3, 7, 8, 9, 10}).p_value, stats::mann_whitney_min_p_value(5, 5));
  // The minimum n per side follows from alpha: p floor of n-1 is >= alpha, of n is < alpha.
  for (const double alpha : {0.05, 0.01, 0.001, 1e-6}) {
    const std::size_t n = stats::mann_whitney_min_samples(alpha);
    EXPECT_LT(stats::mann_whitney_min_p_value(n, n), alpha) << alpha;
    EXPECT_GE(stats::mann_whitney_min_p_value(n - 1, n - 1), alpha) << alpha;
  }
  EXPECT_EQ(stats::mann_whitney_min_samples(0.01), 6u);
  EXPECT_EQ(stats::mann_whitney_min_samples(0.05), 4u);
  EXPECT_THROW((void)stats::mann_whitney_min_samples(0.0), std::invalid_argument);
  EXPECT_THROW((void)stats::mann_whitney_min_p_value(0, 3), std::invalid_argument);
}

TEST(ratio_interval, deterministic_and_brackets_the_ratio) {
  std::vector<double> a;
  std::vector<double> b;
  for (int i = 0; i < 40; ++i) {
    a.push_back(3.0 + 0.03 * std::sin(i * 1.7));
    b.push_back(1.0 + 0.01 * std::cos(i * 2.3));
  }
  const auto r1 = stats::ratio_interval(a, b);
  const auto r2 = stats::ratio_interval(a, b);
  EXPECT_EQ(r1.low, r2.low);
  EXPECT_EQ(r1.high, r2.high);
  EXPECT_DOUBLE_EQ(r1.ratio, stats::median(a) / stats::median(b));
  EXPECT_LT(r1.low, r1.ratio);
  EXPECT_GT(r1.high, r1.ratio);
  EXPECT_GT(r1.low, 2.9);
  EXPECT_LT(r1.high, 3.1);
  // The seed is really used: some other seed moves an end (medians of resamples are discrete, so a
  // single other seed may land on the same order statistics).
  bool moved = false;
  for (std::uint64_t seed = 1; seed <= 8 && !moved; ++seed) {
    stats::bootstrap_settings other;
    other.seed = seed;
    const auto r3 = stats::ratio_interval(a, b, other);
    moved = r3.low != r1.low || r3.high != r1.high;
  }
  EXPECT_TRUE(moved);
}

TEST(ratio_interval, constant_samples_give_a_point_and_more_samples_a_narrower_interval) {
  const auto point = stats::ratio_interval({2.0, 2.0, 2.0}, {0.5, 0.5});
  EXPECT_DOUBLE_EQ(point.ratio, 4.0);
  EXPECT_DOUBLE_EQ(point.low, 4.0);
  EXPECT_DOUBLE_EQ(point.high, 4.0);
  const auto make = [](int n) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(1.0 + 0.05 * std::sin(i * 12.9898));
    return v;
  };
  const auto few = stats::ratio_interval(make(10), make(10));
  const auto many = stats::ratio_interval(make(400), make(400));
  EXPECT_LT(many.high - many.low, few.high - few.low);
  EXPECT_THROW((void)stats::ratio_interval({}, {1.0}), std::invalid_argument);
}

TEST(repetition_policy, stops_on_rse_cap_or_max) {
  bench::repetition_policy p;  // min 10, max 1000, cap 2 s, rse 1%
  std::vector<double> stable(10, 1e-3);
  stable[0] = 1.001e-3;
  EXPECT_TRUE(p.want_more(std::vector<double>(9, 1e-3), 0.009));  // below min_samples
  EXPECT_TRUE(p.want_more(std::vector<double>(9, 1.0), 9.0));     // min_samples beats the cap
  EXPECT_FALSE(p.want_more(stable, 0.01));                        // rse ~ 3e-5 < 1%
  std::vector<double> noisy;
  for (int i = 0; i < 10; ++i) noisy.push_back(i % 2 == 0 ? 1e-3 : 2e-3);
  EXPECT_TRUE(p.want_more(noisy, 0.015));   // rse ~ 11%
  EXPECT_FALSE(p.want_more(noisy, 2.0));    // time cap reached
  EXPECT_FALSE(p.want_more(std::vector<double>(1000, 1e-3), 0.5));  // max_samples
  p.min_time = 0.5;
  EXPECT_TRUE(p.want_more(stable, 0.01));   // stable, but min_time not spent yet
}

TEST(floor, is_the_larger_of_memory_and_compute_time) {
  // 1 GB at 1 GB/s is 1 s of memory time; 4 GFLOP at 1 GFLOP/s is 4 s of compute: the kernel can
  // beat neither, so its floor is 4 s.
  const floor_estimate compute_bound = make_floor_estimate(1e9, 4e9, 1e9, 1e9, 5.0);
  EXPECT_DOUBLE_EQ(compute_bound.floor_seconds, 4.0);
  EXPECT_DOUBLE_EQ(compute_bound.percent_of_floor, 80.0);
  EXPECT_FALSE(compute_bound.impossible);
  const floor_estimate memory_bound = make_floor_estimate(3e9, 1e9, 1e9, 1e9, 5.0);
  EXPECT_DOUBLE_EQ(memory_bound.floor_seconds, 3.0);
  EXPECT_FALSE(memory_bound.impossible);
}

TEST(floor, a_median_below_the_floor_is_impossible) {
  EXPECT_TRUE(make_floor_estimate(1e9, 4e9, 1e9, 1e9, 3.9).impossible);
  EXPECT_TRUE(make_floor_estimate(3e9, 1e9, 1e9, 1e9, 2.0).impossible) << "below the memory time alone";
  EXPECT_FALSE(make_floor_estimate(1e9, 4e9, 1e9, 1e9, 4.0).impossible) << "at the floor is possible";
  EXPECT_FALSE(make_floor_estimate(1e9, 4e9, 1e9, 1e9, 0.0).impossible) << "no median, no verdict";
}

TEST(bench_state, counts_bytes_flops_and_keeps_first_skip_reason) {
  bench::bench_state state;
  state.add_element_count(100);
  state.add_global_memory_bytes(4000.0);
  state.add_global_memory_bytes(80.0);
  state.add_flops(2e6);
  EXPECT_EQ(state.get_element_count(), 100.0);
  // 4080 B at 1 GB/s = 4.08 us; 2 MFLOP at 1 TFLOP/s = 2 us: the memory term is the floor.
  const auto floor = state.get_floor(1e9, 1e12, 8.16e-6);
  ASSERT_TRUE(floor.has_value());
  EXPECT_NEAR(floor->floor_seconds, 4.08e-6, 1e-15);
  EXPECT_NEAR(floor->bytes, 4080.0, 1e-12);
  EXPECT_NEAR(floor->percent_of_floor, 50.0, 1e-9);
  EXPECT_FALSE(floor->impossible);
  EXPECT_TRUE(state.get_floor(1e9, 1e12, 4e-6)->impossible);
  EXPECT_FALSE(bench::bench_state{}.get_floor(1e9, 1e12, 1.0).has_value());

  state.set_input_sets(2);
  EXPECT_EQ(state.get_input_sets(), 2);
  bench::repetition_policy policy;
  policy.min_samples = 17;
  state.set_repetition_policy(policy);
  EXPECT_EQ(state.get_repetition_policy().min_samples, 17u);

  EXPECT_FALSE(state.is_skipped());
  state.skip("does not fit in device memory");
  state.skip("second reason");
  EXPECT_TRUE(state.is_skipped());
  EXPECT_EQ(state.get_skip_reason(), "does not fit in device memory");
}

TEST(progress, plain_lines_in_logs_and_a_redrawn_line_on_a_terminal_that_clears_itself) {
  double now = 100.0;
  std::ostringstream log;
  bench::progress plain(4, log, false, [&] { return now; });
  plain.begin_case("convt2d_mul_gap/default/ref");
  now += 10.0;
  plain.begin_case("convt2d_mul_gap/default/fused_cuda");
  plain.finish();
  EXPECT_EQ(log.str(),
            "case 1/4  convt2d_mul_gap/default/ref  elapsed 0s  ETA ?\n"
            "case 2/4  convt2d_mul_gap/default/fused_cuda  elapsed 10s  ETA 30s\n");

  std::ostringstream tty;
  bench::progress live(2, tty, true, [&] { return now; });
  live.begin_case("a/default/ref");
  live.begin_case("a/default/fused_cuda");
  live.finish();
  EXPECT_EQ(tty.str(), "\rcase 1/2  a/default/ref  elapsed 0s  ETA ?\x1b[K"
                       "\rcase 2/2  a/default/fused_cuda  elapsed 0s  ETA 0s\x1b[K"
                       "\r\x1b[K");  // finish() clears the line: what follows starts on a clean one, none stale above it
  const std::string once = tty.str();
  live.finish();  // idempotent
  EXPECT_EQ(tty.str(), once);
  EXPECT_EQ(bench::progress::format_duration(185.0), "3m05s");
  EXPECT_EQ(bench::progress::format_duration(3720.0), "1h02m");
}

}  // namespace
