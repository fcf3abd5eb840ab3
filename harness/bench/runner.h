#pragma once
/// The `bench` flow (SPEC §3): plan configs from sweeps or a file, then per config verify each fused
/// implementation at that exact config, time ref, ref_tf32 and every passing fused implementation
/// through Google Benchmark, compute roofline floors, and write the results file after every case.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "harness/bench/peers.h"
#include "harness/bench/repetition_policy.h"
#include "harness/bench/timed_call.h"
#include "harness/model/model_entry.h"
#include "harness/process/interrupt.h"
#include "harness/results/results.h"
#include "harness/results/shard.h"
#include "harness/verify/equivalence.h"

namespace fb::bench {

/// One config to time.
struct bench_point {
  const model_entry* model = nullptr;  ///< REQUIRES: outlives run_bench
  std::string label;                   ///< config label of the report, e.g. "default", "batch x2"
  json config;                         ///< canonical config
  std::vector<std::string> merged_labels;  ///< sweep labels that scaled to this same config and were dropped
};

/// Label suffix of configs scaled down for a CPU run.
inline constexpr std::string_view cpu_small_suffix = "/cpu-small";

/// The config scaled for a CPU run: batch divided by the model's default batch (so the default gets
/// batch 1), every spatial size (depth, height, width) divided by 4, each change kept only if the
/// model still accepts the config (e.g. a W' pinned to C_out keeps W); then spatial sizes are halved
/// while the conv output exceeds 2^20 elements, so that a CPU run takes seconds.
[[nodiscard]] json scale_for_cpu(const model_entry& model, const json& config);

/// Cases a point writes: ref, ref_tf32, one per fused implementation of the device and, with `peers`,
/// one per torch peer [count].
[[nodiscard]] std::size_t cases_of(const bench_point& point, device_kind device, bool peers = false);

/// The configs of a sweep: "quick" is each model's default, "standard" is model.sweep(). With
/// `cpu_small`, each config is scale_for_cpu'd and its label gets cpu_small_suffix. A config equal to
/// an earlier one of the same model (scaling maps "default", "batch x0.125" and "batch x0.5" to batch
/// 1) is dropped; the first label stays and lists the dropped ones in merged_labels.
/// Throws std::invalid_argument for another sweep name.
[[nodiscard]] std::vector<bench_point> plan_sweep(const std::vector<const model_entry*>& models,
                                                  const std::string& sweep, bool cpu_small);

/// Configs from inline JSON (an argument starting with `{` or `[`, as `verify --config` takes) or from
/// a JSON file: {"model": id, "config": {...}, "label": "..."} or an array of those; a missing label
/// becomes "custom N"; `model` may be a KernelBench number ("44"). Throws std::invalid_argument
/// (unreadable file, bad shape, unknown key, duplicate label, unknown model), json::exception (bad
/// JSON), ref::config_error (invalid config).
[[nodiscard]] std::vector<bench_point> load_configs(const std::string& file_or_json);

/// Fingerprint of a whole plan (models, labels, configs, merged labels; harness/results/shard.h fingerprint):
/// recorded as environment.plan_digest so that merge joins only shards of one plan.
[[nodiscard]] std::string plan_digest(const std::vector<bench_point>& points);

/// The points of `points` that `shard` holds: the p-th (0-based) when p % N == K-1.
[[nodiscard]] std::vector<bench_point> shard_points(const std::vector<bench_point>& points, const shard_spec& shard);

/// Throws std::invalid_argument "needs ~X GiB, Y GiB available" when `point` cannot fit on `device`
/// even with the fewest input sets bench uses (2): for an explicitly requested config, a skipped
/// case would only hide the mistake. Nothing is thrown when the available memory is unknown.
void require_fits(const bench_point& point, device_kind device);

/// How to run.
struct bench_settings {
  device_kind device = device_kind::cpu;
  std::filesystem::path out_dir = "bench-results";  ///< gets results.json and gbench.json
  std::uint64_t seed = 1;                           ///< verification and input sets
  repetition_policy policy;                         ///< stopping rule of every timed case
  int warmup_calls = 3;            ///< untimed calls first (one per input set), fewer if slow
  int input_sets = 3;              ///< rotated inputs; 2 when 3 do not fit in device memory
  check_options checks;            ///< equivalence contract of the verification
  /// --isolate with plug-ins: each plug-in's verification of a config runs first in a child process
  /// (`fusebench verify --config ... --only plugin:<name>`), so that a crash is that row's failure.
  bool isolate_plugins = false;
  int case_timeout = 300;          ///< that child's time limit [seconds]: killed past it, the row failed "timed out"
  /// --peers torch: after every kernel timing of the run, each timed case's torch peers (peers.h).
  peer_settings peers;
  std::string sweep_name;          ///< recorded in the environment, e.g. "quick"
  std::string shard = "1/1";       ///< recorded in the environment: the part of the plan these points are
  std::string plan_digest;         ///< recorded in the environment: plan_digest of the whole plan
  /// Bandwidth and peak of the floors; empty: measured at the start of the run (tests pin them).
  std::optional<device_calibration> calibration;
  std::ostream* progress_out = nullptr;  ///< null: stderr, live on a terminal
  /// Polled between cases and after every timed sample; a non-zero signal number stops the run, which
  /// then marks its file incomplete. The default reads what interrupt_guard's handler recorded.
  std::function<int()> stop_signal = fb::stop_signal;
};

/// What a run did; the file itself is at results_path.
struct bench_summary {
  std::filesystem::path results_path;  ///< <out>/results.json (results.partial.json: incomplete beside an earlier run)
  std::filesystem::path gbench_path;   ///< <out>/gbench.json (gbench.partial.json likewise)
  results_file results;                ///< everything written
  int timed = 0;                       ///< cases with stats [count]
  int failing = 0;                     ///< cases incorrect (fused) or failed (any, e.g. out of memory) [count]
  int skipped = 0;                     ///< not_run / not_supported / invalid_config / declined [count]
  int impossible = 0;                  ///< fused cases faster than their floor [count]
  /// Peer rows, never counted above: a peer outside the tolerance or one that cannot run is information.
  int peers_within = 0;                ///< timed and within tolerance [count]
  int peers_outside = 0;               ///< timed, outside tolerance [count]
  int peers_error = 0;                 ///< the helper crashed, hung, printed garbage, wrong shape... [count]
  int peers_skipped = 0;               ///< could not run here, or the stage's budget was spent [count]
  std::int64_t planned = 0;            ///< cases the run planned [count]
  int interrupted_by = 0;              ///< the signal that stopped the run; 0 when it ran to the end
  std::vector<std::string> unjudged_plugins;  ///< unjudged_plugins(results): each fails the run (exit 1)
};

/// The plug-ins of results.environment.plugins with no row that was verified (passed, incorrect or
/// failed): each was registered for another device or model only, or declined every config. A run
/// that judged nothing of a plug-in it was asked to judge exits 1. Empty for a shard's file
/// (environment.shard not "1/1"), whose configs may hold none of a plug-in's model: the merge of the
/// whole run is judged.
[[nodiscard]] std::vector<std::string> unjudged_plugins(const results_file& results);

/// Runs the points on settings.device and writes the results incrementally; the file says
/// "complete": true only once every planned case is in. One case's exception marks only that case
/// failed. When settings.stop_signal() turns non-zero the run stops after the current timed sample
/// (the unfinished case is not recorded), marks the file incomplete ("interrupted by SIGINT after K
/// of N cases") and returns with interrupted_by set. Any other exception marks the file incomplete
/// with its message and is rethrown. Throws std::runtime_error when the output files cannot be written.
[[nodiscard]] bench_summary run_bench(const std::vector<bench_point>& points, const bench_settings& settings);

/// The environment of a run on `device`: GPU, driver, runtime, libtorch, git commit, build type,
/// date, host. Bandwidth and peak are left 0 (run_bench fills them in).
[[nodiscard]] run_environment describe_environment(device_kind device, const std::string& sweep, std::uint64_t seed);

/// The summary of a results file that another process wrote (e.g. the merge of `--devices` shards):
/// the counts run_bench keeps, recounted from its cases. interrupted_by stays 0.
[[nodiscard]] bench_summary summarize_results(const results_file& results, const std::filesystem::path& results_path,
                                              const std::filesystem::path& gbench_path);

/// Printable summary of a finished run: one line per case, then the totals.
void print_summary(const bench_summary& summary, std::ostream& out);

}  // namespace fb::bench
