/// `fusebench bench`: verify, then time ref, ref_tf32 and the fused implementations (SPEC §3).
#include <fmt/core.h>

#include <iostream>
#include <optional>

#include "harness/bench/interrupt.h"
#include "harness/bench/runner.h"
#include "harness/cli/commands.h"
#include "harness/device.h"
#include "harness/registry.h"
#include "harness/stats/mann_whitney.h"

namespace fb::cli {
namespace {

/// Options of `fusebench bench`.
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

Every fused implementation is verified at the timed config before it is timed, and the outputs
its last timed calls left are checked again afterwards ("timed output differs from verification").
Results are written after every case; results.json says "complete": false until the run ends, so
an interrupted (Ctrl-C, SIGTERM) or failed run is marked incomplete with its reason, and report
and compare treat it so.
Exit status: 0 all verified and plausible, 1 a fused case failed verification, a case threw, or a
fused time beat its roofline floor (IMPOSSIBLE), 2 bad usage, an invalid config or a --config
entry that cannot fit in memory, 130 interrupted by SIGINT (143 by SIGTERM).)";

int run_bench(const bench_options& opt) {
  const device_kind device = opt.device.empty() ? best_device() : device_from_string(opt.device);
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

  bench::bench_settings settings;
  settings.device = device;
  settings.out_dir = opt.out;
  settings.seed = opt.seed;
  settings.policy.min_samples = opt.min_samples;
  settings.policy.max_samples = std::max(settings.policy.max_samples, opt.min_samples);
  settings.policy.time_cap = time_cap;
  settings.sweep_name = sweep_name;
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
