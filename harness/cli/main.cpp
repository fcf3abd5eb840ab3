/// fusebench: parse, dispatch. Each subcommand lives in its own file (harness/cli/<name>.cpp).
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "harness/process/build_info.h"
#include "harness/cli/commands.h"

namespace {

/// The first argument that is not an option: the subcommand the user meant, if any.
const char* first_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return argv[i];
  return nullptr;
}

/// Writes text to stderr (async-signal-safe).
void write_err(const char* text) { (void)!::write(STDERR_FILENO, text, std::strlen(text)); }

/// Writes "<label>0x<hex>" to stderr (async-signal-safe: no allocation, no stdio).
void write_hex(const char* label, std::uintptr_t value) {
  char digits[2 + 2 * sizeof value + 1];
  int n = 0;
  digits[n++] = '0';
  digits[n++] = 'x';
  for (int shift = 4 * static_cast<int>(2 * sizeof value) - 4; shift >= 0; shift -= 4)
    digits[n++] = "0123456789abcdef"[(value >> shift) & 0xf];
  digits[n] = '\0';
  write_err(label);
  write_err(digits);
}

/// Writes "<label>0x<addr> in <module> + 0x<offset> (<symbol>)" to stderr; false when no loaded
/// module holds addr. dladdr is not async-signal-safe; it runs only on the way to dying.
bool write_place(const char* label, std::uintptr_t addr) {
  write_hex(label, addr);
  Dl_info where{};
  if (::dladdr(reinterpret_cast<void*>(addr), &where) == 0 || where.dli_fname == nullptr) {
    write_err(" (in no loaded module)\n");
    return false;
  }
  write_err(" in ");
  write_err(where.dli_fname);
  write_hex(" + ", addr - reinterpret_cast<std::uintptr_t>(where.dli_fbase));
  if (where.dli_sname != nullptr) {
    write_err(" (");
    write_err(where.dli_sname);
    write_err(")");
  }
  write_err("\n");
  return true;
}

/// A crash (a bug: fusebench never means to crash) says so in one line, then where it happened, then
/// the backtrace, then dies of the same signal, so the exit status stays the signal's. "Where": the
/// faulting address, the interrupted instruction and the module holding it (dladdr), and whether the
/// crashing thread is the main one. The backtrace alone stops at the signal frame when the
/// interrupted code has no unwind information (the --devices parent on an H100, 2026-11-23), and
/// then the instruction's module is the one clue. Only async-signal-safe calls before dladdr and
/// backtrace() (primed at install time: its first call may load libgcc).
void on_crash(int sig, siginfo_t* info, void* context) {
  const char* name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE" : "SIGILL";
  write_err("fusebench: internal error: ");
  write_err(name);
  write_err(" (a bug in fusebench; please report it with the command line and the lines below)\n");
  if (info != nullptr && (info->si_code == SI_USER || info->si_code == SI_TKILL))
    write_err("  sent by a process (kill), no fault address");
  else
    write_hex("  fault address ", reinterpret_cast<std::uintptr_t>(info != nullptr ? info->si_addr : nullptr));
  write_err(::gettid() == ::getpid() ? ", main thread\n" : ", not the main thread\n");
#if defined(__x86_64__)
  const auto* uc = static_cast<const ucontext_t*>(context);
  const auto ip = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  if (!write_place("  instruction ", ip)) {
    // A jump to no code (a call through a null or stale function pointer): the call's return
    // address is still the word at the stack's top, and it names the caller.
    const auto sp = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
    write_place("  called from (the word at the stack's top) ", *reinterpret_cast<const std::uintptr_t*>(sp));
  }
#else
  (void)context;
#endif
  void* frames[64];
  ::backtrace_symbols_fd(frames, ::backtrace(frames, 64), STDERR_FILENO);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_crash_handler() {
  void* prime[1];
  (void)::backtrace(prime, 1);
  struct sigaction action {};
  action.sa_sigaction = on_crash;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) ::sigaction(sig, &action, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  install_crash_handler();
  CLI::App app{"fusebench: verification and benchmarking harness for fused CUDA kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] { return fb::version_text(fb::describe_build()); },
                       "Print the version, git commit, libtorch and CUDA runtime, then exit");
  fb::cli::command_action run;
  fb::cli::add_list_command(app, run);
  fb::cli::add_verify_command(app, run);
  fb::cli::add_bench_command(app, run);
  fb::cli::add_report_command(app, run);
  fb::cli::add_compare_command(app, run);
  fb::cli::add_merge_command(app, run);
  fb::cli::add_history_command(app, run);

  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  // CLI11 answers a misspelt subcommand with "A subcommand is required", which does not even name the word.
  if (const char* word = first_word(argc, argv);
      word != nullptr && std::find(names.begin(), names.end(), word) == names.end()) {
    const std::string nearest = fb::cli::nearest_word(word, names);
    fb::cli::print_error(fmt::format("unknown subcommand '{}'{} (subcommands: {})", word,
                                     nearest.empty() ? std::string() : fmt::format("; did you mean '{}'?", nearest),
                                     fmt::join(names, ", ")));
    return fb::cli::exit_usage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other usage error; CLI11's own exit() adds a second.
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : app.get_subcommands()) sub = s;
    fb::cli::print_error(fmt::format("{} (see 'fusebench{} --help')", e.what(),
                                     sub != nullptr ? " " + sub->get_name() : std::string()));
    return fb::cli::exit_usage;
  }
  return run();
}
