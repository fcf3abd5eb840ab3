/// `fusebench verify`: fuzz every registered implementation against the libtorch reference under the
/// verdict rules, and the reference's own semantics against the fp64 loop oracle (README "The
/// equivalence contract"). Also replays one config, a repro bundle, or a user's own tensors.
#include <c10/util/Exception.h>
#include <fmt/core.h>
#include <fmt/ostream.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <unistd.h>

#include "harness/bench/build_info.h"
#include "harness/bench/interrupt.h"
#include "harness/cli/commands.h"
#include "harness/cli/device_fan_out.h"
#include "harness/detail/remove_tree.h"
#include "harness/device.h"
#include "harness/registry.h"
#include "harness/repro_bundle.h"
#include "harness/verify_plan.h"
#include "harness/verify_report.h"

namespace fb::cli {
namespace {

/// Options of `fusebench verify`. A new option that changes which cases a fuzz run draws, or how
/// they are judged, must also be passed on to the shard processes (shard_arguments).
struct verify_options {
  std::vector<std::string> models;
  int cases = 100;
  uint64_t seed = 1;
  std::string device;
  double atol = 1e-5;
  double rtol = 1e-5;
  std::string config;  ///< FILE or inline JSON: replay one config, or a repro bundle's config.json
  std::string tensors;  ///< a torch.save dict of state_dict keys + "input"
  std::string save_failures;
  std::optional<uint64_t> case_seed;
  std::string inputs;
  std::string params;
  std::string json_out;
  std::string junit_out;
  std::string shard;    ///< "K/N": only case indices i with i % N == K-1 (harness/shard.h)
  std::string devices;  ///< "all", "0,1", "cpu,cpu": one shard process per device, merged
  int per_device = 1;   ///< --per-device: shard processes per device of --devices
  std::string case_size;  ///< --case-size: "" the device's own fuzz sizes, else cpu or oracle
  bool strict_fp32 = false;
  bool cases_given = false, atol_given = false, rtol_given = false, device_given = false;
};

/// One line for any exception: libtorch's c10::Error carries a C++ stack trace after its message.
std::string one_line(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  std::string what = c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
  const auto nl = what.find('\n');
  return nl == std::string::npos ? what : what.substr(0, nl);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

json read_config_argument(const std::string& arg) {
  const auto first = arg.find_first_not_of(" \t\n");
  if (first != std::string::npos && arg[first] == '{') return json::parse(arg);
  std::error_code ec;
  if (std::filesystem::is_directory(arg, ec))
    throw std::invalid_argument("--config " + arg + ": is a directory, not a config file (a bundle's is DIR/config.json)");
  std::ifstream f(arg);
  if (!f) throw std::invalid_argument("--config " + arg + ": not inline JSON and not a readable file");
  return json::parse(f);
}

/// The folder for repro bundles exists (or is made) and takes files, before any case runs.
void require_writable_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    throw std::invalid_argument("--save-failures " + dir + ": cannot create the folder (" + ec.message() + ")");
  const fs::path probe = fs::path(dir) / ".fusebench_write_probe";
  std::ofstream f(probe);
  if (!f) throw std::invalid_argument("--save-failures " + dir + ": the folder is not writable");
  f.close();
  fs::remove(probe, ec);
}

/// An output file opens for writing now, so a bad path fails before the run, not after it.
void require_writable_file(const std::string& path, const char* flag) {
  std::ofstream f(path, std::ios::app);
  if (!f) throw std::invalid_argument(std::string(flag) + " " + path + ": cannot write the file");
}

/// The command that replays a case exactly (config, seed, distribution, regime, device, tolerances).
std::string repro_line(const model_entry& model, const gen::case_recipe& recipe, device_kind device,
                       const check_options& checks) {
  return gen::repro_command(model, recipe, device) + fmt::format(" --atol {} --rtol {}", checks.atol, checks.rtol) +
         (checks.fp64_rule ? "" : " --strict-fp32");
}

/// Everything a run shares: options, device, the report and where failures go.
struct verify_run {
  const verify_options& opt;
  device_kind device;
  check_options checks;
  verify_report report;
  bool tty = false;
  int stopped_by = 0;  ///< the signal that stopped the fuzz loop after a case (0: it ran to the end)

