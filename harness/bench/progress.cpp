#include "harness/bench/progress.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "harness/format/live_line.h"

namespace fb::bench {
namespace {
double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

progress::progress(std::size_t total) : progress(total, std::cerr, ::isatty(STDERR_FILENO) != 0, steady_seconds) {}

progress::progress(std::size_t total, std::ostream& out, bool live, clock_fn clock)
    : m_total(total), m_out(out), m_live(live), m_clock(std::move(clock)), m_start_time(m_clock()) {}

void progress::begin_case(std::string_view name) {
  ++m_started;
  const double elapsed = m_clock() - m_start_time;
  const std::size_t done = m_started - 1;
  // The ETA extrapolates the mean time per finished case; with none finished there is no estimate.
  const std::string eta = done == 0 ? std::string("?")
                                    : format_duration(elapsed / static_cast<double>(done) *
                                                      static_cast<double>(m_total - std::min(done, m_total)));
  const std::string line = fmt::format("case {}/{}  {}  elapsed {}  ETA {}", m_started, m_total, name,
                                       format_duration(elapsed), eta);
  if (m_live) {
    m_out << format::redrawn_line(line);
    m_line_open = true;
  } else {
    fmt::print(m_out, "{}\n", line);
  }
  m_out.flush();
}

void progress::finish() {
  if (m_live && m_line_open) m_out << format::cleared_line;  // the line goes: no stale progress above what follows
  m_line_open = false;
  m_out.flush();
}

std::string progress::format_duration(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

}  // namespace fb::bench
