/// `fusebench bench`: verify, then time ref, ref_tf32 and the fused implementations (SPEC §3).
#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "harness/bench/interrupt.h"
#include "harness/bench/runner.h"
#include "harness/cli/commands.h"
#include "harness/cli/device_fan_out.h"
#include "harness/detail/remove_tree.h"
#include "harness/device.h"
#include "harness/registry.h"
#include "harness/results/gbench_json.h"
#include "harness/results/results_merge.h"
#include "harness/stats/mann_whitney.h"

namespace fb::cli {
namespace {

/// Options of `fusebench bench`. A new option that changes the plan or the measurement must also be
/// passed on to the shard processes of --devices (shard_arguments).
struct bench_options {
  std::vector<std::string> models;     ///< ids; empty: all
  std::string sweep = "quick";         ///< quick or standard
  std::string config;                  ///< FILE or inline JSON of custom configs; replaces the sweep
  std::string device;                  ///< cpu or cuda; empty: the best present
  std::string out = "bench-results";   ///< folder of results.json and gbench.json
  uint64_t seed = 1;                   ///< verification and input sets
  std::optional<double> time_cap;      ///< per case [seconds]; default 2 on cuda, 0.5 on cpu
  std::size_t min_samples = 10;        ///< per case [count]
  bool no_cpu_scale = false;           ///< time the sweep's full-size configs on a CPU too
  std::string shard;                   ///< "K/N": only the plan's configs p with p % N == K-1
  std::string devices;                 ///< "all", "0,1", "cpu,cpu": one shard process per device, merged
};

constexpr const char* bench_examples = R"(Examples:
  fusebench bench --device cpu --sweep quick --out /tmp/bench_cpu
      every model's default config, scaled down for a CPU ("default/cpu-small"), in seconds
  fusebench bench --sweep standard --out reports/run1
      on the GPU: 5 models x 5 configs x (ref, ref_tf32, fused_cuda), under 8 minutes
  fusebench bench --device cpu --config '{"model": "44", "label": "tiny", "config": {"in_channels": 3,
      "out_channels": 4, "kernel_size": 3, "stride": 2, "padding": 1, "output_padding": 1,
      "multiplier": 0.5, "batch_size": 2, "height": 8, "width": 8}}'
      one inline config; "model" is an id or a KernelBench number (`fusebench list` shows both)
  fusebench bench --config my_configs.json --time-cap 5
      configs from a file: {"model": "convt2d_mul_gap", "config": {...}, "label": "big"} or an array
  fusebench report reports/run1/results.json --out reports/run1/report
  fusebench bench --sweep standard --devices all --out reports/run1
      the sweep's configs dealt over every GPU of the host (one process each), merged into one results.json
  fusebench bench --sweep standard --shard 2/3 --out shard2   (one of 3 hosts; then:
  fusebench merge shard1 shard2 shard3 --out results.json --gbench gbench.json)

Every fused implementation is verified at the timed config before it is timed, and the outputs
its last timed calls left are checked again afterwards ("timed output differs from verification").
Results are written after every case; results.json says "complete": false until the run ends, so
an interrupted (Ctrl-C, SIGTERM) or failed run is marked incomplete with its reason, and report
and compare treat it so.
Exit status: 0 all verified and plausible, 1 a fused case failed verification, a case threw, or a
fused time beat its roofline floor (IMPOSSIBLE), 2 bad usage, an invalid config or a --config
entry that cannot fit in memory, 130 interrupted by SIGINT (143 by SIGTERM).)";

/// The arguments of the shard process that runs `shard` of this run's plan into `out`: every option
/// that decides the plan or how it is measured.
std::vector<std::string> shard_arguments(const bench_options& opt, device_kind device, const shard_spec& shard,
                                         const std::string& out) {
  std::vector<std::string> args{"bench",          "--device", std::string(to_string(device)),
                                "--seed",         std::to_string(opt.seed),
                                "--min-samples",  std::to_string(opt.min_samples),
                                "--shard",        to_string(shard),
                                "--out",          out};
  if (opt.time_cap) args.push_back(fmt::format("--time-cap={}", *opt.time_cap));
  if (opt.no_cpu_scale) args.push_back("--no-cpu-scale");
  if (opt.config.empty()) args.insert(args.end(), {"--sweep", opt.sweep});
  else args.insert(args.end(), {"--config", opt.config});
  if (!opt.models.empty()) {
    args.push_back("--model");
    args.insert(args.end(), opt.models.begin(), opt.models.end());
  }
  return args;
}