  /// Records one verdict; prints a failure with its repro line and saves a bundle when asked.
  void record(const model_entry& model, const std::string& implementation, const std::string& against, int index,
              const gen::case_recipe& recipe, const judged_case* judged, check_result r, double seconds) {
    verify_case_record rec{model.id,
                           implementation,
                           index,
                           judged != nullptr ? judged->first.config : recipe.config,
                           recipe.seed,
                           std::string(to_string(recipe.inputs)),
                           recipe.params == ref::param_init::randomized ? "random" : "default",
                           r.result,
                           r.rule,
                           r.message,
                           r.vs_expected.max_abs,
                           r.vs_expected.worst_ratio,
                           seconds,
                           "",
                           ""};
    std::string line;  // the failure's lines, printed with the verdict
    if (r.result != outcome::passed) {
      rec.repro = repro_line(model, recipe, device, checks);
      line = fmt::format("{} {} case {}: {}: {} [rule {}]\n    repro: {}", model.id, implementation, index,
                                     to_string(r.result), r.message, to_string(r.rule), rec.repro);
      if (!opt.save_failures.empty() && judged != nullptr) {
        try {
          rec.bundle = save_repro_bundle({model.id, implementation, device, recipe, checks, judged, r, rec.repro},
                                         opt.save_failures);
          line += "\n    saved: " + rec.bundle + "  (replay: fusebench verify --config " + rec.bundle + "/config.json)";
        } catch (const std::exception& e) {
          line += "\n    bundle not saved: " + one_line(e);
        }
      }
    }
    pending.push_back({std::move(rec), std::move(r), against, std::move(line)});
    if (!buffering) commit_pending();
  }

  // Verdicts pass through `pending`. A process that shares its GPU with other shard processes
  // (--per-device) holds a case's verdicts there until the case is done: a case that ran out of GPU
  // memory because its neighbours held it is run again (its first verdicts dropped), not failed.
  struct held_verdict {
    verify_case_record rec;
    check_result r;
    std::string against, line;
  };
  bool buffering = false;
  std::vector<held_verdict> pending;

