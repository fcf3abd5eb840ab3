#pragma once
/// Wall-clock timer for CPU-only runs (host executors, CPU libtorch): the twin of cuda_timer in
/// device_timing.h, with the same start/stop/get_elapsed shape.
#include <chrono>

namespace fb::bench {

/// std::chrono::steady_clock timer: monotonic, so NTP adjustments cannot produce negative times.
class host_timer {
 public:
  /// Records the start time.
  void start();
  /// Records the stop time.
  void stop();
  /// Time between the last start() and stop() [seconds].
  [[nodiscard]] double get_elapsed() const;

 private:
  std::chrono::steady_clock::time_point m_start{};
  std::chrono::steady_clock::time_point m_stop{};
};

}  // namespace fb::bench
