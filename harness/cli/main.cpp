/// fusebench: parse, dispatch. Each subcommand lives in its own file (harness/cli/<name>.cpp).
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "harness/bench/build_info.h"
#include "harness/cli/commands.h"

namespace {

/// The first argument that is not an option: the subcommand the user meant, if any.
const char* first_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return argv[i];
  return nullptr;
}

/// A crash (a bug: fusebench never means to crash) says so in one line, then the backtrace, then dies
/// of the same signal, so the exit status stays the signal's. Only async-signal-safe calls after the
/// first line but backtrace(), which is primed at install time (its first call may load libgcc).
void on_crash(int sig) {
  const char* name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE" : "SIGILL";
  const char* parts[] = {"fusebench: internal error: ", name, " (a bug in fusebench; please report it with the "
                         "command line and the backtrace below)\n"};
  for (const char* p : parts) (void)!::write(STDERR_FILENO, p, std::strlen(p));
  void* frames[64];
  ::backtrace_symbols_fd(frames, ::backtrace(frames, 64), STDERR_FILENO);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_crash_handler() {
  void* prime[1];
  (void)::backtrace(prime, 1);
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) ::signal(sig, on_crash);
}

}  // namespace

int main(int argc, char** argv) {
  install_crash_handler();
  CLI::App app{"fusebench: verification and benchmarking harness for fused CUDA kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] { return fb::bench::version_text(fb::bench::describe_build()); },
                       "Print the version, git commit, libtorch and CUDA runtime, then exit");
  fb::cli::command_action run;
  fb::cli::add_list_command(app, run);
  fb::cli::add_verify_command(app, run);
  fb::cli::add_bench_command(app, run);
  fb::cli::add_report_command(app, run);
  fb::cli::add_compare_command(app, run);
  fb::cli::add_merge_command(app, run);

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
