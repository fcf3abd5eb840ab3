#include "harness/stats/ratio_interval.h"

#include <algorithm>
#include <random>
#include <stdexcept>

#include "harness/stats/summary.h"

namespace fb::stats {
namespace {

/// Uniform index in [0, n) from one 64-bit draw; the modulo bias is below n / 2^64, i.e. nil.
std::size_t draw_index(std::mt19937_64& rng, std::size_t n) { return static_cast<std::size_t>(rng() % n); }

double resampled_median(const std::vector<double>& source, std::vector<double>& scratch, std::mt19937_64& rng) {
  for (double& x : scratch) x = source[draw_index(rng, source.size())];
  const std::size_t n = scratch.size();
  const auto mid = scratch.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(scratch.begin(), mid, scratch.end());
  if (n % 2 == 1) return *mid;
  return (*mid + *std::max_element(scratch.begin(), mid)) / 2.0;
}

}  // namespace

ratio_estimate ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                              const bootstrap_settings& settings) {
  if (a.empty() || b.empty()) throw std::invalid_argument("ratio_interval: both samples must be non-empty");
  if (settings.resamples < 1) throw std::invalid_argument("ratio_interval: resamples must be >= 1");
  if (!(settings.confidence > 0.0 && settings.confidence < 1.0))
    throw std::invalid_argument("ratio_interval: confidence must lie in (0, 1)");

  ratio_estimate result;
  result.ratio = median(a) / median(b);

  std::mt19937_64 rng(settings.seed);
  std::vector<double> scratch_a(a.size());
  std::vector<double> scratch_b(b.size());
  std::vector<double> ratios(static_cast<std::size_t>(settings.resamples));
  for (double& r : ratios) {
    const double median_a = resampled_median(a, scratch_a, rng);
    r = median_a / resampled_median(b, scratch_b, rng);
  }
  const double tail = (1.0 - settings.confidence) / 2.0 * 100.0;
  result.low = percentile(ratios, tail);
  result.high = percentile(std::move(ratios), 100.0 - tail);
  return result;
}

}  // namespace fb::stats
