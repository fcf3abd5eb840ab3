#pragma once
/// Two-sided Mann-Whitney U (Wilcoxon rank-sum) test: are two sets of timings drawn from the same
/// distribution? Rank-based, so one slow outlier repetition cannot fake a regression.
#include <cstddef>
#include <vector>

namespace fb::stats {

/// Result of mann_whitney_u.
struct mann_whitney_result {
  double u = 0.0;        ///< U statistic of the first sample: rank sum of `a` minus n_a(n_a+1)/2
  double z = 0.0;        ///< standardised |U - mean| after continuity correction (>= 0 or slightly below)
  double p_value = 1.0;  ///< two-sided p-value in [0, 1]
};

/// Normal approximation with tie correction and continuity correction, as R's
/// `wilcox.test(a, b, exact = FALSE, correct = TRUE)` and scipy's `mannwhitneyu(method="asymptotic")`.
/// Close to the exact test for n >= 8 per side. p = 1 when every value is tied.
/// REQUIRES: a and b non-empty; throws std::invalid_argument otherwise.
[[nodiscard]] mann_whitney_result mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

/// The smallest p-value mann_whitney_u can return for n_a and n_b distinct values: two fully separated
/// groups. With a floor at or above alpha, no timings of that many samples can show a difference, so a
/// comparison with so few samples is undecided, not "same". (Identical values can go lower: the tie
/// correction shrinks the variance. Timings are continuous measurements, and a bound that counted on
/// ties would call 10 vs 2 samples decidable at alpha 0.01 when distinct timings never reach p < 0.041.)
/// REQUIRES: n_a, n_b >= 1; throws std::invalid_argument otherwise.
[[nodiscard]] double mann_whitney_min_p_value(std::size_t n_a, std::size_t n_b);

/// The fewest samples per side (equal sizes) with which mann_whitney_u can reach p < alpha on distinct
/// values, e.g. 6 for alpha = 0.01 and 4 for alpha = 0.05 [count]. REQUIRES: 0 < alpha < 1; throws
/// std::invalid_argument otherwise.
[[nodiscard]] std::size_t mann_whitney_min_samples(double alpha);

}  // namespace fb::stats