  [[nodiscard]] bool pending_out_of_memory() const {
    return std::any_of(pending.begin(), pending.end(), [](const held_verdict& v) {
      return v.rec.result == outcome::failed && v.rec.message.find("out of memory") != std::string::npos;
    });
  }
  /// Prints the held verdicts' failure lines and adds them to the report.
  void commit_pending() {
    for (const held_verdict& v : pending) {
      if (!v.line.empty()) fmt::print(stderr, "{}{}\n", tty ? "\r" : "", v.line);
      report.add(v.rec, v.r, v.against);
    }
    pending.clear();
  }
};

/// Shard processes on this process's GPU (the fan-out sets FUSEBENCH_SHARED_GPU for --per-device > 1).
int shared_gpu_processes() {
  const char* v = std::getenv("FUSEBENCH_SHARED_GPU");
  return v != nullptr ? std::max(1, std::atoi(v)) : 1;
}

/// The reference's semantics on a case: the fp64 libtorch reference against the loop oracle.
void check_reference(verify_run& run, const model_entry& model, const verify_target& target, int index,
                     const gen::case_recipe& recipe, const model_case& c) {
  const auto t0 = std::chrono::steady_clock::now();
  check_result r = check_reference_semantics(model, c, run.device);
  // A bundle of a reference failure: its "expected" is the oracle, its "output" the fp64 reference.
  std::optional<judged_case> judged;
  if (r.result != outcome::passed && !run.opt.save_failures.empty()) {
    try {
      judged.emplace();
      judged->first = c;
      judged->first_expected.fp32 = judged->first_expected.fp64 = model.oracle(c.config, c.params, c.input);
      const model_case d = on_device(c, run.device);
      r.candidate_output = model.reference(d.config, d.params, d.input.to(at::kDouble));
    } catch (const std::exception&) {
      judged.reset();
    }
  }
  run.record(model, target.candidate.name, expectation_name(target), index, recipe, judged ? &*judged : nullptr, r,
             seconds_since(t0));
}

/// Every fused target of the device on one prepared case (expectations computed once, shared). The
/// first target's time includes the case's preparation (`prep_seconds`), so that a row's seconds
/// are what its cases cost (the gate sizes its boxes from them).
void check_fused(verify_run& run, const model_entry& model, const std::vector<verify_target>& targets, int index,
                 const gen::case_recipe& recipe, const judged_case& c, double conditioning, double prep_seconds) {
  for (const verify_target& target : targets) {
    if (target.is_reference) continue;
    const auto t0 = std::chrono::steady_clock::now();
    check_result r = check_equivalence(model, target.candidate, c, run.checks);
    r.conditioning = conditioning;
    run.record(model, target.candidate.name, expectation_name(target), index, recipe, &c, std::move(r),
               seconds_since(t0) + prep_seconds);
    prep_seconds = 0;
  }
}

/// A case that could not even be prepared (its expectations threw, e.g. out of memory): every fused
/// target of it fails with the reason, once.
void record_unprepared(verify_run& run, const model_entry& model, const std::vector<verify_target>& targets,
                       int index, const gen::case_recipe& recipe, const std::string& why) {
  for (const verify_target& target : targets) {
    if (target.is_reference) continue;
    check_result r;
    r.result = outcome::failed;
    r.message = "preparing the case: " + why;
    run.record(model, target.candidate.name, expectation_name(target), index, recipe, nullptr, r, 0.0);
  }
}

int has_fused(const std::vector<verify_target>& targets) {
  int n = 0;
  for (const verify_target& t : targets) n += !t.is_reference;
  return n;
}

/// The fuzz domain's case sizes: --case-size, else the device's own.
fuzz_budget fuzz_budget_of(const verify_options& opt, device_kind device) {
  if (opt.case_size == "cpu") return fuzz_budget::cpu();
  if (opt.case_size == "oracle") return fuzz_budget::oracle();
  if (opt.case_size == "cuda") return fuzz_budget::cuda();
  return device == device_kind::cuda ? fuzz_budget::cuda() : fuzz_budget::cpu();
}

/// The fuzz: `cases` recipes per model (those of the report's shard); fused targets on the recipe,
/// the reference's semantics on it when the loop oracle can afford it, else on an oracle-sized case
/// drawn for the same index. Case i is a function of (seed, i) alone, so a shard draws exactly the
/// cases an unsharded run draws at its indices.
void run_fuzz(verify_run& run, const std::vector<const model_entry*>& models) {
  const verify_options& opt = run.opt;
  const shard_spec shard = run.report.shard;
  const fuzz_budget budget = fuzz_budget_of(opt, run.device);
  const bool sharing = run.device == device_kind::cuda && shared_gpu_processes() > 1;
  const auto start = std::chrono::steady_clock::now();
  const int total = static_cast<int>(shard.size_of(opt.cases)) * static_cast<int>(models.size());
  int done = 0;
  // SIGTERM (a time box's `timeout`) or Ctrl-C: finish the current case, keep every finished one,
  // and mark the report incomplete (its JSON is still written) instead of dying with nothing kept.
  const bench::interrupt_guard stop_after_case;
  const auto stopped = [&] {
    const int signal = bench::stop_signal();
    if (signal == 0) return false;
    run.report.complete = false;
    run.report.incomplete_reason = fmt::format("stopped by {} after {} of {} planned cases",
                                               bench::signal_name(signal), done, total);
    run.stopped_by = signal;
    return true;
  };
  for (const model_entry* model : models) {
    if (stopped()) break;
    const std::vector<verify_target> targets = verify_targets(*model, run.device);
    for (int i = shard.index - 1; i < opt.cases; i += shard.count) {
      if (stopped()) break;
      gen::case_recipe recipe = gen::sample_case(*model, budget, opt.seed, i);
      if (!opt.inputs.empty()) recipe.inputs = *input_distribution_from_string(opt.inputs);
      if (!opt.params.empty()) recipe.params = opt.params == "default" ? ref::param_init::pytorch_default
                                                                        : ref::param_init::randomized;
      const auto run_case = [&] {
        const bool affordable = oracle_affordable(*model, model->canonicalize(recipe.config));
        gen::case_recipe reference_recipe = recipe;
        if (!affordable) {
          reference_recipe = gen::sample_case(*model, fuzz_budget::oracle(), opt.seed ^ 0x0AC1Eull, i);
          reference_recipe.inputs = recipe.inputs;
          reference_recipe.params = recipe.params;
        }
        std::optional<judged_case> prepared;
        double conditioning = 0;
        const auto prep_start = std::chrono::steady_clock::now();
        if (has_fused(targets) > 0) {
          try {
            prepared = prepare_case(*model, recipe, run.device);
            conditioning = case_conditioning(*model, prepared->first, run.device);
          } catch (const std::exception& e) {
            record_unprepared(run, *model, targets, i, recipe, one_line(e));
          }
        }
        const double prep_seconds = seconds_since(prep_start);
        for (const verify_target& target : targets)
          if (target.is_reference) {
            const model_case c = affordable && prepared ? prepared->first : gen::make_case(*model, reference_recipe);
            check_reference(run, *model, target, i, reference_recipe, c);
          }
        if (prepared) check_fused(run, *model, targets, i, recipe, *prepared, conditioning, prep_seconds);
      };
      // Sharing the GPU: a case that ran out of memory runs again once its neighbours may have let
      // go (up to 4 more times), and every case gives its cached memory back when done.
      run.buffering = sharing;
      for (int attempt = 0;; ++attempt) {
        run_case();
        if (!sharing) break;
        release_cached_device_memory();
        if (!run.pending_out_of_memory() || attempt == 4) break;
        run.pending.clear();
        std::this_thread::sleep_for(std::chrono::seconds(1 + 2 * attempt));
      }
      run.commit_pending();
      run.buffering = false;
      ++done;
      const double elapsed = seconds_since(start);
      const int failures = run.report.totals().incorrect + run.report.totals().failed;
      if (run.tty || done == total || done % std::max(1, total / 10) == 0)
        fmt::print(stderr, "{}[{}/{}] {} case {}  elapsed {:.0f}s  eta {:.0f}s  failures {}{}", run.tty ? "\r" : "", done,
                   total, model->id, i, elapsed, elapsed / done * (total - done), failures, run.tty ? "" : "\n");
    }
    if (!opt.inputs.empty() || !opt.params.empty())
      run.report.notes.push_back(fmt::format("{}: only {} inputs and {} parameters were drawn (--inputs/--params)",
                                             model->id, opt.inputs.empty() ? "all" : opt.inputs,
                                             opt.params.empty() ? "both regimes of" : opt.params));
  }
  if (run.tty) fmt::print(stderr, "\n");
}

/// One given config (--config), with `cases` seeds, or exactly the --case-seed; or a user's tensors.
void run_config(verify_run& run, const model_entry& model, const json& config,
                const std::optional<tensor_map>& user_tensors) {
  const verify_options& opt = run.opt;
  const std::vector<verify_target> targets = verify_targets(model, run.device);
  const json canonical = model.canonicalize(config);
  const bool affordable = oracle_affordable(model, canonical);
  if (!affordable)
    run.report.notes.push_back(fmt::format(
        "{}: the reference's semantics are checked against the fp64 loop oracle on oracle-sized fuzz cases; this "
        "config ({:.3g} conv-output elements, {:.3g} MACs) is above the oracle's budget, so only the fused "
        "implementations are judged here",
        model.id, model.problem_size(canonical), model.conv_macs(canonical)));
  if (has_fused(targets) == 0)
    run.report.notes.push_back(fmt::format("{}: no fused implementation on {}", model.id, to_string(run.device)));
  const int n = opt.case_seed || user_tensors ? 1 : opt.cases;
  for (int i = 0; i < n; ++i) {
    gen::case_recipe recipe;
    recipe.config = canonical;
    recipe.seed = opt.case_seed.value_or(opt.seed + static_cast<uint64_t>(i));
    recipe.inputs = opt.inputs.empty() ? input_distribution::uniform : *input_distribution_from_string(opt.inputs);
    recipe.params = opt.params == "default" ? ref::param_init::pytorch_default : ref::param_init::randomized;
    std::optional<judged_case> prepared;
    const auto prep_start = std::chrono::steady_clock::now();
    try {
      judged_case c;
      c.first = user_tensors ? case_from_tensors(model, canonical, *user_tensors) : gen::make_case(model, recipe);
      if (has_fused(targets) > 0) {
        c.fresh = gen::make_fresh_case(model, recipe);
        c.first_expected = reference_expectations(model, c.first, run.device);
        c.fresh_expected = reference_expectations(model, c.fresh, run.device);
      }
      prepared = std::move(c);
    } catch (const std::invalid_argument&) {
      throw;  // a user's tensors that do not fit the config: bad input, exit 2
    } catch (const std::exception& e) {
      record_unprepared(run, model, targets, i, recipe, one_line(e));
    }
    if (!prepared) continue;
    const double conditioning = has_fused(targets) > 0 ? case_conditioning(model, prepared->first, run.device) : 0.0;
    const double prep_seconds = seconds_since(prep_start);
    for (const verify_target& target : targets)
      if (target.is_reference && affordable) check_reference(run, model, target, i, recipe, prepared->first);
    if (has_fused(targets) > 0) check_fused(run, model, targets, i, recipe, *prepared, conditioning, prep_seconds);
  }
}

/// A repro bundle's config.json: the bundle's implementation on its saved tensors, once.
void run_bundle(verify_run& run, const std::string& path, const json& meta_in) {
  const json& meta = meta_in;
  const model_entry& model = find_model(meta.at("model").get<std::string>());
  require_fits_in_memory(model, model.canonicalize(meta.at("config")), run.device);
  const loaded_bundle b = load_repro_bundle(path);
  const std::string impl_name = meta.at("implementation").get<std::string>();
  gen::case_recipe recipe;
  recipe.config = model.canonicalize(meta.at("config"));
  recipe.seed = meta.at("case_seed").get<uint64_t>();
  recipe.inputs = input_distribution_from_string(meta.value("inputs", std::string("uniform"))).value_or(input_distribution::uniform);
  recipe.params = meta.value("params", std::string("random")) == "default" ? ref::param_init::pytorch_default
                                                                           : ref::param_init::randomized;
  judged_case c;
  c.first = case_from_tensors(model, recipe.config, b.tensors);
  c.fresh = b.tensors.count("fresh.input") ? case_from_tensors(model, recipe.config, b.tensors, "fresh.")
                                           : gen::make_fresh_case(model, recipe);
  fmt::print(stderr, "verify: replaying {} ({} {} on {}, recorded {}{}{}) from its saved tensors\n", path, model.id,
             impl_name, to_string(run.device), meta.value("outcome", std::string("?")),
             meta.contains("mismatches") && !meta.at("mismatches").empty() ? ": " : "",
             meta.contains("mismatches") ? fmt::format("{}", meta.at("mismatches").dump()) : "");
  for (const verify_target& target : verify_targets(model, run.device)) {
    if (target.candidate.name != impl_name) continue;
    if (target.is_reference) {
      check_reference(run, model, target, 0, recipe, c.first);
      return;
    }
    const auto prep_start = std::chrono::steady_clock::now();
    c.first_expected = reference_expectations(model, c.first, run.device);
    c.fresh_expected = reference_expectations(model, c.fresh, run.device);
    const double conditioning = case_conditioning(model, c.first, run.device);
    check_fused(run, model, {target}, 0, recipe, c, conditioning, seconds_since(prep_start));
    return;
  }
  throw std::invalid_argument("bundle " + path + ": implementation " + impl_name + " does not exist on " +
                              std::string(to_string(run.device)) + " in this build");
}

std::vector<const model_entry*> selected_models(const verify_options& opt, const std::optional<json>& given) {
  std::vector<const model_entry*> models;
  if (opt.models.empty() && given && given->contains("model") && given->at("model").is_string()) {
    models.push_back(&find_model(given->at("model").get<std::string>()));
  } else if (opt.models.empty()) {
    if (given) throw std::invalid_argument("--config needs --model (which model the config is for)");
    for (const model_entry& m : all_models()) models.push_back(&m);
  } else {
    for (const std::string& id : opt.models) models.push_back(&find_model(id));
  }
  return models;
}

void validate(const verify_options& opt) {
  if (!std::isfinite(opt.atol) || opt.atol < 0)
    throw std::invalid_argument(fmt::format("atol = {}: must be a finite number >= 0", opt.atol));
  if (!std::isfinite(opt.rtol) || opt.rtol < 0)
    throw std::invalid_argument(fmt::format("rtol = {}: must be a finite number >= 0", opt.rtol));
  if (opt.cases < 1) throw std::invalid_argument("cases = " + std::to_string(opt.cases) + ": must be >= 1");
  if (!opt.inputs.empty() && !input_distribution_from_string(opt.inputs))
    throw std::invalid_argument("inputs = " + opt.inputs + ": must be uniform, normal, offset, border or sparse");
  if (!opt.params.empty() && opt.params != "random" && opt.params != "default")
    throw std::invalid_argument("params = " + opt.params + ": must be random or default");
  if (opt.case_seed && opt.config.empty())
    throw std::invalid_argument("--case-seed needs --config (it picks the parameters and inputs of one config)");
  if (!opt.tensors.empty() && opt.config.empty())
    throw std::invalid_argument("--tensors needs --config (the config the tensors belong to) and --model");
  if (!opt.config.empty() && (!opt.shard.empty() || !opt.devices.empty()))
    throw std::invalid_argument(std::string(opt.shard.empty() ? "--devices" : "--shard") +
                                " splits a fuzz run's cases; a --config replay is not split");
  if (!opt.shard.empty()) (void)parse_shard(opt.shard);
  if (opt.per_device < 1 || opt.per_device > 64)
    throw std::invalid_argument(fmt::format("--per-device {}: must be 1 to 64", opt.per_device));
  if (opt.per_device > 1 && opt.devices.empty())
    throw std::invalid_argument("--per-device needs --devices (the devices whose shard processes it multiplies)");
  if (!opt.case_size.empty() && opt.case_size != "cuda" && opt.case_size != "cpu" && opt.case_size != "oracle")
    throw std::invalid_argument("case-size = " + opt.case_size + ": must be cuda, cpu or oracle");
  if (!opt.case_size.empty() && !opt.config.empty())
    throw std::invalid_argument("--case-size sizes the fuzz cases; a --config replay has its own sizes");
}


/// The arguments of the shard process that runs `shard` of this fuzz run on `device` and writes its
/// report to `json_path`: every option that decides the cases or their verdicts, nothing else.
std::vector<std::string> shard_arguments(const verify_options& opt, const std::vector<const model_entry*>& models,
                                         device_kind device, const check_options& checks, const shard_spec& shard,
                                         const std::string& json_path) {
  std::vector<std::string> args{"verify",
                                "--device",
                                std::string(to_string(device)),
                                "--cases",
                                std::to_string(opt.cases),
                                "--seed",
                                std::to_string(opt.seed),
                                fmt::format("--atol={}", checks.atol),  // shortest text that reads back exactly
                                fmt::format("--rtol={}", checks.rtol),
                                "--shard",
                                to_string(shard),
                                "--json",
                                json_path};
  if (!opt.inputs.empty()) args.insert(args.end(), {"--inputs", opt.inputs});
  if (!opt.params.empty()) args.insert(args.end(), {"--params", opt.params});
  if (!opt.case_size.empty()) args.insert(args.end(), {"--case-size", opt.case_size});
  if (!checks.fp64_rule) args.push_back("--strict-fp32");
  if (!opt.save_failures.empty()) args.insert(args.end(), {"--save-failures", opt.save_failures});
  args.push_back("--model");
  for (const model_entry* m : models) args.push_back(m->id);
  return args;
}

/// The parent's progress line over every shard process, from the "[done/total] ... failures F" lines
/// they write: live on a terminal, else a line at every tenth of the run.
class fan_out_progress {
 public:
  fan_out_progress(std::size_t processes, int total, bool tty)
      : m_done(processes, 0), m_failures(processes, 0), m_total(total), m_tty(tty),
        m_start(std::chrono::steady_clock::now()) {}

