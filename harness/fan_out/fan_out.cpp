#include "harness/fan_out/fan_out.h"

#include <csignal>
#include <cstdlib>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "harness/format/live_line.h"
#include "harness/process/exit_status.h"
#include "harness/process/interrupt.h"

namespace fb::fan_out {

device_plan plan_devices(const std::string& devices, int per_device, const std::optional<device_kind>& device_given,
                         const std::string& one_run_is) {
  device_plan plan;
  plan.slots = parse_devices(devices, cuda_device_count(), std::getenv("CUDA_VISIBLE_DEVICES"));
  plan.device = plan.slots.front().cpu ? device_kind::cpu : device_kind::cuda;
  if (device_given && *device_given != plan.device)
    throw std::invalid_argument(fmt::format("--devices {} runs on {}, but --device says {}", devices,
                                            to_string(plan.device), to_string(*device_given)));
  for (const device_slot& s : plan.slots)
    if (!s.cpu && cuda_device_name(s.gpu) != cuda_device_name(plan.slots.front().gpu))
      throw std::invalid_argument(fmt::format("--devices {}: GPU {} is a {} but GPU {} is a {}; one {} is of one kind of GPU",
                                              devices, plan.slots.front().gpu,
                                              cuda_device_name(plan.slots.front().gpu), s.gpu,
                                              cuda_device_name(s.gpu), one_run_is));
  plan.slots = per_device_slots(plan.slots, per_device);
  return plan;
}

device_slot own_device_slot(const std::string& label, device_kind device) {
  device_slot slot;
  slot.label = label;
  slot.cpu = device == device_kind::cpu;
  if (!slot.cpu) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    const std::string list = visible != nullptr && *visible != '\0' ? visible : "0";
    slot.cuda_visible_devices = list.substr(0, list.find(','));
    slot.gpu = 0;
  }
  return slot;
}

std::string crash_message(int signal) {
  const char* name = signal == SIGSEGV ? ", SIGSEGV" : signal == SIGABRT ? ", SIGABRT" : signal == SIGBUS ? ", SIGBUS"
                     : signal == SIGFPE ? ", SIGFPE" : signal == SIGILL ? ", SIGILL" : "";
  return fmt::format("crashed (signal {}{})", signal, name);
}

std::vector<std::string> shard_arguments(const std::string& subcommand, device_kind device, uint64_t seed,
                                         const shard_spec& piece) {
  return {subcommand, "--device", std::string(to_string(device)), "--seed", std::to_string(seed),
          "--shard",  to_string(piece)};
}

void append_models(std::vector<std::string>& args, const std::vector<std::string>& models) {
  if (models.empty()) return;
  args.push_back("--model");
  args.insert(args.end(), models.begin(), models.end());
}

fan_out_run run_on_devices(const std::vector<device_slot>& slots, const shard_spec& outer,
                           const std::string& scratch_parent, const std::string& prefix,
                           const argument_maker& arguments, const line_hook& hook) {
  fan_out_run run;
  run.scratch = make_scratch_folder(scratch_parent, prefix);
  for (std::size_t d = 0; d < slots.size(); ++d) {
    const shard_spec piece = sub_shard(outer, static_cast<int>(d), static_cast<int>(slots.size()));
    run.outputs.push_back(
        (std::filesystem::path(run.scratch) / fmt::format("shard-{}-of-{}", piece.index, piece.count)).string());
    run.processes.push_back({slots[d], piece, arguments(piece, run.outputs.back())});
  }
  // A Ctrl-C or SIGTERM is passed on to the children (their own process group does not get it); the
  // caller then merges what they finished or cleans up after them.
  const interrupt_guard on_interrupt;
  run.exits = run_shard_processes(run.processes, hook, stop_signal);
  run.interrupted_by = stop_signal();
  return run;
}

int exit_status(const fan_out_run& run) {
  int status = exit_ok;
  for (std::size_t i = 0; i < run.exits.size(); ++i) {
    const shard_exit& e = run.exits[i];
    // Stopped by the signal passed on: it exited 128 + that signal after writing what it finished, or
    // the signal killed it before its own handler was installed (a Ctrl-C in its first second).
    const bool stopped =
        run.interrupted_by != 0 && (e.exit_code == 128 + run.interrupted_by || e.signal == run.interrupted_by);
    if (!stopped && (e.signal != 0 || (e.exit_code != exit_ok && e.exit_code != exit_failure))) {
      print_error("shard process " + describe_exit(run.processes[i], e));
      status = std::max(status, e.exit_code == exit_usage ? exit_usage : exit_failure);
    }
  }
  return status;
}

double progress_interval_seconds() {
  static const double interval = [] {
    const char* v = std::getenv("FUSEBENCH_PROGRESS_INTERVAL");
    if (v == nullptr || *v == '\0') return 30.0;
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    return end != nullptr && *end == '\0' && std::isfinite(s) && s >= 0 ? s : 30.0;
  }();
  return interval;
}

progress_line::progress_line(std::size_t processes, int total, bool tty)
    : m_done(processes, 0), m_failures(processes, 0), m_total(total), m_tty(tty),
      m_start(std::chrono::steady_clock::now()) {}

bool progress_line::consume(std::size_t process, const std::string& line) {
  int done = 0, total = 0;
  if (std::sscanf(line.c_str(), "[%d/%d]", &done, &total) != 2) {
    // Another line of a child's (a failure, its repro) is printed next: on a clean line, not after the progress.
    if (m_open) fmt::print(stderr, "{}", format::cleared_line);
    m_open = false;
    return false;
  }
  m_done[process] = done;
  if (const auto at = line.rfind("failures "); at != std::string::npos)
    m_failures[process] = std::atoi(line.c_str() + at + 9);
  int all = 0, failures = 0;
  for (std::size_t i = 0; i < m_done.size(); ++i) {
    all += m_done[i];
    failures += m_failures[i];
  }
  const int step = m_total > 0 ? all * 10 / m_total : 10;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  // Outside a terminal: a line at every tenth, and at least every progress_interval_seconds between
  // (a tenth of a long run is hours of silence in a CI log).
  if (!m_tty && step == m_printed_step && elapsed - m_printed_at < progress_interval_seconds()) return true;
  m_printed_step = step;
  m_printed_at = elapsed;
  const std::string text = fmt::format("[{}/{}] on {} devices  elapsed {:.0f}s  eta {:.0f}s  failures {}", all, m_total,
                                       m_done.size(), elapsed, all > 0 ? elapsed / all * (m_total - all) : 0.0, failures);
  fmt::print(stderr, "{}", m_tty ? format::redrawn_line(text) : text + "\n");
  m_open = m_tty;
  return true;
}

void progress_line::finish() {
  if (m_open) fmt::print(stderr, "{}", format::cleared_line);
  m_open = false;
}

}  // namespace fb::fan_out