/// `--devices`: the run's shard split once more, one piece per device, each piece a `fusebench bench
/// --shard` child writing into a scratch folder under --out; their files merged into --out. A Ctrl-C
/// reaches the children through this process, which then merges what they finished into a file
/// marked incomplete. The scratch folder is removed once the merged file is complete.
int run_on_devices(const bench_options& opt, const std::vector<device_slot>& slots, device_kind device,
                   const shard_spec& outer, std::size_t configs, std::int64_t planned_cases) {
  namespace fs = std::filesystem;
  const fs::path scratch = make_scratch_folder(opt.out, ".shards-");
  std::vector<shard_process> processes;
  std::vector<fs::path> outs;
  for (std::size_t d = 0; d < slots.size(); ++d) {
    const shard_spec piece = sub_shard(outer, static_cast<int>(d), static_cast<int>(slots.size()));
    outs.push_back(scratch / fmt::format("shard-{}-of-{}", piece.index, piece.count));
    processes.push_back({slots[d], piece, shard_arguments(opt, device, piece, outs.back().string())});
  }
  fmt::print(stderr, "bench: {} config(s){}, {} shard processes ({}): shards {} to {} of {}, files in {}\n", configs,
             outer.whole() ? "" : ", shard " + to_string(outer) + " of them", slots.size(), opt.devices,
             to_string(processes.front().shard), to_string(processes.back().shard), processes.front().shard.count,
             scratch.string());
  const bench::interrupt_guard on_interrupt;  // the children stop after their current sample; we merge
  const std::vector<shard_exit> exits = run_shard_processes(processes, {}, bench::stop_signal);
  const int interrupted_by = bench::stop_signal();
  int status = exit_ok;
  for (std::size_t i = 0; i < exits.size(); ++i) {
    const bool stopped = interrupted_by != 0 && exits[i].exit_code == 128 + interrupted_by;
    if (exits[i].signal != 0 || (exits[i].exit_code != exit_ok && exits[i].exit_code != exit_failure && !stopped)) {
      print_error("shard process " + describe_exit(processes[i], exits[i]));
      status = std::max(status, exits[i].exit_code == exit_usage ? exit_usage : exit_failure);
    }
  }
  if (status == exit_usage) return status;
  std::vector<named_results> parts;
  for (std::size_t i = 0; i < processes.size(); ++i) {
    const fs::path file = outs[i] / "results.json";
    if (!fs::exists(file)) {  // it died before writing anything: nothing of its configs can be merged
      print_error(fmt::format("{} (shard {}) wrote no {}; its configs are missing", processes[i].slot.label,
                              to_string(processes[i].shard), file.string()));
      continue;
    }
    parts.push_back({fmt::format("{} (shard {})", processes[i].slot.label, to_string(processes[i].shard)),
                     load_results(file)});
  }
  if (parts.empty()) return exit_failure;
  merge_rules rules;
  rules.target = outer;
  rules.allow_incomplete = true;  // an interrupted or failed shard leaves the merged file marked incomplete
  rules.allow_missing = true;
  results_file merged = merge_results(parts, rules);
  merged.status.planned_cases = std::max(merged.status.planned_cases, planned_cases);
  const fs::path results_path = fs::path(opt.out) / "results.json";
  const fs::path gbench_path = fs::path(opt.out) / "gbench.json";
  save_results(merged, results_path);
  save_gbench_json(merged, gbench_path);
  const bench::bench_summary summary = bench::summarize_results(merged, results_path, gbench_path);
  std::cout << '\n';
  bench::print_summary(summary, std::cout);
  if (merged.status.complete) {
    fb::detail::remove_tree(scratch);
  } else {
    fmt::print("bench: the shard processes' own files are in {}\n", scratch.string());
  }
  if (interrupted_by != 0) {
    std::cout.flush();
    fmt::print(stderr, "bench: interrupted after {} of {} cases; {} marked incomplete\n", merged.cases.size(),
               merged.status.planned_cases, results_path.filename().string());
    return 128 + interrupted_by;
  }
  if (status != exit_ok || !merged.status.complete) return exit_failure;
  return summary.failing > 0 || summary.impossible > 0 ? exit_failure : exit_ok;
}

