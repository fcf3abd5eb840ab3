#include "harness/bench/repetition_policy.h"

#include "harness/stats/summary.h"

namespace fb::bench {

bool repetition_policy::want_more(const std::vector<double>& samples, double elapsed) const {
  // min_samples beats the cap: a median of fewer samples would be reported as if it were stable.
  if (samples.size() < min_samples) return true;
  if (samples.size() >= max_samples || elapsed >= time_cap) return false;
  if (elapsed < min_time) return true;
  return stats::relative_standard_error(samples) > target_rse;
}

}  // namespace fb::bench
