#include "harness/stats/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace fb::stats {

mann_whitney_result mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) throw std::invalid_argument("mann_whitney_u: both samples must be non-empty");
  const double n_a = static_cast<double>(a.size());
  const double n_b = static_cast<double>(b.size());
  const double n = n_a + n_b;

  // Pool with a membership flag, sort, and give each run of ties its average rank.
  std::vector<std::pair<double, bool>> pooled;
  pooled.reserve(a.size() + b.size());
  for (double x : a) pooled.emplace_back(x, true);
  for (double x : b) pooled.emplace_back(x, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& l, const auto& r) { return l.first < r.first; });

  double rank_sum_a = 0.0;
  double tie_term = 0.0;  // sum over tie groups of t^3 - t
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_a += average_rank;
    tie_term += t * t * t - t;
    i = j;
  }

  mann_whitney_result result;
  result.u = rank_sum_a - n_a * (n_a + 1.0) / 2.0;
  const double mean_u = n_a * n_b / 2.0;
  const double variance = n_a * n_b / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
  if (!(variance > 0.0)) {  // every value tied (or n == 1): no evidence of any difference
    result.z = 0.0;
    result.p_value = 1.0;
    return result;
  }
  // Continuity correction: U moves in steps of 1/2 at least, so shrink |U - mean| by 1/2.
  result.z = (std::abs(result.u - mean_u) - 0.5) / std::sqrt(variance);
  result.p_value = std::min(1.0, std::erfc(result.z / std::sqrt(2.0)));
  return result;
}

double mann_whitney_min_p_value(std::size_t n_a, std::size_t n_b) {
  if (n_a == 0 || n_b == 0) throw std::invalid_argument("mann_whitney_min_p_value: both counts must be >= 1");
  // Computed by the test itself rather than by a closed form, so the bound can never drift from it.
  std::vector<double> a(n_a);
  std::vector<double> b(n_b);
  for (std::size_t i = 0; i < n_a; ++i) a[i] = static_cast<double>(i);
  for (std::size_t i = 0; i < n_b; ++i) b[i] = static_cast<double>(n_a + i);
  return mann_whitney_u(a, b).p_value;
}

std::size_t mann_whitney_min_samples(double alpha) {
  if (!(alpha > 0.0 && alpha < 1.0))
    throw std::invalid_argument("mann_whitney_min_samples: alpha must lie in (0, 1), got " + std::to_string(alpha));
  // z grows like sqrt(3n/2), so even alpha = 1e-300 needs only about a thousand samples.
  constexpr std::size_t limit = 1u << 20;
  for (std::size_t n = 1; n < limit; ++n)
    if (mann_whitney_min_p_value(n, n) < alpha) return n;
  throw std::invalid_argument("mann_whitney_min_samples: alpha " + std::to_string(alpha) + " is out of reach");
}

}  // namespace fb::stats