  /// Consumes a shard's progress line; false for any other line (forwarded as it is).
  bool consume(std::size_t process, const std::string& line) {
    int done = 0, total = 0;
    if (std::sscanf(line.c_str(), "[%d/%d]", &done, &total) != 2) return false;
    m_done[process] = done;
    if (const auto at = line.rfind("failures "); at != std::string::npos)
      m_failures[process] = std::atoi(line.c_str() + at + 9);
    int all = 0, failures = 0;
    for (std::size_t i = 0; i < m_done.size(); ++i) {
      all += m_done[i];
      failures += m_failures[i];
    }
    const int step = m_total > 0 ? all * 10 / m_total : 10;
    if (!m_tty && step == m_printed_step) return true;
    m_printed_step = step;
    const double elapsed = seconds_since(m_start);
    fmt::print(stderr, "{}[{}/{}] on {} devices  elapsed {:.0f}s  eta {:.0f}s  failures {}{}", m_tty ? "\r" : "", all,
               m_total, m_done.size(), elapsed, all > 0 ? elapsed / all * (m_total - all) : 0.0, failures,
               m_tty ? "" : "\n");
    m_open = m_tty;
    return true;
  }
  /// Ends a live line before other output.
  void finish() {
    if (m_open) fmt::print(stderr, "\n");
    m_open = false;
  }