int run_bench(const bench_options& opt) {
  device_kind device = opt.device.empty() ? best_device() : device_from_string(opt.device);
  const shard_spec shard = opt.shard.empty() ? shard_spec{} : parse_shard(opt.shard);
  std::optional<std::vector<device_slot>> slots;
  if (!opt.devices.empty()) {
    slots = parse_devices(opt.devices, cuda_device_count(), std::getenv("CUDA_VISIBLE_DEVICES"));
    const device_kind on = slots->front().cpu ? device_kind::cpu : device_kind::cuda;
    if (!opt.device.empty() && device != on)
      throw std::invalid_argument(fmt::format("--devices {} runs on {}, but --device says {}", opt.devices,
                                              to_string(on), opt.device));
    device = on;
    for (const device_slot& s : *slots)
      if (!s.cpu && cuda_device_name(s.gpu) != cuda_device_name(slots->front().gpu))
        throw std::invalid_argument(fmt::format(
            "--devices {}: GPU {} is a {} but GPU {} is a {}; one results file is of one kind of GPU",
            opt.devices, slots->front().gpu, cuda_device_name(slots->front().gpu), s.gpu, cuda_device_name(s.gpu)));
  }
  if (device == device_kind::cuda && !cuda_available())
    throw std::invalid_argument("device = cuda: no CUDA device or a CPU-only libtorch");
  if (opt.min_samples < 1) throw std::invalid_argument("min-samples = 0: must be >= 1");
  const double time_cap = opt.time_cap.value_or(device == device_kind::cuda ? 2.0 : 0.5);
  if (!(time_cap > 0.0)) throw std::invalid_argument(fmt::format("time-cap = {}: must be > 0 seconds", time_cap));

  std::vector<const model_entry*> models;
  for (const std::string& id : opt.models) models.push_back(&find_model(id));
  std::vector<bench::bench_point> points;
  std::string sweep_name = opt.sweep;
  if (!opt.config.empty()) {
    points = bench::load_configs(opt.config);
    const bool inline_json = opt.config.find_first_of("{[") == opt.config.find_first_not_of(" \t\r\n");
    sweep_name = inline_json ? std::string("config:inline") : "config:" + opt.config;
    if (!models.empty())
      points.erase(std::remove_if(points.begin(), points.end(),
                                  [&](const bench::bench_point& p) {
                                    return std::find(models.begin(), models.end(), p.model) == models.end();
                                  }),
                   points.end());
    if (points.empty()) throw std::invalid_argument("--config " + opt.config + ": no config for the chosen --model");
    // One explicitly requested config that cannot fit is a mistake to report, not a case to skip.
    if (points.size() == 1) bench::require_fits(points.front(), device);
  } else {
    if (models.empty())
      for (const model_entry& m : all_models()) models.push_back(&m);
    points = bench::plan_sweep(models, opt.sweep, device == device_kind::cpu && !opt.no_cpu_scale);
  }
  if (slots) {
    // The whole plan's case count, known here before any shard process starts: one that is
    // interrupted before writing its file must still count in the merged file's plan.
    std::int64_t planned = 0;
    for (std::size_t i = 0; i < points.size(); ++i)
      if (shard.holds(static_cast<std::int64_t>(i))) planned += static_cast<std::int64_t>(bench::cases_of(points[i], device));
    return run_on_devices(opt, *slots, device, shard, points.size(), planned);
  }
  const std::string digest = bench::plan_digest(points);
  const std::size_t planned_configs = points.size();
  points = bench::shard_points(points, shard);
  if (!shard.whole())
    fmt::print(stderr, "bench: shard {}: {} of the plan's {} config(s)\n", to_string(shard), points.size(),
               planned_configs);

  bench::bench_settings settings;
  settings.device = device;
  settings.out_dir = opt.out;
  settings.seed = opt.seed;
  settings.policy.min_samples = opt.min_samples;
  settings.policy.max_samples = std::max(settings.policy.max_samples, opt.min_samples);
  settings.policy.time_cap = time_cap;
  settings.sweep_name = sweep_name;
  settings.shard = to_string(shard);
  settings.plan_digest = digest;
  const bench::interrupt_guard on_interrupt;  // Ctrl-C stops after the current sample, file marked incomplete
  const bench::bench_summary summary = bench::run_bench(points, settings);
  std::cout << '\n';
  bench::print_summary(summary, std::cout);
  if (summary.interrupted_by != 0) {
    std::cout.flush();
    fmt::print(stderr, "bench: interrupted after {} of {} cases; {} marked incomplete\n", summary.results.cases.size(),
               summary.planned, summary.results_path.filename().string());
    return 128 + summary.interrupted_by;  // the shell's convention for "killed by this signal"
  }
  return summary.failing > 0 || summary.impossible > 0 ? exit_failure : exit_ok;
}

}  // namespace

