#pragma once
/// What a model's bench code reports about a case (cf. nvbench state): its traffic and work for the
/// roofline floor, or why it was skipped. The timing loop reads it; model code never times itself.
#include <cstdint>
#include <optional>
#include <string>

#include "harness/bench/repetition_policy.h"
#include "harness/results/results.h"

namespace fb::bench {

/// Counters and skip flag of one case, plus the repetition policy it is timed with.
class bench_state {
 public:
  /// Elements the case processes, e.g. conv-output elements; the problem size of the charts [count].
  void add_element_count(std::int64_t n) { m_element_count += n; }

  /// Minimal global-memory reads of the fused algorithm: n values of T [count].
  template <typename T>
  void add_global_memory_reads(std::int64_t n) {
    m_read_bytes += static_cast<double>(n) * static_cast<double>(sizeof(T));
  }

  /// Minimal global-memory writes of the fused algorithm: n values of T [count].
  template <typename T>
  void add_global_memory_writes(std::int64_t n) {
    m_write_bytes += static_cast<double>(n) * static_cast<double>(sizeof(T));
  }

  /// Minimal arithmetic of the fused algorithm; an FMA counts 2 [FLOP].
  void add_flops(double n) { m_flops += n; }

  /// Marks the case as not to be timed, e.g. "does not fit in 80 GB"; the first reason is kept.
  void skip(std::string reason);

  /// True after skip().
  [[nodiscard]] bool is_skipped() const { return m_skipped; }
  /// Reason given to skip(); empty when not skipped.
  [[nodiscard]] const std::string& get_skip_reason() const { return m_skip_reason; }
  /// Sum of add_element_count [count].
  [[nodiscard]] std::int64_t get_element_count() const { return m_element_count; }
  /// Sum of add_global_memory_reads [bytes].
  [[nodiscard]] double get_global_memory_read_bytes() const { return m_read_bytes; }
  /// Sum of add_global_memory_writes [bytes].
  [[nodiscard]] double get_global_memory_write_bytes() const { return m_write_bytes; }
  /// Reads plus writes [bytes].
  [[nodiscard]] double get_global_memory_bytes() const { return m_read_bytes + m_write_bytes; }
  /// Sum of add_flops [FLOP].
  [[nodiscard]] double get_flops() const { return m_flops; }

  /// Stopping rule of the timing loop.
  [[nodiscard]] const repetition_policy& get_repetition_policy() const { return m_policy; }
  /// Replaces the stopping rule.
  void set_repetition_policy(const repetition_policy& policy) { m_policy = policy; }

  /// Roofline floor from the counters, the device's measured bandwidth [bytes/s] and peak [FLOP/s],
  /// and the case's median [seconds]; nullopt when nothing was counted.
  [[nodiscard]] std::optional<floor_estimate> get_floor(double bandwidth, double peak, double median) const;

 private:
  std::int64_t m_element_count = 0;
  double m_read_bytes = 0.0;
  double m_write_bytes = 0.0;
  double m_flops = 0.0;
  bool m_skipped = false;
  std::string m_skip_reason;
  repetition_policy m_policy;
};

}  // namespace fb::bench
