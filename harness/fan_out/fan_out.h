#pragma once
/// The one fan-out of verify and bench over devices (`--devices`, `--per-device`) on top of their
/// shards (`--shard K/N`): which devices, the shard processes' common arguments, running them with the
/// Ctrl-C passed on, judging how they ended, and the parent's progress line over them. What differs
/// between verify and bench (their own arguments, what their files hold and how they merge) stays in
/// harness/verify/ and harness/bench/.
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/device/device.h"
#include "harness/fan_out/device_fan_out.h"
#include "harness/results/shard.h"

namespace fb::fan_out {

/// The devices a `--devices` run fans out to, and the device kind they are of.
struct device_plan {
  device_kind device = device_kind::cpu;
  std::vector<device_slot> slots;
};

/// Parses `--devices` (parse_devices) against the GPUs this process sees; refuses a list of another
/// kind than `--device` when that was given, and GPUs of different models (`one_run_is` completes
/// "one ... is of one kind of GPU"); repeats each slot `per_device` times (per_device_slots).
/// Throws std::invalid_argument, one line.
[[nodiscard]] device_plan plan_devices(const std::string& devices, int per_device,
                                       const std::optional<device_kind>& device_given, const std::string& one_run_is);

/// The slot of one child process that must run on this process's own device (verify's and bench's
/// --isolate of plug-ins): on a GPU, CUDA_VISIBLE_DEVICES shows it the GPU this process uses (its
/// device 0: the first it sees); on the CPU, none.
[[nodiscard]] device_slot own_device_slot(const std::string& label, device_kind device);

/// "crashed (signal N, SIGSEGV)": how a case whose isolated process died of `signal` is recorded.
[[nodiscard]] std::string crash_message(int signal);

/// The arguments every shard process gets: `subcommand --device D --seed S --shard K/N`.
[[nodiscard]] std::vector<std::string> shard_arguments(const std::string& subcommand, device_kind device,
                                                       uint64_t seed, const shard_spec& piece);

/// `args` then "--model" and each id, when `models` is not empty.
void append_models(std::vector<std::string>& args, const std::vector<std::string>& models);

/// A fan-out that ran: its processes, where each was told to write, and how each ended.
struct fan_out_run {
  std::string scratch;                ///< the folder of the processes' files
  std::vector<shard_process> processes;
  std::vector<std::string> outputs;   ///< per process: scratch/shard-K-of-N (a file or a folder, the caller's choice)
  std::vector<shard_exit> exits;
  int interrupted_by = 0;             ///< SIGINT/SIGTERM passed on to the processes; 0 when none
};

/// Makes which arguments a shard process runs with: its piece of the shard and where it writes.
using argument_maker = std::function<std::vector<std::string>(const shard_spec& piece, const std::string& output)>;

/// Splits `outer` once more over `slots` (sub_shard), makes a scratch folder `prefix`XXXXXX under
/// `scratch_parent`, and runs one shard process per slot at once (run_shard_processes), with SIGINT
/// and SIGTERM recorded here and passed on to them (interrupt_guard). `hook` sees their stderr lines.
[[nodiscard]] fan_out_run run_on_devices(const std::vector<device_slot>& slots, const shard_spec& outer,
                                         const std::string& scratch_parent, const std::string& prefix,
                                         const argument_maker& arguments, const line_hook& hook);

/// How the fan-out's processes ended, as one exit status: exit_ok when each exited 0 or 1 (or was
/// stopped by the signal passed on), else the worst (exit_usage when one refused its usage); prints
/// one error line per process that did not finish its piece.
[[nodiscard]] int exit_status(const fan_out_run& run);

/// Longest silence of a progress report written to a non-terminal (a CI log) [seconds]: 30, or
/// FUSEBENCH_PROGRESS_INTERVAL when set to a number >= 0 (a CI that wants a line per finished case sets 0).
[[nodiscard]] double progress_interval_seconds();

/// The parent's progress line over every shard process, from the "[done/total] ... failures F" lines
/// they write: live on a terminal, else a line at every tenth of the run and at least every
/// progress_interval_seconds while cases finish.
class progress_line {
 public:
  progress_line(std::size_t processes, int total, bool tty);

  /// Consumes a shard's progress line; false for any other line (forwarded as it is), which first clears
  /// the live line so that it starts on a clean one.
  bool consume(std::size_t process, const std::string& line);
  /// Clears a live line (no stale progress stays on the screen) before other output.
  void finish();

 private:
  std::vector<int> m_done, m_failures;
  int m_total;
  bool m_tty;
  std::chrono::steady_clock::time_point m_start;
  int m_printed_step = -1;
  double m_printed_at = 0;  ///< elapsed time of the last line printed [seconds]
  bool m_open = false;
};

}  // namespace fb::fan_out
