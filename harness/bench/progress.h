#pragma once
/// Progress of a bench run: a live line on a terminal, one plain line per case in CI logs.
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace fb::bench {

/// Reports "case i/N  model/config/impl  elapsed 12s  ETA 40s" as each case starts. On a terminal
/// the line is redrawn in place (`\r`, erase to end of line) and cleared by finish(); elsewhere every
/// case gets its own line, because `\r` turns a CI log into one unreadable line.
class progress {
 public:
  /// Seconds since some fixed point [seconds].
  using clock_fn = std::function<double()>;

  /// Writes to stderr, live when stderr is a terminal, with a steady clock.
  explicit progress(std::size_t total);
  /// Writes to `out`, live or not, reading time from `clock`. REQUIRES: `out` outlives this.
  progress(std::size_t total, std::ostream& out, bool live, clock_fn clock);

  /// A case starts; `name` is "model/config_label/implementation".
  void begin_case(std::string_view name);
  /// Clears the live line (carriage return, erase) so later output starts on a clean line and no stale
  /// progress stays on the screen; idempotent.
  void finish();

  /// "12s", "3m05s", "1h02m" [seconds].
  [[nodiscard]] static std::string format_duration(double seconds);
  /// Cases started so far [count].
  [[nodiscard]] std::size_t get_started() const { return m_started; }

 private:
  std::size_t m_total;
  std::size_t m_started = 0;
  std::ostream& m_out;
  bool m_live;
  bool m_line_open = false;
  clock_fn m_clock;
  double m_start_time;
};

}  // namespace fb::bench
