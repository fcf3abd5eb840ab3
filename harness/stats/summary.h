#pragma once
/// Descriptive statistics of timing samples. Every function takes its samples by value or const
/// reference and never reorders the caller's data.
#include <vector>

namespace fb::stats {

/// Median; the mean of the two middle values for an even count. NaN for no samples.
[[nodiscard]] double median(std::vector<double> samples);

/// Percentile with linear interpolation between closest ranks (numpy's default "linear" method):
/// position (n - 1) * percent / 100. NaN for no samples.
/// REQUIRES: 0 <= percent <= 100 [%]; throws std::invalid_argument otherwise.
[[nodiscard]] double percentile(std::vector<double> samples, double percent);

/// Arithmetic mean. NaN for no samples.
[[nodiscard]] double mean(const std::vector<double>& samples);

/// Sample standard deviation (divisor n - 1). 0 for a single sample, NaN for none.
[[nodiscard]] double stdev(const std::vector<double>& samples);

/// Relative standard error of the mean: stdev / sqrt(n) / |mean| [fraction]. +inf for fewer than two
/// samples (no estimate yet, so a repetition policy keeps going) or a zero mean.
[[nodiscard]] double relative_standard_error(const std::vector<double>& samples);

}  // namespace fb::stats
