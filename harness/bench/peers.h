#pragma once
/// The peer column (issue 38): for each timed case, the same model run by PyTorch itself the ways a
/// user would try instead of our kernels (eager with cudnn.benchmark, torch.compile, max-autotune; each
/// strict fp32 and TF32), by a Python helper (peers/torch_peers.py) in a child process, after every
/// kernel timing of the run. The helper times; the harness judges each peer's output with its own
/// verdict rules (judge_values), as it judges ours. A peer that cannot run is a row with its reason.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/results/results.h"

namespace fb::bench {

/// Implementation names of peer rows start with this: "peer:eager", ... (results.h).
inline constexpr std::string_view peer_prefix = peer_implementation_prefix;

/// The peers of `--peers torch`, in the order the helper runs them (cheap first: a spent budget
/// leaves the compiles out, not eager).
inline constexpr std::array<std::string_view, 6> torch_peers = {"eager",   "eager_tf32",   "compile",
                                                                "compile_tf32", "max_autotune", "max_autotune_tf32"};

/// How `bench --peers torch` runs the helper.
struct peer_settings {
  bool enabled = false;            ///< --peers torch
  std::string python = "python3";  ///< --peer-python: the interpreter that has torch
  std::string helper;              ///< --peer-helper: the script; empty: peers/torch_peers.py of the source tree
  double timeout = 900.0;          ///< --peer-timeout: one helper process's limit per case [seconds]
  double budget = 0.0;             ///< --peer-budget: the whole peer stage's limit [seconds]; 0: none
};

/// The helper a run uses: settings.helper, or the source tree's peers/torch_peers.py.
[[nodiscard]] std::string peer_helper_path(const peer_settings& settings);

/// One line of the helper's protocol, read and checked (the helper's format: peers/torch_peers.py).
struct peer_record {
  std::string peer;                       ///< e.g. "eager"
  std::string status;                     ///< "timed", "skipped" or "error"
  std::string reason;                     ///< why skipped or error
  std::vector<double> samples;            ///< timed: each repetition [seconds]
  std::optional<double> compile_seconds;  ///< timed compile peers: the first call [seconds]
  std::string output;                     ///< timed: file name of its output in the case folder
  std::string torch_version;              ///< torch.__version__
};

/// Parses one protocol line. Returns nullopt with `why` set for anything that is not a well-formed
/// record of one of `expected` (garbage, a wrong type, an unknown peer, a timed record without
/// samples or output, a non-finite or negative sample).
[[nodiscard]] std::optional<peer_record> parse_peer_record(const std::string& line,
                                                           const std::vector<std::string>& expected, std::string& why);

/// How one helper process ended.
struct helper_exit {
  int exit_code = -1;      ///< its status when it exited; -1 otherwise
  int signal = 0;          ///< the signal that ended it; 0 when it exited
  bool timed_out = false;  ///< killed past its limit
  int stopped_by = 0;      ///< killed because the run was asked to stop (that signal); 0 otherwise
};

/// Runs `argv` with stdout into `stdout_file` and stderr into `stderr_file`, in its own process group,
/// killed (the whole group) past `limit` seconds or when `stop()` turns non-zero.
[[nodiscard]] helper_exit run_helper_process(const std::vector<std::string>& argv, const std::filesystem::path& stdout_file,
                                             const std::filesystem::path& stderr_file, double limit,
                                             const std::function<int()>& stop);

/// What the peer stage asks of the harness for one case, so that it stays free of the runner's types.
struct peer_case {
  std::string model;                  ///< registry id
  nlohmann::json config;              ///< canonical config
  std::string device;                 ///< "cuda" or "cpu"
  nlohmann::json policy;              ///< the repetition policy: min_samples, max_samples, min_time, time_cap, target_rse
  int warmup_calls = 3;               ///< as the bench's
  std::vector<std::int64_t> output_shape;  ///< what every peer's output must be
  /// Writes tensors.pt (the parameters and the input the reference used) into the folder.
  std::function<void(const std::filesystem::path& folder)> write_tensors;
  /// Judges a peer's output (already checked for shape and dtype) with the verdict rules, filling the
  /// row's outcome, errors, decided_by and peer->share_within_tolerance.
  std::function<void(const std::filesystem::path& output_file, case_result& row)> judge;
};

/// The rows of one case's peers: `rows` arrive made (model, config, label, implementation); each gets
/// its verdict. `deadline_left` is the stage's budget left [seconds] (infinity: none); helper processes
/// are limited to min(settings.timeout, deadline_left), and the peers a spent budget leaves out are
/// not_run with that reason. A helper that crashes, hangs, prints garbage or writes a wrong shape gives
/// the peer it was on `failed` with the reason; the helper is started again for the peers after it.
/// `log` hears what it does. Throws run_interrupted when stop() turns non-zero.
void run_case_peers(const peer_settings& settings, const peer_case& c, std::vector<case_result>& rows,
                    double deadline_left, const std::function<int()>& stop,
                    const std::function<void(const std::string&)>& log);

}  // namespace fb::bench