void add_bench_command(CLI::App& app, command_action& run) {
  auto opt = std::make_shared<bench_options>();
  CLI::App* cmd = app.add_subcommand("bench", "Verify, then time ref, ref_tf32 and the fused implementations");
  cmd->add_option("--model", opt->models, "Model id(s); default all")->take_all();
  CLI::Option* sweep = cmd->add_option("--sweep", opt->sweep, "quick: default configs; standard: model sweeps")
                           ->check(CLI::IsMember({"quick", "standard"}))
                           ->capture_default_str();
  cmd->add_option("--config", opt->config,
                  "FILE or inline JSON of {\"model\", \"config\", \"label\"} (or an array), instead of a sweep")
      ->excludes(sweep);
  cmd->add_option("--device", opt->device, "cpu or cuda; default the best present")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--out", opt->out, "Folder for results.json and gbench.json")->capture_default_str();
  cmd->add_option("--seed", opt->seed, "Seed of verification cases and input sets")->capture_default_str();
  cmd->add_option("--time-cap", opt->time_cap, "Timing budget per case [seconds]; default 2 (cuda), 0.5 (cpu)");
  cmd->add_option("--min-samples", opt->min_samples,
                  fmt::format("Timed repetitions per case, at least (compare needs {} per side to decide at alpha "
                              "0.01)",
                              stats::mann_whitney_min_samples(0.01)))
      ->capture_default_str();
  cmd->add_flag("--no-cpu-scale", opt->no_cpu_scale, "On a CPU, time the sweep's configs at full size");
  cmd->add_option("--shard", opt->shard,
                  "K/N: time only the plan's configs p with p % N == K-1 (K from 1, configs in plan order); "
                  "`fusebench merge` joins the N results files into the unsharded run's")
      ->check(non_empty("K/N, e.g. 2/4"));
  cmd->add_option("--devices", opt->devices,
                  "all, or GPU positions 0,1,...: the configs dealt over one shard process per GPU "
                  "(CUDA_VISIBLE_DEVICES), merged into --out; cpu,cpu,...: that many shard processes on the "
                  "CPU (to test the fan-out without a GPU; their timings disturb each other)")
      ->check(non_empty("all, GPU positions like 0,1, or cpu,cpu"));
  cmd->footer(bench_examples);
  cmd->callback([opt, &run] {
    run = [opt] {
      try {
        return run_bench(*opt);
      } catch (const ref::config_error& e) {
        print_error(std::string("invalid config: ") + e.what());
        return exit_usage;
      } catch (const json::exception& e) {
        print_error(std::string("bad --config JSON: ") + e.what());
        return exit_usage;
      } catch (const std::invalid_argument& e) {
        print_error(e.what());
        return exit_usage;
      } catch (const std::exception& e) {
        print_error(e.what());
        return exit_failure;
      }
    };
  });
}

}  // namespace fb::cli
