#include "harness/stats/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace fb::stats {
namespace {
constexpr double nan = std::numeric_limits<double>::quiet_NaN();
}  // namespace

double median(std::vector<double> samples) { return percentile(std::move(samples), 50.0); }

double percentile(std::vector<double> samples, double percent) {
  if (!(percent >= 0.0 && percent <= 100.0))  // also rejects NaN
    throw std::invalid_argument("percentile: percent must lie in [0, 100], got " + std::to_string(percent));
  if (samples.empty()) return nan;
  const double position = static_cast<double>(samples.size() - 1) * percent / 100.0;
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const double fraction = position - static_cast<double>(lower);
  // Two selections instead of a sort: O(n), and the upper neighbour is the minimum of the tail.
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(lower), samples.end());
  const double low_value = samples[lower];
  if (fraction == 0.0 || lower + 1 >= samples.size()) return low_value;
  const double high_value = *std::min_element(samples.begin() + static_cast<std::ptrdiff_t>(lower) + 1, samples.end());
  return low_value + fraction * (high_value - low_value);
}

double mean(const std::vector<double>& samples) {
  if (samples.empty()) return nan;
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

double stdev(const std::vector<double>& samples) {
  if (samples.empty()) return nan;
  if (samples.size() == 1) return 0.0;
  const double m = mean(samples);
  double sum_sq = 0.0;
  for (double x : samples) sum_sq += (x - m) * (x - m);  // two passes: no E[x^2]-E[x]^2 cancellation
  return std::sqrt(sum_sq / static_cast<double>(samples.size() - 1));
}

double relative_standard_error(const std::vector<double>& samples) {
  if (samples.size() < 2) return std::numeric_limits<double>::infinity();
  const double m = std::abs(mean(samples));
  if (m == 0.0) return std::numeric_limits<double>::infinity();
  return stdev(samples) / std::sqrt(static_cast<double>(samples.size())) / m;
}

}  // namespace fb::stats
