#pragma once
/// Ratio of two medians with a percentile-bootstrap confidence interval: how a speedup is reported.
#include <cstdint>
#include <vector>

namespace fb::stats {

/// A ratio of medians and its interval.
struct ratio_estimate {
  double ratio = 0.0;  ///< median(a) / median(b)
  double low = 0.0;    ///< lower end of the interval
  double high = 0.0;   ///< upper end of the interval
};

/// Settings of ratio_interval.
struct bootstrap_settings {
  int resamples = 2000;                               ///< bootstrap resamples [count]
  double confidence = 0.95;                           ///< two-sided coverage [fraction]
  std::uint64_t seed = 0x5eed'f00d'cafe'b0baULL;      ///< fixed, so a report is reproducible
};

/// median(a) / median(b) with a percentile-bootstrap interval: a and b are resampled independently
/// with replacement (std::mt19937_64 from settings.seed, indices drawn without std distributions, whose
/// output differs between standard libraries), and the interval is the (1-c)/2 and (1+c)/2
/// percentiles of the resampled ratios. Deterministic for a given input and seed.
/// REQUIRES: a and b non-empty; throws std::invalid_argument otherwise.
[[nodiscard]] ratio_estimate ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                                            const bootstrap_settings& settings = {});

}  // namespace fb::stats
