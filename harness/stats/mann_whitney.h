#pragma once
/// Two-sided Mann-Whitney U (Wilcoxon rank-sum) test: are two sets of timings drawn from the same
/// distribution? Rank-based, so one slow outlier repetition cannot fake a regression.
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

}  // namespace fb::stats
