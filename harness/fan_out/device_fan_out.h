#pragma once
/// `--devices` of verify and bench: one process of fusebench itself per GPU, each running a shard of
/// the run with CUDA_VISIBLE_DEVICES showing it that one GPU; the parent forwards their progress and
/// merges their files (harness/results/shard.h). No scheduler of its own: a shard is a plain
/// `fusebench verify|bench --shard K/N` that a user could run by hand.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "harness/results/shard.h"

namespace fb::fan_out {

/// Where one shard process runs.
struct device_slot {
  std::string label;                 ///< "gpu 0" or "cpu 1": prefixes the lines it writes
  bool cpu = false;                  ///< a CPU process (`--devices cpu,cpu`, the test mode)
  int gpu = -1;                      ///< the GPU's position in this process's view; -1 for a CPU process
  std::string cuda_visible_devices;  ///< its CUDA_VISIBLE_DEVICES; "" for a CPU process (no GPU)
  int sharing = 1;                   ///< shard processes on this device (per_device_slots)
};

/// Parses `--devices`: "all" (every GPU this process sees), GPU positions "0,2" (as CUDA numbers the
/// GPUs this process sees; under CUDA_VISIBLE_DEVICES=4,5 position 0 is GPU 4), or "cpu,cpu,..."
/// (that many shard processes on the CPU: the fan-out and merge without a GPU, for tests; each
/// process uses every core). Throws std::invalid_argument, one line, for anything else, a position
/// outside 0..visible_gpus-1, a position given twice (two shards on one GPU would time each other),
/// GPUs when none are visible, and a mix of cpu and GPUs.
[[nodiscard]] std::vector<device_slot> parse_devices(const std::string& text, int visible_gpus,
                                                     const char* inherited_visible_devices);

/// Each slot `per_device` times, in order (gpu 0, gpu 0, ..., gpu 1, ...), labelled "gpu 0.1", "gpu 0.2", ...
/// when per_device > 1: verify's --per-device (several verify processes keep one GPU busy; never for
/// bench, whose processes on one GPU would time each other).
[[nodiscard]] std::vector<device_slot> per_device_slots(const std::vector<device_slot>& slots, int per_device);

/// The environment of a shard process: `parent` (a null-terminated array, as `environ`) with
/// CUDA_VISIBLE_DEVICES set to `visible`, and OMP_NUM_THREADS set to `threads` unless the parent
/// sets it: the processes of one fan-out share the host's cores (libtorch would otherwise start a
/// thread per core in each, and N processes would oversubscribe the CPU N times). With `sharing` > 1
/// processes on one device, FUSEBENCH_SHARED_GPU=sharing: verify then gives its cached GPU memory
/// back after every case and runs a case that ran out of memory again.
[[nodiscard]] std::vector<std::string> shard_environment(const char* const* parent, const std::string& visible,
                                                         unsigned threads, int sharing = 1);

/// One shard process: where it runs, and its arguments after the executable (e.g. "verify", ...).
struct shard_process {
  device_slot slot;
  shard_spec shard;
  std::vector<std::string> args;
};

/// How a shard process ended.
struct shard_exit {
  int exit_code = -1;                   ///< its exit status; -1 when it was killed by a signal
  int signal = 0;                       ///< the signal that killed it; 0 when it exited
  std::vector<std::string> last_lines;  ///< the last lines it wrote on stderr
};

/// Sees every line a shard process writes on stderr; returns true when it consumed the line (a
/// progress line folded into the parent's own), false to have it forwarded as "[label] line".
using line_hook = std::function<bool(std::size_t process, const std::string& line)>;

/// Runs this executable once per entry of `processes`, all at once, each with its slot's
/// CUDA_VISIBLE_DEVICES and its share of the cores (shard_environment), its stdout discarded (the parent prints the merged result) and its stderr
/// passed to `hook` line by line. The children run in their own process group, so a Ctrl-C reaches
/// them through the parent only: when `stop_signal` turns non-zero the parent sends that signal to
/// each child once. A child gets SIGTERM when the parent dies (PR_SET_PDEATHSIG). Returns when every
/// child has ended. `overdue` (optional) is asked about each running child a few times a second; when
/// it says true the child's process group gets SIGKILL (its exit then says signal 9): a time limit.
/// Throws std::runtime_error when a process cannot be started.
[[nodiscard]] std::vector<shard_exit> run_shard_processes(const std::vector<shard_process>& processes,
                                                          const line_hook& hook,
                                                          const std::function<int()>& stop_signal,
                                                          const std::function<bool(std::size_t)>& overdue = {});

/// "gpu 0 (shard 1/2): exit 3" / "... killed by signal 9", with its last line when there is one.
[[nodiscard]] std::string describe_exit(const shard_process& process, const shard_exit& exit);

/// A fresh folder for the children's files under `parent` (mkdtemp). Throws std::runtime_error.
[[nodiscard]] std::string make_scratch_folder(const std::string& parent, const std::string& prefix);

}  // namespace fb::fan_out
