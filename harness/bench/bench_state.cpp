#include "harness/bench/bench_state.h"

namespace fb::bench {

void bench_state::skip(std::string reason) {
  if (m_skipped) return;  // the first reason is the cause; later ones are consequences
  m_skipped = true;
  m_skip_reason = std::move(reason);
}

std::optional<floor_estimate> bench_state::get_floor(double bandwidth, double peak, double median) const {
  if (m_memory_bytes <= 0.0 && m_flops <= 0.0) return std::nullopt;
  floor_estimate f = make_floor_estimate(m_memory_bytes, m_flops, bandwidth, peak, median);
  f.flop_unit = arithmetic_unit_name(m_unit);
  return f;
}

}  // namespace fb::bench
