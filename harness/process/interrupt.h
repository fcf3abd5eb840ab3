#pragma once
/// Stopping a run (bench, verify, a fan-out of shard processes) cleanly on SIGINT or SIGTERM. The handler only records the signal (a
/// sig_atomic_t store, async-signal-safe); the run polls stop_signal() between cases and after
/// every timed sample, then marks the results file incomplete and returns. Torch-free.
#include <memory>
#include <stdexcept>
#include <string>

namespace fb {

/// Installs the SIGINT and SIGTERM handlers while it lives and restores the previous ones after.
/// Made at the start of a command (before its plug-ins load), so that a signal that arrives before
/// the first case still stops the run with its file written (0 cases, marked incomplete). A guard
/// made while another lives (a fan-out inside such a command) changes nothing and keeps the signal
/// recorded so far.
/// The first SIGINT or SIGTERM asks the run to stop after its current case. A second SIGINT does not
/// kill it either: the run still finishes that case and writes its table and files whole, marked
/// incomplete (the handler says so on stderr). The third SIGINT gets the default action, so a run
/// stuck inside one long call can still be killed, except while a final_writes_guard lives. SIGTERM
/// is never fatal: `timeout` delivers its SIGTERM twice (to the child and to its process group), and
/// the run must still write what finished (a box that must kill sends SIGKILL after its grace period).
class interrupt_guard {
 public:
  /// The SIGINT that kills the run (the first asks it to stop, the second is told it is stopping).
  static constexpr int sigints_to_kill = 3;

  /// Clears any recorded signal and installs the handlers (unless nested). Throws std::runtime_error if sigaction fails.
  interrupt_guard();
  ~interrupt_guard();
  interrupt_guard(const interrupt_guard&) = delete;
  interrupt_guard& operator=(const interrupt_guard&) = delete;

 private:
  struct saved;
  std::unique_ptr<saved> m_saved;  // previous handlers, restored by the destructor; null when nested
};

/// While it lives the run writes its final table and files: no SIGINT kills the process (the third
/// is recorded only), so what it writes to files and to stdout (`--json -`) is whole.
class final_writes_guard {
 public:
  final_writes_guard();
  ~final_writes_guard();
  final_writes_guard(const final_writes_guard&) = delete;
  final_writes_guard& operator=(const final_writes_guard&) = delete;
};

/// The first signal recorded by the handler since the outermost interrupt_guard was made; 0 when none.
[[nodiscard]] int stop_signal();

/// "SIGINT", "SIGTERM", else "signal N".
[[nodiscard]] std::string signal_name(int signal);

/// Thrown inside a run to unwind to the case loop once a stop was requested; never escapes the run (bench::run_bench catches it).
class run_interrupted : public std::runtime_error {
 public:
  /// `signal` is the recorded signal number.
  explicit run_interrupted(int signal);
  /// The recorded signal number.
  [[nodiscard]] int get_signal() const { return m_signal; }

 private:
  int m_signal;
};

}  // namespace fb
