#include "harness/process/interrupt.h"

#include <cerrno>
#include <csignal>
#include <cstring>

namespace fb {
namespace {

// The only state the handler touches: a store to a volatile sig_atomic_t is all POSIX allows a
// handler to do with shared data without races or non-reentrant calls.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void record_stop_signal(int signal) { g_stop_signal = signal; }

constexpr int handled[] = {SIGINT, SIGTERM};

}  // namespace

struct interrupt_guard::saved {
  struct sigaction previous[2];
};

interrupt_guard::interrupt_guard() : m_saved(std::make_unique<saved>()) {
  g_stop_signal = 0;
  struct sigaction action {};
  action.sa_handler = record_stop_signal;
  sigemptyset(&action.sa_mask);
  // SIGINT with SA_RESETHAND: a second Ctrl-C kills as usual. SIGTERM without: `timeout` (a time
  // box) sends its SIGTERM to the child and again to the whole process group, so one box can
  // deliver two; the second must not kill the run before it writes what finished (a box that
  // wants it dead sends SIGKILL after its grace period: `timeout -k`). No SA_RESTART is needed: the
  // runner does not block in interruptible system calls it would have to resume.
  for (int i = 0; i < 2; ++i) {
    action.sa_flags = handled[i] == SIGINT ? SA_RESETHAND : 0;
    if (::sigaction(handled[i], &action, &m_saved->previous[i]) != 0) {
      const int err = errno;
      for (int k = 0; k < i; ++k) ::sigaction(handled[k], &m_saved->previous[k], nullptr);
      throw std::runtime_error(std::string("cannot install the signal handlers: ") + std::strerror(err));
    }
  }
}

interrupt_guard::~interrupt_guard() {
  for (int i = 0; i < 2; ++i) ::sigaction(handled[i], &m_saved->previous[i], nullptr);
}

int stop_signal() { return g_stop_signal; }

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

run_interrupted::run_interrupted(int signal)
    : std::runtime_error("interrupted by " + signal_name(signal)), m_signal(signal) {}

}  // namespace fb
