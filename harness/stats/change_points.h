#pragma once
/// Steps in a series of runs: where the level of a benchmark moved, found by binary segmentation on
/// the runs' log medians and confirmed by a minimum effect plus a Mann-Whitney U test on the samples
/// the runs kept. The method behind `fusebench history` (the README states it and its parameters).
#include <cstddef>
#include <vector>

namespace fb::stats {

/// When a level change counts as a step.
struct change_point_settings {
  double min_effect = 0.05;  ///< the pooled median must move by more than this [fraction of the earlier level]
  double alpha = 0.01;       ///< Mann-Whitney p-value below which before and after differ [probability]
};

/// One step: the level changes between run index-1 and run index.
struct change_point {
  std::size_t index = 0;       ///< first run of the new level (>= 1)
  std::size_t before_first = 0;  ///< first run of the level before (the previous step's index, or 0)
  std::size_t after_end = 0;   ///< one past the last run of the level after (the next step's index, or the run count)
  double before_median = 0.0;  ///< median of the pooled samples of runs [before_first, index)
  double after_median = 0.0;   ///< median of the pooled samples of runs [index, after_end)
  double ratio = 0.0;          ///< after_median / before_median
  double p_value = 1.0;        ///< two-sided Mann-Whitney p-value of the pooled samples, before vs after
};

/// The steps of a series, in run order. `runs[i]` holds the samples of run i (in run order, e.g. by
/// commit). Method:
///  1. Binary segmentation: in a segment of runs, every split k is scored by the CUSUM statistic of
///     the runs' log medians, sqrt(n_l n_r / n) |mean_l - mean_r|; splits are tried best score first,
///     and the first whose pooled samples pass both tests (below) splits the segment; each half is
///     searched again. A segment where no split passes has no step.
///  2. Tests, on the pooled samples of the runs before and after: the ratio of medians leaves
///     [1 - min_effect, 1 + min_effect], and the Mann-Whitney p-value is below alpha.
///  3. Refinement: each step is tested again between its neighbouring steps (the final levels); the
///     step with the largest p-value among those that fail is dropped, until every step passes.
/// A run with no samples may not be passed. Deterministic.
/// REQUIRES: every runs[i] non-empty; min_effect >= 0; 0 < alpha < 1. Throws std::invalid_argument otherwise.
[[nodiscard]] std::vector<change_point> find_change_points(const std::vector<std::vector<double>>& runs,
                                                           const change_point_settings& settings = {});

}  // namespace fb::stats
