#include "harness/stats/change_points.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "harness/stats/mann_whitney.h"
#include "harness/stats/summary.h"

namespace fb::stats {
namespace {

/// Samples of runs [first, end) in one vector.
std::vector<double> pooled(const std::vector<std::vector<double>>& runs, std::size_t first, std::size_t end) {
  std::vector<double> all;
  for (std::size_t i = first; i < end; ++i) all.insert(all.end(), runs[i].begin(), runs[i].end());
  return all;
}

/// The step between levels [first, index) and [index, end), measured.
change_point measure(const std::vector<std::vector<double>>& runs, std::size_t first, std::size_t index,
                     std::size_t end) {
  const std::vector<double> before = pooled(runs, first, index);
  const std::vector<double> after = pooled(runs, index, end);
  change_point step;
  step.index = index;
  step.before_first = first;
  step.after_end = end;
  step.before_median = median(before);
  step.after_median = median(after);
  step.ratio = step.after_median / step.before_median;
  step.p_value = mann_whitney_u(before, after).p_value;
  return step;
}

bool passes(const change_point& step, const change_point_settings& settings) {
  const bool large = step.ratio > 1.0 + settings.min_effect || step.ratio < 1.0 - settings.min_effect;
  return large && step.p_value < settings.alpha;
}

/// Binary segmentation of [first, end): appends the accepted split points to `found`.
void segment(const std::vector<std::vector<double>>& runs, const std::vector<double>& log_medians, std::size_t first,
             std::size_t end, const change_point_settings& settings, std::vector<std::size_t>& found) {
  if (end - first < 2) return;
  // CUSUM score of every split, from prefix sums of the log medians.
  std::vector<std::pair<double, std::size_t>> scored;
  const double total = std::accumulate(log_medians.begin() + first, log_medians.begin() + end, 0.0);
  const double n = static_cast<double>(end - first);
  double left_sum = 0.0;
  for (std::size_t k = first + 1; k < end; ++k) {
    left_sum += log_medians[k - 1];
    const double n_left = static_cast<double>(k - first);
    const double n_right = n - n_left;
    const double gap = std::abs(left_sum / n_left - (total - left_sum) / n_right);
    scored.emplace_back(std::sqrt(n_left * n_right / n) * gap, k);
  }
  // Best score first; equal scores in run order, so the result never depends on the sort's whims.
  std::sort(scored.begin(), scored.end(), [](const auto& l, const auto& r) {
    return l.first != r.first ? l.first > r.first : l.second < r.second;
  });
  for (const auto& [score, k] : scored) {
    if (!passes(measure(runs, first, k, end), settings)) continue;
    found.push_back(k);
    segment(runs, log_medians, first, k, settings, found);
    segment(runs, log_medians, k, end, settings, found);
    return;
  }
}

}  // namespace

std::vector<change_point> find_change_points(const std::vector<std::vector<double>>& runs,
                                             const change_point_settings& settings) {
  if (!(settings.min_effect >= 0.0))
    throw std::invalid_argument("find_change_points: min_effect must be >= 0");
  if (!(settings.alpha > 0.0 && settings.alpha < 1.0))
    throw std::invalid_argument("find_change_points: alpha must lie in (0, 1)");
  std::vector<double> log_medians;
  log_medians.reserve(runs.size());
  for (const std::vector<double>& samples : runs) {
    if (samples.empty()) throw std::invalid_argument("find_change_points: a run without samples");
    const double m = median(samples);
    // Times are > 0; a zero median (a no-op measured as 0 s) still needs a finite log.
    log_medians.push_back(std::log(std::max(m, 1e-300)));
  }

  std::vector<std::size_t> splits;
  segment(runs, log_medians, 0, runs.size(), settings, splits);
  std::sort(splits.begin(), splits.end());

  // Refinement against the final levels: a step found inside a wide segment may not hold between its
  // neighbours once both sides are split further.
  for (;;) {
    std::vector<change_point> steps;
    for (std::size_t i = 0; i < splits.size(); ++i) {
      const std::size_t first = i == 0 ? 0 : splits[i - 1];
      const std::size_t end = i + 1 == splits.size() ? runs.size() : splits[i + 1];
      steps.push_back(measure(runs, first, splits[i], end));
    }
    std::size_t weakest = steps.size();
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (passes(steps[i], settings)) continue;
      if (weakest == steps.size() || steps[i].p_value > steps[weakest].p_value ||
          (steps[i].p_value == steps[weakest].p_value &&
           std::abs(std::log(steps[i].ratio)) < std::abs(std::log(steps[weakest].ratio))))
        weakest = i;
    }
    if (weakest == steps.size()) return steps;
    splits.erase(splits.begin() + static_cast<std::ptrdiff_t>(weakest));
  }
}

}  // namespace fb::stats
