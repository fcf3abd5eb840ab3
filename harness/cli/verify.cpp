/// `fusebench verify`: parses its options and calls the verify run (harness/verify/verify_run.h).
#include "harness/cli/commands.h"
#include "harness/cli/output_paths.h"
#include "harness/plugin/plugin_loader.h"
#include "harness/verify/verify_run.h"
#include "reference/common.h"

#include <nlohmann/json.hpp>

namespace fb::cli {
namespace {

/// What verify reads: --config and --tensors, a repro bundle's folder as a whole (a bundle's
/// config.json sits beside its tensors.pt, which the replay reads), and the plug-in libraries.
std::vector<path_role> verify_inputs(const verify::options& opt) {
  std::vector<path_role> inputs = plugin_inputs(opt.plugins);
  inputs.push_back({"--tensors", opt.tensors});
  std::error_code ec;
  if (!opt.config.empty() && std::filesystem::is_regular_file(opt.config, ec)) {
    const std::filesystem::path folder = std::filesystem::path(opt.config).parent_path();
    const bool bundle = std::filesystem::exists((folder.empty() ? "." : folder) / "tensors.pt", ec);
    inputs.push_back(bundle ? path_role{"--config's repro bundle", folder.empty() ? "." : folder, true}
                            : path_role{"--config", opt.config});
  }
  return inputs;
}

}  // namespace

void add_verify_command(CLI::App& app, command_action& run) {
  auto opt = std::make_shared<verify::options>();
  CLI::App* cmd = app.add_subcommand(
      "verify", "Fuzz every implementation against the libtorch reference (and the reference against an fp64 oracle)");
  cmd->add_option("--model", opt->models, "Model id(s) or KernelBench number(s); default all")->take_all();
  CLI::Option* cases = cmd->add_option("--cases", opt->cases, "Cases per model (1 to 100000000)")
                            ->check(count_within(1, 100'000'000))
                            ->capture_default_str();
  CLI::Option* seed = cmd->add_option("--seed", opt->seed, "Seed: the same seed gives the same cases (0..2^64-1, decimal)")
      ->check(decimal_seed())
      ->capture_default_str();
  CLI::Option* device = cmd->add_option("--device", opt->device, "cpu or cuda; default the best present");
  CLI::Option* atol = cmd->add_option("--atol", opt->atol, "Absolute tolerance (finite, >= 0)")->capture_default_str();
  CLI::Option* rtol = cmd->add_option("--rtol", opt->rtol, "Relative tolerance (finite, >= 0)")->capture_default_str();
  cmd->add_option("--config", opt->config,
                  "FILE or inline JSON: replay this config (--cases seeds, or one --case-seed); a repro bundle's "
                  "config.json replays that bundle once, from its saved tensors");
  cmd->add_option("--tensors", opt->tensors,
                  "With --model and --config: check every implementation on these tensors (a torch.save dict of "
                  "the module's state_dict keys plus \"input\")");
  cmd->add_option("--save-failures", opt->save_failures, "Write a repro bundle per failing case into DIR");
  cmd->add_option("--case-seed", opt->case_seed, "With --config: the case seed (parameters and inputs)")
      ->check(decimal_seed());
  cmd->add_option("--inputs", opt->inputs,
                  "Input distribution: uniform, normal, offset, border, sparse, wide, near_constant (with --config: of that config; "
                  "without: every fuzz case draws only this one)");
  cmd->add_option("--params", opt->params,
                  "Parameters: random, default (PyTorch's init) or outliers (random, a few conv weights x 2^10); fuzzing "
                  "draws the model's regimes unless this is given");
  cmd->add_flag("--strict-fp32", opt->strict_fp32,
               "Judge every case against the fp32 reference alone (no fp64 rule); with --atol 0 --rtol 0 it asks "
               "for bitwise agreement with libtorch's fp32 result. A diagnostic: the gate never uses it");
  cmd->add_option("--json", opt->json_out,
                  "Also write the results as JSON to FILE (per row and per case; '-': stdout, the table then goes "
                  "to stderr)");
  cmd->add_option("--junit", opt->junit_out, "Also write a JUnit XML report to FILE (for CI systems; '-': stdout)");
  cmd->add_flag("--wide", opt->wide, "Print the table with every column (Markdown); the default fits 120 columns");
  add_plugin_options(cmd, opt->plugins, opt->isolate, opt->case_timeout);
  cmd->add_option("--only", opt->only,
                  "Check this implementation alone (e.g. plugin:mine or fused_host), not the reference's semantics");
  cmd->add_option("--from-case", opt->from_case, "Skip the fuzz case indices below this one (isolated children)")
      ->group("");
  cmd->add_option("--case-stream", opt->case_stream, "Append every verdict to FILE as a JSON line (isolated children)")
      ->group("");
  add_fan_out_options(cmd, opt->shard, opt->devices, "the case indices i of each model", "");
  cmd->add_option("--per-device", opt->per_device,
                  "With --devices: this many shard processes on each device (one verify process leaves a GPU "
                  "mostly idle: its cases are small and its host work serial)")
      ->check(count_within(1, 1024))
      ->capture_default_str();
  cmd->add_option("--case-size", opt->case_size,
                  "Fuzz case sizes: cuda (up to ~4M conv-output elements; cuda's default), cpu (~64K; cpu's "
                  "default) or oracle (~16K). Smaller cases for slow tools, e.g. compute-sanitizer");
  cmd->footer(
      "Verdicts: each fused case is judged against the fp32 libtorch reference (TF32 off) at atol/rtol; where that\n"
      "reference is itself off fp64 by more than the tolerance, or the candidate misses it, against fp64 with the\n"
      "reference's own largest error as the allowance. The reference's semantics are checked in fp64 against an independent loop oracle.\n"
      "Shards: case i of a run is a function of (--seed, i) alone, so --shard K/N (K from 1) runs exactly the\n"
      "unsharded run's cases i with i % N == K-1, and `fusebench merge` joins the N --json files into the\n"
      "unsharded run's file (the same but for check times). --devices does this on one host, one process per GPU.\n"
      "Exit status: 0 every case passed (or the shard holds no case), 1 a case failed or nothing was judged,\n"
      "2 bad usage, 130/143 --devices interrupted by SIGINT/SIGTERM.\n"
      "\n"
      "Examples:\n"
      "  fusebench verify --device cpu --cases 100\n"
      "  fusebench verify --model 44 --device cuda --cases 1000 --seed 7 --junit verify.xml\n"
      "  fusebench verify --model convt2d_mul_gap --config '{\"in_channels\":3,\"out_channels\":5,\"kernel_size\":3,"
      "\"stride\":2,\"padding\":1,\"output_padding\":1,\"multiplier\":0.5,\"batch_size\":2,\"height\":7,\"width\":6}'"
      " --case-seed 42\n"
      "  fusebench verify --model convt2d_mul_gap --device cpu --cases 5 --strict-fp32 --atol 0 --rtol 0 --save-failures failures\n"
      "  fusebench verify --config failures/convt2d_mul_gap_fused_host_<seed>/config.json\n"
      "  fusebench verify --model convt2d_mul_gap --config my_config.json --tensors my_tensors.pt\n"
      "  fusebench verify --device cuda --cases 1000 --devices all --json verify.json\n"
      "  fusebench verify --device cuda --cases 1000 --devices all --per-device 8 --json verify.json\n"
      "  fusebench verify --device cuda --cases 1000 --seed 7 --shard 2/4 --json shard2.json"
      "   (then: fusebench merge shard*.json --out verify.json)\n"
      "  fusebench verify --model 44 --plugin ./libmy_kernel.so --cases 100   (your own kernel: README \"Judge your own kernel\")");
  cmd->callback([opt, &run, cases, device, atol, rtol, seed] {
    opt->cases_given = cases->count() > 0;
    opt->seed_given = seed->count() > 0;
    opt->device_given = device->count() > 0;
    opt->atol_given = atol->count() > 0;
    opt->rtol_given = rtol->count() > 0;
    run = [opt] {
      try {
        refuse_clashing_paths(verify_inputs(*opt), {{"--json", opt->json_out}, {"--junit", opt->junit_out}});
        return verify::run(*opt);
      } catch (const ref::config_error& e) {
        print_error(std::string("invalid config: ") + e.what());
        return exit_usage;
      } catch (const nlohmann::json::exception& e) {
        print_error(std::string("bad --config JSON: ") + verify::one_line(e));
        return exit_usage;
      } catch (const std::invalid_argument& e) {
        print_error(verify::one_line(e));
        return exit_usage;
      } catch (const std::exception& e) {
        print_error(verify::one_line(e));
        return exit_failure;
      }
    };
  });
}

}  // namespace fb::cli
