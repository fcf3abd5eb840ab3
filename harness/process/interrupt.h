#pragma once
/// Stopping a run (bench, verify, a fan-out of shard processes) cleanly on SIGINT or SIGTERM. The handler only records the signal (a
/// sig_atomic_t store, async-signal-safe); the run polls stop_signal() between cases and after
/// every timed sample, then marks the results file incomplete and returns. Torch-free.
#include <memory>
#include <stdexcept>
#include <string>

namespace fb {

/// Installs the SIGINT and SIGTERM handlers while it lives and restores the previous ones after.
/// A second SIGINT gets the default action (SA_RESETHAND), so a run stuck inside one long call can
/// still be killed with a second Ctrl-C; the results file is valid either way. A second SIGTERM does
/// not: `timeout` delivers its SIGTERM twice (to the child and to its process group), and the run
/// must still write what finished (a box that must kill sends SIGKILL after its grace period).
class interrupt_guard {
 public:
  /// Clears any recorded signal and installs the handlers. Throws std::runtime_error if sigaction fails.
  interrupt_guard();
  ~interrupt_guard();
  interrupt_guard(const interrupt_guard&) = delete;
  interrupt_guard& operator=(const interrupt_guard&) = delete;

 private:
  struct saved;
  std::unique_ptr<saved> m_saved;  // previous handlers, restored by the destructor
};

/// The signal recorded by the handler since the last interrupt_guard was made; 0 when none.
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
