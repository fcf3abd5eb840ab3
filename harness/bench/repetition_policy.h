#pragma once
/// When to stop timing a case: enough samples for a stable median, within a time budget.
#include <cstddef>
#include <vector>

namespace fb::bench {

/// Stopping rule of the timed repetitions (SPEC 3: repeat until the relative standard error is
/// under 1% or a time cap is reached).
struct repetition_policy {
  std::size_t min_samples = 10;    ///< always take at least this many, whatever the time [count]
  std::size_t max_samples = 1000;  ///< never more [count]
  double min_time = 0.0;           ///< keep going until this much was timed, even if stable [seconds]
  double time_cap = 2.0;           ///< stop after this much timed time, even if noisy [seconds]
  double target_rse = 0.01;        ///< stop once stdev / sqrt(n) / mean is below this [fraction]

  /// True while another repetition is needed, given the samples so far [seconds] and the time spent
  /// on them [seconds]. Order: below min_samples -> more; at max_samples or time_cap -> stop; below
  /// min_time -> more; else more only while the relative standard error exceeds target_rse.
  [[nodiscard]] bool want_more(const std::vector<double>& samples, double elapsed) const;
};

}  // namespace fb::bench
