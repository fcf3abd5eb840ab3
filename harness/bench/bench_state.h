#pragma once
/// Everything the runner decides about one config before timing it (cf. nvbench's state): its size,
/// its minimal traffic and work for the roofline floor, the input sets it can afford, the repetition
/// policy, or why it is skipped. The runner fills it once per config and reads every field from it.
#include <cstdint>
#include <optional>
#include <string>

#include "harness/bench/repetition_policy.h"
#include "harness/model/arithmetic_unit.h"
#include "harness/results/results.h"

namespace fb::bench {

/// Counters, plan and skip flag of one config.
class bench_state {
 public:
  /// Elements the case processes, e.g. conv-output elements; the problem size of the charts [count].
  void add_element_count(double n) { m_element_count += n; }
  /// Sum of add_element_count [count].
  [[nodiscard]] double get_element_count() const { return m_element_count; }

  /// Minimal global-memory traffic of the fused algorithm, reads plus writes [bytes].
  void add_global_memory_bytes(double bytes) { m_memory_bytes += bytes; }
  /// Minimal arithmetic of the fused algorithm; an FMA counts 2 [FLOP].
  void add_flops(double n) { m_flops += n; }
  /// The units that arithmetic runs on (whose peak the floor divides by).
  void set_arithmetic_unit(arithmetic_unit u) { m_unit = u; }
  [[nodiscard]] arithmetic_unit get_arithmetic_unit() const { return m_unit; }
  /// Roofline floor from the counters, the device's measured bandwidth [bytes/s] and the peak of the
  /// arithmetic unit [FLOP/s], and the case's median [seconds]; nullopt when nothing was counted.
  [[nodiscard]] std::optional<floor_estimate> get_floor(double bandwidth, double peak, double median) const;

  /// Rotated input sets the config is timed with [count].
  void set_input_sets(int n) { m_input_sets = n; }
  /// [count]
  [[nodiscard]] int get_input_sets() const { return m_input_sets; }

  /// Stopping rule of the timing loop.
  void set_repetition_policy(const repetition_policy& policy) { m_policy = policy; }
  /// Stopping rule of the timing loop.
  [[nodiscard]] const repetition_policy& get_repetition_policy() const { return m_policy; }

  /// Marks the case as not to be timed, e.g. "does not fit in 80 GB"; the first reason is kept.
  void skip(std::string reason);
  /// True after skip().
  [[nodiscard]] bool is_skipped() const { return m_skipped; }
  /// Reason given to skip(); empty when not skipped.
  [[nodiscard]] const std::string& get_skip_reason() const { return m_skip_reason; }

 private:
  double m_element_count = 0.0;
  double m_memory_bytes = 0.0;
  double m_flops = 0.0;
  arithmetic_unit m_unit = arithmetic_unit::fp32_fma;
  int m_input_sets = 1;
  repetition_policy m_policy;
  bool m_skipped = false;
  std::string m_skip_reason;
};

}  // namespace fb::bench
