#include "harness/bench/bench_command.h"

#include <fmt/core.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "harness/bench/runner.h"
#include "harness/detail/remove_tree.h"
#include "harness/device/device.h"
#include "harness/fan_out/fan_out.h"
#include "harness/model/registry.h"
#include "harness/plugin/plugin_loader.h"
#include "harness/process/exit_status.h"
#include "harness/process/interrupt.h"
#include "harness/results/gbench_json.h"
#include "harness/results/results_merge.h"
#include "harness/results/results_writer.h"

namespace fb::bench {
namespace {

using bench_options = command_options;

/// ", the earlier complete results.json kept" when `written` is a partial file beside an earlier run's.
std::string kept_note(const std::filesystem::path& written) {
  const std::filesystem::path final_path = written.parent_path() / "results.json";
  return written == final_path ? std::string() : ", the earlier " + final_path.filename().string() + " kept beside it";
}

/// --out must be a folder that can be created and written; one line, exit 2, before anything runs.
void require_out_folder(const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw std::invalid_argument(fmt::format("--out {}: is a file, not a folder (bench writes results.json and "
                                            "gbench.json into it)", out));
  fs::create_directories(out, ec);
  if (ec) throw std::invalid_argument(fmt::format("--out {}: cannot create the folder: {}", out, ec.message()));
  if (::access(out.c_str(), W_OK | X_OK) != 0)
    throw std::invalid_argument(fmt::format("--out {}: cannot write into the folder: {}", out, std::strerror(errno)));
}

/// The arguments of the shard process that runs `piece` of this run's plan into `out`: every option
/// that decides the plan or how it is measured.
std::vector<std::string> shard_arguments(const bench_options& opt, device_kind device, const shard_spec& piece,
                                         const std::string& out) {
  std::vector<std::string> args = fan_out::shard_arguments("bench", device, opt.seed, piece);
  args.insert(args.end(), {"--min-samples", std::to_string(opt.min_samples), "--out", out});
  if (opt.time_cap) args.push_back(fmt::format("--time-cap={}", *opt.time_cap));
  if (opt.no_cpu_scale) args.push_back("--no-cpu-scale");
  if (opt.config.empty()) args.insert(args.end(), {"--sweep", opt.sweep});
  else args.insert(args.end(), {"--config", opt.config});
  for (const std::string& p : plugin::loaded_plugins()) args.insert(args.end(), {"--plugin", p});
  if (!opt.isolate) args.push_back("--no-isolate");
  args.push_back(fmt::format("--case-timeout={}", opt.case_timeout));
  if (!opt.peers.empty()) {
    args.insert(args.end(), {"--peers", opt.peers, "--peer-python", opt.peer_python});
    if (!opt.peer_helper.empty()) args.insert(args.end(), {"--peer-helper", opt.peer_helper});
    args.push_back(fmt::format("--peer-timeout={}", opt.peer_timeout));
    args.push_back(fmt::format("--peer-budget={}", opt.peer_budget));
  }
  fan_out::append_models(args, opt.models);
  return args;
}

/// `--devices`: the run's shard split once more, one piece per device, each piece a `fusebench bench
/// --shard` child writing into a scratch folder under --out; their files merged into --out. A Ctrl-C
/// reaches the children through this process, which then merges what they finished into a file
/// marked incomplete. The scratch folder is removed once the merged file is complete.
int run_on_devices(const bench_options& opt, const std::vector<fan_out::device_slot>& slots, device_kind device,
                   const shard_spec& outer, std::size_t configs, std::int64_t planned_cases) {
  namespace fs = std::filesystem;
  const int n = static_cast<int>(slots.size());
  fmt::print(stderr, "bench: {} config(s){}, {} shard processes ({}): shards {} to {} of {}\n", configs,
             outer.whole() ? "" : ", shard " + to_string(outer) + " of them", n, opt.devices,
             to_string(sub_shard(outer, 0, n)), to_string(sub_shard(outer, n - 1, n)), sub_shard(outer, 0, n).count);
  // The children stop after their current sample on a Ctrl-C; what they finished is merged.
  const fan_out::fan_out_run fanned = fan_out::run_on_devices(
      slots, outer, opt.out, ".shards-",
      [&](const shard_spec& piece, const std::string& out) { return shard_arguments(opt, device, piece, out); }, {});
  const int status = fan_out::exit_status(fanned);
  if (status == exit_usage) return status;
  std::vector<named_results> parts;
  for (std::size_t i = 0; i < fanned.processes.size(); ++i) {
    const fan_out::shard_process& p = fanned.processes[i];
    const fs::path file = fs::path(fanned.outputs[i]) / "results.json";
    if (!fs::exists(file)) {  // it died before writing anything: nothing of its configs can be merged
      print_error(fmt::format("{} (shard {}) wrote no {}; its configs are missing", p.slot.label, to_string(p.shard),
                              file.string()));
      continue;
    }
    parts.push_back({fmt::format("{} (shard {})", p.slot.label, to_string(p.shard)), load_results(file)});
  }
  if (parts.empty()) return exit_failure;
  merge_rules rules;
  rules.target = outer;
  rules.allow_incomplete = true;  // an interrupted or failed shard leaves the merged file marked incomplete
  rules.allow_missing = true;
  results_file merged = merge_results(parts, rules);
  merged.status.planned_cases = std::max(merged.status.planned_cases, planned_cases);
  fs::path results_path = fs::path(opt.out) / "results.json";
  fs::path gbench_path = fs::path(opt.out) / "gbench.json";
  std::error_code ec;
  if (!merged.status.complete && fs::exists(results_path, ec)) {  // an earlier run's file stays (results_writer.h)
    results_path = partial_path(results_path);
    gbench_path = partial_path(gbench_path);
  }
  save_results(merged, results_path);
  save_gbench_json(merged, gbench_path);
  const bench_summary summary = summarize_results(merged, results_path, gbench_path);
  std::cout << '\n';
  print_summary(summary, std::cout);
  if (merged.status.complete) {
    fb::detail::remove_tree(fanned.scratch);
  } else {
    fmt::print("bench: the shard processes' own files are in {}\n", fanned.scratch);
  }
  if (fanned.interrupted_by != 0) {
    std::cout.flush();
    fmt::print(stderr, "bench: interrupted after {} of {} cases; {} marked incomplete{}\n", merged.cases.size(),
               merged.status.planned_cases, results_path.filename().string(), kept_note(results_path));
    return 128 + fanned.interrupted_by;
  }
  if (status != exit_ok || !merged.status.complete) return exit_failure;
  return summary.failing > 0 || summary.impossible > 0 || !summary.unjudged_plugins.empty() ? exit_failure : exit_ok;
}

}  // namespace

int run_command(const command_options& opt) {
  // Ctrl-C (or SIGTERM) stops after the current sample, the file marked incomplete. Made before the
  // plug-ins load and the plan is made: a signal before the first case writes the file with 0 cases.
  const interrupt_guard on_interrupt;
  plugin::load_plugins(plugin::plugin_paths(opt.plugins));
  device_kind device = opt.device.empty() ? best_device() : device_from_string(opt.device);
  const shard_spec shard = opt.shard.empty() ? shard_spec{} : parse_shard(opt.shard);
  std::optional<std::vector<fan_out::device_slot>> slots;
  if (!opt.devices.empty()) {
    // One process per device: two bench processes on one GPU would time each other (no --per-device).
    fan_out::device_plan plan = fan_out::plan_devices(
        opt.devices, 1, opt.device.empty() ? std::nullopt : std::optional<device_kind>(device), "results file");
    device = plan.device;
    slots = std::move(plan.slots);
  }
  if (device == device_kind::cuda && !cuda_available())
    throw std::invalid_argument("device = cuda: no CUDA device or a CPU-only libtorch");
  if (opt.min_samples < 1 || opt.min_samples > max_min_samples)
    throw std::invalid_argument(fmt::format("min-samples = {}: must be 1 to {}", opt.min_samples, max_min_samples));
  const double time_cap = opt.time_cap.value_or(device == device_kind::cuda ? 2.0 : 0.5);
  if (!opt.peers.empty() && opt.peers != "torch" && opt.peers != "none")
    throw std::invalid_argument(fmt::format("--peers {}: must be torch or none", opt.peers));
  if (!(opt.peer_timeout > 0.0 && opt.peer_timeout <= max_time_cap))
    throw std::invalid_argument(fmt::format("--peer-timeout {}: must be above 0 and at most {} seconds", opt.peer_timeout,
                                            max_time_cap));
  if (!(opt.peer_budget >= 0.0 && opt.peer_budget <= max_time_cap))
    throw std::invalid_argument(fmt::format("--peer-budget {}: must be 0 (no limit) to {} seconds", opt.peer_budget,
                                            max_time_cap));
  if (!opt.peer_helper.empty() && !std::filesystem::is_regular_file(opt.peer_helper))
    throw std::invalid_argument("--peer-helper " + opt.peer_helper + ": no such file");
  if (!(time_cap > 0.0 && time_cap <= max_time_cap))
    throw std::invalid_argument(fmt::format("time-cap = {}: must be above 0 and at most {} seconds", time_cap, max_time_cap));

  std::vector<const model_entry*> models;
  for (const std::string& id : opt.models) models.push_back(&find_model(id));
  std::vector<bench_point> points;
  std::string sweep_name = opt.sweep;
  if (!opt.config.empty()) {
    points = load_configs(opt.config);
    const bool inline_json = opt.config.find_first_of("{[") == opt.config.find_first_not_of(" \t\r\n");
    sweep_name = inline_json ? std::string("config:inline") : "config:" + opt.config;
    if (!models.empty())
      points.erase(std::remove_if(points.begin(), points.end(),
                                  [&](const bench_point& p) {
                                    return std::find(models.begin(), models.end(), p.model) == models.end();
                                  }),
                   points.end());
    if (points.empty()) throw std::invalid_argument("--config " + opt.config + ": no config for the chosen --model");
    // One explicitly requested config that cannot fit is a mistake to report, not a case to skip.
    if (points.size() == 1) require_fits(points.front(), device);
  } else {
    if (models.empty())
      for (const model_entry& m : all_models()) models.push_back(&m);
    points = plan_sweep(models, opt.sweep, device == device_kind::cpu && !opt.no_cpu_scale);
  }
  require_out_folder(opt.out);  // after the plan: a bad --config leaves no empty folder behind
  if (slots) {
    // The whole plan's case count, known here before any shard process starts: one that is
    // interrupted before writing its file must still count in the merged file's plan.
    std::int64_t planned = 0;
    for (std::size_t i = 0; i < points.size(); ++i)
      if (shard.holds(static_cast<std::int64_t>(i)))
        planned += static_cast<std::int64_t>(cases_of(points[i], device, opt.peers == "torch"));
    return run_on_devices(opt, *slots, device, shard, points.size(), planned);
  }
  const std::string digest = plan_digest(points);
  const std::size_t planned_configs = points.size();
  points = shard_points(points, shard);
  if (!shard.whole())
    fmt::print(stderr, "bench: shard {}: {} of the plan's {} config(s)\n", to_string(shard), points.size(),
               planned_configs);

  bench_settings settings;
  settings.device = device;
  settings.out_dir = opt.out;
  settings.seed = opt.seed;
  settings.policy.min_samples = opt.min_samples;
  settings.policy.max_samples = std::max(settings.policy.max_samples, opt.min_samples);
  settings.policy.time_cap = time_cap;
  settings.sweep_name = sweep_name;
  settings.shard = to_string(shard);
  settings.plan_digest = digest;
  settings.isolate_plugins = opt.isolate && !plugin::loaded_plugins().empty();
  settings.case_timeout = opt.case_timeout;
  settings.peers.enabled = opt.peers == "torch";
  settings.peers.python = opt.peer_python;
  settings.peers.helper = opt.peer_helper;
  settings.peers.timeout = opt.peer_timeout;
  settings.peers.budget = opt.peer_budget;
  const bench_summary summary = run_bench(points, settings);
  const final_writes_guard writing;  // no Ctrl-C cuts the summary short
  std::cout << '\n';
  print_summary(summary, std::cout);
  if (summary.interrupted_by != 0) {
    std::cout.flush();
    fmt::print(stderr, "bench: interrupted after {} of {} cases; {} marked incomplete{}\n",
               summary.results.cases.size(), summary.planned, summary.results_path.filename().string(),
               kept_note(summary.results_path));
    return 128 + summary.interrupted_by;  // the shell's convention for "killed by this signal"
  }
  return summary.failing > 0 || summary.impossible > 0 || !summary.unjudged_plugins.empty() ? exit_failure : exit_ok;
}


}  // namespace fb::bench