 private:
  std::vector<int> m_done, m_failures;
  int m_total;
  bool m_tty;
  std::chrono::steady_clock::time_point m_start;
  int m_printed_step = -1;
  bool m_open = false;
};

/// `--devices`: the run's shard split once more, one piece per device (sub_shard), each piece a
/// `fusebench verify --shard` child process; their reports merged into `run.report`. Returns the exit
/// status when a child did not finish its piece (its lines were forwarded), else nullopt.
std::optional<int> run_on_devices(verify_run& run, const std::vector<device_slot>& slots,
                                  const std::vector<const model_entry*>& models) {
  const verify_options& opt = run.opt;
  const std::filesystem::path scratch = make_scratch_folder(std::filesystem::temp_directory_path().string(),
                                                            "fusebench-verify-");
  std::vector<shard_process> processes;
  std::vector<std::string> reports;  // where each process writes its --json
  int total = 0;
  for (std::size_t d = 0; d < slots.size(); ++d) {
    const shard_spec piece = sub_shard(run.report.shard, static_cast<int>(d), static_cast<int>(slots.size()));
    reports.push_back((scratch / fmt::format("shard-{}-of-{}.json", piece.index, piece.count)).string());
    processes.push_back({slots[d], piece, shard_arguments(opt, models, run.device, run.checks, piece, reports.back())});
    total += static_cast<int>(piece.size_of(opt.cases) * static_cast<int64_t>(models.size()));
  }
  fmt::print(stderr, "verify: {}{} shard processes ({}): shards {} to {} of {}\n",
             run.report.shard.whole() ? "" : "shard " + to_string(run.report.shard) + " in ", slots.size(),
             opt.devices, to_string(processes.front().shard), to_string(processes.back().shard),
             processes.front().shard.count);
  fan_out_progress progress(processes.size(), total, run.tty);
  // A Ctrl-C or SIGTERM is passed on to the children (their own process group does not get it), and
  // this process cleans up after them, as one verify process killed so would leave nothing behind.
  const bench::interrupt_guard on_interrupt;
  const std::vector<shard_exit> exits = run_shard_processes(
      processes, [&](std::size_t i, const std::string& line) { return progress.consume(i, line); },
      bench::stop_signal);
  progress.finish();
  if (const int signal = bench::stop_signal(); signal != 0) {
    fb::detail::remove_tree(scratch);
    fmt::print(stderr, "verify: interrupted by {}; the shard processes stopped, nothing was written\n",
               bench::signal_name(signal));
    return 128 + signal;  // the shell's convention for "killed by this signal"
  }
  int status = exit_ok;
  for (std::size_t i = 0; i < exits.size(); ++i)
    if (exits[i].signal != 0 || (exits[i].exit_code != exit_ok && exits[i].exit_code != exit_failure)) {
      print_error("shard process " + describe_exit(processes[i], exits[i]));
      status = std::max(status, exits[i].exit_code == exit_usage ? exit_usage : exit_failure);
    }
  if (status != exit_ok) {
    fmt::print(stderr, "verify: the shard processes' reports so far are in {}\n", scratch.string());
    return status;
  }
  std::vector<std::pair<std::string, verify_report>> parts;
  for (std::size_t i = 0; i < processes.size(); ++i) {
    const shard_process& p = processes[i];
    std::ifstream in(reports[i]);
    if (!in)
      throw std::runtime_error(fmt::format("{}: the shard process wrote no report at {}", p.slot.label, reports[i]));
    parts.emplace_back(fmt::format("{} (shard {})", p.slot.label, to_string(p.shard)),
                       verify_report_from_json(json::parse(in), reports[i]));
  }
  merge_rules rules;
  rules.target = run.report.shard;
  run.report = merge_verify_reports(parts, rules);
  fb::detail::remove_tree(scratch);
  return std::nullopt;
}

int run_verify(const verify_options& opt) {
  validate(opt);
  std::optional<json> given;
  if (!opt.config.empty()) given = read_config_argument(opt.config);
  const bool bundle = given && is_repro_bundle(*given);
  // A bundle replays on its own device and tolerances unless the command line names others.
  device_kind device = opt.device.empty() ? best_device() : device_from_string(opt.device);
  check_options checks{opt.atol, opt.rtol, true, true, !opt.strict_fp32};
  if (bundle) {
    if (!opt.device_given) device = device_from_string(given->value("device", std::string("cpu")));
    if (!opt.atol_given) checks.atol = given->value("atol", opt.atol);
    if (!opt.rtol_given) checks.rtol = given->value("rtol", opt.rtol);
    if (!opt.strict_fp32) checks.fp64_rule = given->value("fp64_rule", true);
  }
  std::optional<std::vector<device_slot>> slots;
  if (!opt.devices.empty()) {
    slots = parse_devices(opt.devices, cuda_device_count(), std::getenv("CUDA_VISIBLE_DEVICES"));
    const device_kind on = slots->front().cpu ? device_kind::cpu : device_kind::cuda;
    if (opt.device_given && device != on)
      throw std::invalid_argument(fmt::format("--devices {} runs on {}, but --device says {}", opt.devices,
                                              to_string(on), opt.device));
    device = on;
    for (const device_slot& s : *slots)
      if (!s.cpu && cuda_device_name(s.gpu) != cuda_device_name(slots->front().gpu))
        throw std::invalid_argument(fmt::format(
            "--devices {}: GPU {} is a {} but GPU {} is a {}; one run is of one kind of GPU (run them separately)",
            opt.devices, slots->front().gpu, cuda_device_name(slots->front().gpu), s.gpu, cuda_device_name(s.gpu)));
    slots = per_device_slots(*slots, opt.per_device);
  }
  if (device == device_kind::cuda && !cuda_available())
    throw std::invalid_argument("device = cuda: no CUDA device or a CPU-only libtorch");
  if (!opt.save_failures.empty()) require_writable_folder(opt.save_failures);
  if (!opt.json_out.empty()) require_writable_file(opt.json_out, "--json");
  if (!opt.junit_out.empty()) require_writable_file(opt.junit_out, "--junit");

  verify_run run{opt, device, checks, {}, isatty(fileno(stderr)) != 0};
  run.report.device = device_name(device);
  run.report.git_commit = bench::describe_build().git_commit;
  run.report.seed = opt.seed;
  run.report.atol = checks.atol;
  run.report.rtol = checks.rtol;
  run.report.fp64_rule = checks.fp64_rule;
  run.report.shard = opt.shard.empty() ? shard_spec{} : parse_shard(opt.shard);
  run.report.scope.mode = bundle ? "bundle" : given ? "config" : "fuzz";
  run.report.scope.device = std::string(to_string(device));
  run.report.scope.cases_per_model = opt.cases;
  run.report.scope.inputs = opt.inputs;
  run.report.scope.params = opt.params;
  run.report.scope.case_size = opt.case_size;

  if (bundle) {
    run.report.scope.models = {given->value("model", std::string())};
    run.report.scope.cases_per_model = 1;
    run_bundle(run, opt.config, *given);
  } else if (given) {
    const std::vector<const model_entry*> models = selected_models(opt, given);
    std::optional<tensor_map> user_tensors;
    if (!opt.tensors.empty()) {
      if (models.size() != 1) throw std::invalid_argument("--tensors needs exactly one --model");
      user_tensors = load_tensor_file(opt.tensors);
      (void)case_from_tensors(*models.front(), models.front()->canonicalize(*given), *user_tensors);  // fit, or exit 2
    }
    for (const model_entry* m : models) {  // an invalid config, or one that cannot fit: exit 2 before any work
      (void)m->canonicalize(*given);
      require_fits_in_memory(*m, m->canonicalize(*given), device);
    }
    for (const model_entry* m : models) run.report.scope.models.push_back(m->id);
    fmt::print(stderr, "verify: {} model(s), one config, {} case(s) on {} (atol {}, rtol {})\n", models.size(),
               opt.case_seed || user_tensors ? 1 : opt.cases, run.report.device, checks.atol, checks.rtol);
    for (const model_entry* m : models) run_config(run, *m, *given, user_tensors);
  } else {
    const std::vector<const model_entry*> models = selected_models(opt, given);
    for (const model_entry* m : models) run.report.scope.models.push_back(m->id);
    fmt::print(stderr, "verify: {} model(s) x {} case(s){} on {} (seed {}, atol {}, rtol {})\n", models.size(),
               opt.cases,
               run.report.shard.whole() ? std::string()
                                        : fmt::format(", shard {} ({} of them)", to_string(run.report.shard),
                                                      run.report.shard.size_of(opt.cases)),
               slots ? opt.devices : run.report.device, opt.seed, checks.atol, checks.rtol);
    if (slots) {
      if (const std::optional<int> status = run_on_devices(run, *slots, models)) return *status;
    } else {
      run_fuzz(run, models);
    }
  }

  print_verify_table(run.report, std::cout);
  if (!opt.json_out.empty()) {
    std::ofstream f(opt.json_out);
    f << verify_report_to_json(run.report).dump(2) << "\n";
  }
  if (!opt.junit_out.empty()) {
    std::ofstream f(opt.junit_out);
    write_junit(run.report, f);
  }
  std::cout.flush();
  const int verdict = print_verdict(run.report, std::cout);
  if (run.stopped_by != 0) return 128 + run.stopped_by;  // stopped, its finished cases kept (shell convention)
  return verdict == 0 ? exit_ok : exit_failure;
}

}  // namespace

void add_verify_command(CLI::App& app, command_action& run) {
  auto opt = std::make_shared<verify_options>();
  CLI::App* cmd = app.add_subcommand(
      "verify", "Fuzz every implementation against the libtorch reference (and the reference against an fp64 oracle)");
  cmd->add_option("--model", opt->models, "Model id(s) or KernelBench number(s); default all")->take_all();
  CLI::Option* cases = cmd->add_option("--cases", opt->cases, "Cases per model")->capture_default_str();
  cmd->add_option("--seed", opt->seed, "Seed: the same seed gives the same cases")->capture_default_str();
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
  cmd->add_option("--case-seed", opt->case_seed, "With --config: the case seed (parameters and inputs)");
  cmd->add_option("--inputs", opt->inputs,
                  "Input distribution: uniform, normal, offset, border, sparse (with --config: of that config; "
                  "without: every fuzz case draws only this one)");
  cmd->add_option("--params", opt->params,
                  "Parameters: random or default (PyTorch's init); fuzzing draws both unless this is given");
  cmd->add_flag("--strict-fp32", opt->strict_fp32,
               "Judge every case against the fp32 reference alone (no fp64 rule); with --atol 0 --rtol 0 it asks "
               "for bitwise agreement with libtorch's fp32 result. A diagnostic: the gate never uses it");
  cmd->add_option("--json", opt->json_out, "Also write the results as JSON to FILE (per row and per case)");
  cmd->add_option("--junit", opt->junit_out, "Also write a JUnit XML report to FILE (for CI systems)");
  cmd->add_option("--shard", opt->shard,
                  "K/N: run only case indices i with i % N == K-1 (K from 1) of each model; N such runs hold "
                  "every case once, and `fusebench merge` joins their --json files into the unsharded run's")
      ->check(non_empty("K/N, e.g. 2/4"));
  cmd->add_option("--devices", opt->devices,
                  "all, or GPU positions 0,1,...: one shard process per GPU (CUDA_VISIBLE_DEVICES), run at once "
                  "and merged; output and exit status as of one process. cpu,cpu,...: that many shard processes "
                  "on the CPU (to test the fan-out without a GPU)")
      ->check(non_empty("all, GPU positions like 0,1, or cpu,cpu"));
  cmd->add_option("--per-device", opt->per_device,
                  "With --devices: this many shard processes on each device (one verify process leaves a GPU "
                  "mostly idle: its cases are small and its host work serial)")
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
      "   (then: fusebench merge shard*.json --out verify.json)");
  cmd->callback([opt, &run, cases, device, atol, rtol] {
    opt->cases_given = cases->count() > 0;
    opt->device_given = device->count() > 0;
    opt->atol_given = atol->count() > 0;
    opt->rtol_given = rtol->count() > 0;
    run = [opt] {
      try {
        return run_verify(*opt);
      } catch (const ref::config_error& e) {
        print_error(std::string("invalid config: ") + e.what());
        return exit_usage;
      } catch (const json::exception& e) {
        print_error(std::string("bad --config JSON: ") + one_line(e));
        return exit_usage;
      } catch (const std::invalid_argument& e) {
        print_error(one_line(e));
        return exit_usage;
      } catch (const std::exception& e) {
        print_error(one_line(e));
        return exit_failure;
      }
    };
  });
}

}  // namespace fb::cli
