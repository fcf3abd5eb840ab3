/// `fusebench verify`: fuzz every registered implementation against its expectation (SPEC §2).
#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <unistd.h>

#include "harness/cli/commands.h"
#include "harness/device.h"
#include "harness/registry.h"
#include "harness/repro_bundle.h"
#include "harness/verify_plan.h"

namespace fb::cli {
namespace {

struct verify_options {
  std::vector<std::string> models;
  int cases = 100;
  uint64_t seed = 1;
  std::string device;
  double atol = 1e-5;
  double rtol = 1e-5;
  std::string config;  ///< FILE or inline JSON: replay one config exactly
  std::string save_failures;
  std::optional<uint64_t> case_seed;
  std::string inputs;
  std::string params;
};

/// Tally of one (model, implementation) row of the summary table.
struct tally {
  int passed = 0, incorrect = 0, failed = 0, ill_conditioned = 0;
  double max_conditioning = 0;
  double max_abs = 0, max_rel = 0, candidate_vs_fp64 = 0, expected_vs_fp64 = 0;
  std::string expectation;
};

json read_config_argument(const std::string& arg) {
  const auto first = arg.find_first_not_of(" \t\n");
  if (first != std::string::npos && arg[first] == '{') return json::parse(arg);
  std::ifstream f(arg);
  if (!f) throw std::invalid_argument("--config " + arg + ": not inline JSON and not a readable file");
  return json::parse(f);
}

/// The replay recipe from --config (a config object, or a repro bundle's config.json).
gen::case_recipe replay_recipe(const verify_options& opt, const json& given, const std::string& model_id, int index) {
  gen::case_recipe r;
  const bool is_bundle = given.contains("model") && given.contains("config");
  r.config = is_bundle ? given.at("config") : given;
  r.seed = opt.case_seed.value_or(is_bundle && given.contains("case_seed") ? given.at("case_seed").get<uint64_t>()
                                                                          : opt.seed + static_cast<uint64_t>(index));
  std::string inputs = opt.inputs;
  if (inputs.empty() && is_bundle && given.contains("inputs")) inputs = given.at("inputs").get<std::string>();
  r.inputs = inputs.empty() ? input_distribution::uniform : *input_distribution_from_string(inputs);
  std::string params = opt.params;
  if (params.empty() && is_bundle && given.contains("params")) params = given.at("params").get<std::string>();
  r.params = params == "default" ? ref::param_init::pytorch_default : ref::param_init::randomized;
  (void)model_id;
  return r;
}

int run_verify(const verify_options& opt) {
  const device_kind device = opt.device.empty() ? best_device() : device_from_string(opt.device);
  if (device == device_kind::cuda && !cuda_available())
    throw std::invalid_argument("device = cuda: no CUDA device or a CPU-only libtorch");
  if (!opt.inputs.empty() && !input_distribution_from_string(opt.inputs))
    throw std::invalid_argument("inputs = " + opt.inputs + ": must be uniform, normal, offset, border or sparse");
  if (!opt.params.empty() && opt.params != "random" && opt.params != "default")
    throw std::invalid_argument("params = " + opt.params + ": must be random or default");
  if (opt.cases < 1) throw std::invalid_argument("cases = " + std::to_string(opt.cases) + ": must be >= 1");

  std::optional<json> given;
  if (!opt.config.empty()) given = read_config_argument(opt.config);
  std::vector<const model_entry*> models;
  if (opt.models.empty() && given && given->contains("model")) {
    models.push_back(&find_model(given->at("model").get<std::string>()));
  } else if (opt.models.empty()) {
    if (given) throw std::invalid_argument("--config needs --model (which model the config is for)");
    for (const model_entry& m : all_models()) models.push_back(&m);
  } else {
    for (const std::string& id : opt.models) models.push_back(&find_model(id));
  }
  if (given) {
    for (const model_entry* m : models) (void)m->canonicalize(replay_recipe(opt, *given, m->id, 0).config);
  }

  const check_options checks{opt.atol, opt.rtol, true, true};
  const fuzz_budget budget = device == device_kind::cuda ? fuzz_budget::cuda() : fuzz_budget::cpu();
  const bool tty = isatty(fileno(stderr)) != 0;
  std::map<std::pair<std::string, std::string>, tally> rows;
  std::vector<std::string> failures;
  const auto start = std::chrono::steady_clock::now();
  const int total = opt.cases * static_cast<int>(models.size());
  int done = 0;
  fmt::print(stderr, "verify: {} model(s) x {} case(s) on {} (seed {}, atol {}, rtol {})\n", models.size(), opt.cases,
             device_name(device), opt.seed, opt.atol, opt.rtol);
  for (const model_entry* model : models) {
    const std::vector<verify_target> targets = verify_targets(*model, device);
    for (int i = 0; i < opt.cases; ++i) {
      gen::case_recipe recipe = given ? replay_recipe(opt, *given, model->id, i)
                                      : gen::sample_case(*model, budget, opt.seed, i);
      if (!given && !opt.inputs.empty()) recipe.inputs = *input_distribution_from_string(opt.inputs);
      if (!given && opt.params == "default") recipe.params = ref::param_init::pytorch_default;
      for (const verify_target& target : targets) {
        const check_result r = verify_case(*model, target, recipe, checks);
        tally& t = rows[{model->id, target.candidate.name}];
        t.expectation = expectation_for(*model, target, model->canonicalize(recipe.config)).name;
        t.passed += r.result == outcome::passed;
        t.incorrect += r.result == outcome::incorrect;
        t.failed += r.result == outcome::failed;
        t.ill_conditioned += r.result == outcome::not_run;
        if (r.result != outcome::not_run) t.max_conditioning = std::max(t.max_conditioning, r.conditioning);
        t.max_abs = std::max(t.max_abs, r.vs_expected.max_abs);
        t.max_rel = std::max(t.max_rel, r.vs_expected.max_rel);
        t.candidate_vs_fp64 = std::max(t.candidate_vs_fp64, r.candidate_vs_fp64);
        t.expected_vs_fp64 = std::max(t.expected_vs_fp64, r.expected_vs_fp64);
        if (r.result != outcome::passed && r.result != outcome::not_run) {
          const std::string repro = gen::repro_command(*model, recipe, device);
          failures.push_back(fmt::format("{} {} case {}: {}: {} [conditioning {:.3g}]\n    repro: {}", model->id,
                                         target.candidate.name, i, to_string(r.result), r.message, r.conditioning,
                                         repro));
          if (!opt.save_failures.empty()) {
            repro_bundle b{model->id, target.candidate.name, recipe, gen::make_case(*model, recipe), {}, {}, r, repro};
            failures.back() += "\n    saved: " + save_repro_bundle(b, opt.save_failures);
          }
          fmt::print(stderr, "{}{}\n", tty ? "\r" : "", failures.back());
        }
      }
      ++done;
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const bool report = tty || done == total || done % std::max(1, total / 10) == 0;
      if (report)
        fmt::print(stderr, "{}[{}/{}] {} case {}  elapsed {:.0f}s  eta {:.0f}s  failures {}{}", tty ? "\r" : "", done,
                   total, model->id, i, elapsed, elapsed / done * (total - done), failures.size(), tty ? "" : "\n");
    }
  }
  if (tty) fmt::print(stderr, "\n");

  fmt::print("\n| model | implementation | checked against | cases | passed | incorrect | failed | max abs err | "
             "max rel err | impl vs fp64 | ref fp32 vs fp64 | ill-conditioned (not run) | max conditioning run |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& [key, t] : rows)
    fmt::print("| {} | {} | {} | {} | {} | {} | {} | {:.3g} | {:.3g} | {:.3g} | {:.3g} | {} | {:.3g} |\n", key.first,
               key.second, t.expectation, t.passed + t.incorrect + t.failed, t.passed, t.incorrect, t.failed,
               t.max_abs, t.max_rel, t.candidate_vs_fp64, t.expected_vs_fp64, t.ill_conditioned, t.max_conditioning);
  int checked = 0, passed = 0;
  for (const auto& [key, t] : rows) {
    checked += t.passed + t.incorrect + t.failed;
    passed += t.passed;
  }
  int skipped = 0;
  for (const auto& [key, t] : rows) skipped += t.ill_conditioned;
  fmt::print("\nverify: {} passed, {} failed, {} skipped (ill-conditioned for an fp32 reference)\n", passed,
             checked - passed, skipped);
  return failures.empty() ? exit_ok : exit_failure;
}

}  // namespace

void add_verify_command(CLI::App& app, command_action& run) {
  auto opt = std::make_shared<verify_options>();
  CLI::App* cmd = app.add_subcommand("verify", "Fuzz every implementation against its reference (SPEC §2)");
  cmd->add_option("--model", opt->models, "Model id(s); default all")->take_all();
  cmd->add_option("--cases", opt->cases, "Cases per model")->capture_default_str();
  cmd->add_option("--seed", opt->seed, "Seed: the same seed gives the same cases")->capture_default_str();
  cmd->add_option("--device", opt->device, "cpu or cuda; default the best present");
  cmd->add_option("--atol", opt->atol, "Absolute tolerance")->capture_default_str();
  cmd->add_option("--rtol", opt->rtol, "Relative tolerance")->capture_default_str();
  cmd->add_option("--config", opt->config, "FILE or inline JSON: replay this config (or a repro bundle's config.json)");
  cmd->add_option("--save-failures", opt->save_failures, "Write a repro bundle per failing case into DIR");
  cmd->add_option("--case-seed", opt->case_seed, "With --config: the case seed (parameters and inputs)");
  cmd->add_option("--inputs", opt->inputs, "Input distribution: uniform, normal, offset, border, sparse");
  cmd->add_option("--params", opt->params, "Parameters: random (default for fuzzing) or default (PyTorch init)");
  cmd->footer(
      "Examples:\n"
      "  fusebench verify --device cpu --cases 100\n"
      "  fusebench verify --model convt2d_mul_gap --device cuda --cases 1000 --seed 7\n"
      "  fusebench verify --model convt2d_mul_gap --config '{\"in_channels\":3,...}' --case-seed 42\n"
      "  fusebench verify --config failures/convt2d_mul_gap_fused_cuda_42/config.json");
  cmd->callback([opt, &run] {
    run = [opt] {
      try {
        return run_verify(*opt);
      } catch (const ref::config_error& e) {
        print_error(std::string("invalid config: ") + e.what());
        return exit_usage;
      } catch (const json::exception& e) {
        print_error(std::string("bad --config JSON: ") + e.what());
        return exit_usage;
      } catch (const std::invalid_argument& e) {
        print_error(e.what());
        return exit_usage;
      }
    };
  });
}

}  // namespace fb::cli
