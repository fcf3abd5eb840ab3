/// `fusebench bench`: verify, then time ref, ref_tf32 and the fused implementations (SPEC §3).
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "harness/bench/bench_command.h"
#include "harness/cli/commands.h"
#include "harness/cli/output_paths.h"
#include "harness/stats/mann_whitney.h"
#include "reference/common.h"

namespace fb::cli {
namespace {

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
  fusebench bench --peers torch --peer-budget 240 --out reports/run1
      after our kernels, what a PyTorch user would run instead (peer:eager ... peer:max_autotune_tf32),
      timed by peers/torch_peers.py and judged here with the verdict rules; in the report beside ours
  fusebench bench --model 44 --plugin ./libmy_kernel.so --out mine
      your own kernel (README "Judge your own kernel") verified, timed and floored beside ours as plugin:<name>
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


}  // namespace

void add_bench_command(CLI::App& app, command_action& run) {
  auto opt = std::make_shared<bench::command_options>();
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
  cmd->add_option("--seed", opt->seed, "Seed of verification cases and input sets (0..2^64-1, decimal)")
      ->check(decimal_seed())
      ->capture_default_str();
  cmd->add_option("--time-cap", opt->time_cap,
                  "Timing budget per case [seconds], above 0 and at most 86400; default 2 (cuda), 0.5 (cpu)");
  cmd->add_option("--min-samples", opt->min_samples,
                  fmt::format("Timed repetitions per case, at least; 1 to {} (compare needs {} per side to decide at "
                              "alpha 0.01)",
                              bench::max_min_samples, stats::mann_whitney_min_samples(0.01)))
      ->check(count_within(1, bench::max_min_samples))
      ->capture_default_str();
  cmd->add_flag("--no-cpu-scale", opt->no_cpu_scale, "On a CPU, time the sweep's configs at full size");
  add_plugin_options(cmd, opt->plugins, opt->isolate, opt->case_timeout);
  cmd->add_option("--peers", opt->peers,
                  "torch: after our kernels' timings, PyTorch itself on each timed case (eager, torch.compile, "
                  "max-autotune; strict and TF32), timed by peers/torch_peers.py and judged here; none: no peers");
  cmd->add_option("--peer-python", opt->peer_python, "The Python (with torch) that runs the peers")->capture_default_str();
  cmd->add_option("--peer-helper", opt->peer_helper, "The peer helper script; default the source tree's peers/torch_peers.py");
  cmd->add_option("--peer-timeout", opt->peer_timeout,
                  "One case's peer helper is killed past this [seconds]; its peer then fails \"timed out\"")
      ->capture_default_str();
  cmd->add_option("--peer-budget", opt->peer_budget,
                  "The whole peer stage's time [seconds]; peers it leaves out are skipped for time; 0: no limit")
      ->capture_default_str();
  add_fan_out_options(cmd, opt->shard, opt->devices, "the plan's configs i (in plan order)",
                      "their timings disturb each other");
  cmd->footer(bench_examples);
  cmd->callback([opt, &run] {
    run = [opt] {
      try {
        // --config's file and the plug-ins are read; results.json and gbench.json (or their .partial
        // forms) are written into --out.
        std::vector<path_role> inputs = plugin_inputs(opt->plugins);
        std::error_code ec;
        if (std::filesystem::is_regular_file(opt->config, ec)) inputs.push_back({"--config", opt->config});
        const std::filesystem::path out = opt->out;
        refuse_clashing_paths(inputs, {{"--out's results.json", out / "results.json"},
                                       {"--out's results.partial.json", out / "results.partial.json"},
                                       {"--out's gbench.json", out / "gbench.json"},
                                       {"--out's gbench.partial.json", out / "gbench.partial.json"}});
        return bench::run_command(*opt);
      } catch (const ref::config_error& e) {
        print_error(std::string("invalid config: ") + e.what());
        return exit_usage;
      } catch (const nlohmann::json::exception& e) {
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
