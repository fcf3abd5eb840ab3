#include "harness/process/interrupt.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace fb {
namespace {

// The only state the handler touches: stores and loads of volatile sig_atomic_t are all POSIX allows
// a handler to do with shared data without races or non-reentrant calls.
volatile std::sig_atomic_t g_stop_signal = 0;   // the first SIGINT or SIGTERM since the outermost guard
volatile std::sig_atomic_t g_sigint_count = 0;  // SIGINTs since the outermost guard
volatile std::sig_atomic_t g_writing = 0;       // a final_writes_guard lives: no SIGINT kills now
int g_depth = 0;                                 // interrupt_guards alive (main thread only)

// What a person pressing Ctrl-C again is told (write(2) is async-signal-safe; fmt is not).
constexpr char second_sigint_text[] =
    "fusebench: still stopping: the case in progress finishes, then the finished cases are written, marked "
    "incomplete; a third Ctrl-C kills it without writing them\n";

extern "C" void record_stop_signal(int signal) {
  const int saved_errno = errno;  // a handler must leave errno as it found it
  if (g_stop_signal == 0) g_stop_signal = signal;
  if (signal == SIGINT) {
    g_sigint_count = g_sigint_count + 1;
    if (g_sigint_count == interrupt_guard::sigints_to_kill && g_writing == 0) {
      // The user insists: a run stuck inside one long call must still die. Default action, then the
      // signal again; it is delivered as this handler returns (SIGINT is blocked while it runs).
      struct sigaction default_action {};
      default_action.sa_handler = SIG_DFL;
      sigemptyset(&default_action.sa_mask);
      ::sigaction(SIGINT, &default_action, nullptr);
      ::raise(SIGINT);
    } else if (g_sigint_count == 2) {
      [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, second_sigint_text, sizeof second_sigint_text - 1);
    }
  }
  errno = saved_errno;
}

constexpr int handled[] = {SIGINT, SIGTERM};

}  // namespace

struct interrupt_guard::saved {
  struct sigaction previous[2];
};

interrupt_guard::interrupt_guard() {
  // Nested (a fan-out inside a command that guards from its start): the outer guard's handlers stay,
  // and so does a signal it recorded, which must still stop the run (it came before the first case).
  if (g_depth++ > 0) return;
  m_saved = std::make_unique<saved>();
  g_stop_signal = 0;
  g_sigint_count = 0;
  struct sigaction action {};
  action.sa_handler = record_stop_signal;
  sigemptyset(&action.sa_mask);
  // No SA_RESETHAND: a second Ctrl-C must not kill the run while it finishes its case and writes its
  // files (the handler lets the third kill). SIGTERM is never fatal here: `timeout` (a time box) sends
  // its SIGTERM to the child and again to the whole process group, so one box can deliver two; a box
  // that wants the run dead sends SIGKILL after its grace period (`timeout -k`). No SA_RESTART is
  // needed: the runner does not block in interruptible system calls it would have to resume.
  action.sa_flags = 0;
  for (int i = 0; i < 2; ++i) {
    if (::sigaction(handled[i], &action, &m_saved->previous[i]) != 0) {
      const int err = errno;
      for (int k = 0; k < i; ++k) ::sigaction(handled[k], &m_saved->previous[k], nullptr);
      --g_depth;
      throw std::runtime_error(std::string("cannot install the signal handlers: ") + std::strerror(err));
    }
  }
}

interrupt_guard::~interrupt_guard() {
  --g_depth;
  if (!m_saved) return;
  for (int i = 0; i < 2; ++i) ::sigaction(handled[i], &m_saved->previous[i], nullptr);
}

final_writes_guard::final_writes_guard() { g_writing = 1; }

final_writes_guard::~final_writes_guard() { g_writing = 0; }

int stop_signal() { return g_stop_signal; }

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

run_interrupted::run_interrupted(int signal)
    : std::runtime_error("interrupted by " + signal_name(signal)), m_signal(signal) {}

}  // namespace fb
