#include "harness/verify/verify_run.h"

#include <c10/util/Exception.h>
#include <fmt/core.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "harness/detail/remove_tree.h"
#include "harness/device/device.h"
#include "harness/fan_out/fan_out.h"
#include "harness/format/live_line.h"
#include "harness/format/shell_quote.h"
#include "harness/model/registry.h"
#include "harness/plugin/plugin_loader.h"
#include "harness/process/build_info.h"
#include "harness/process/exit_status.h"
#include "harness/process/interrupt.h"
#include "harness/results/detail/atomic_file.h"
#include "harness/verify/repro_bundle.h"
#include "harness/verify/verify_plan.h"
#include "harness/verify/verify_report.h"

namespace fb::verify {

std::string one_line(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  std::string what = c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
  const auto nl = what.find('\n');
  return nl == std::string::npos ? what : what.substr(0, nl);
}

namespace {

using verify_options = options;
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

/// An output file's folder takes files now, so a bad path fails before the run, not after it. The
/// probe is the temporary file the final write goes through (PATH.tmp, renamed over PATH when the
/// report is complete): the output itself is not touched, so an interrupted or failed run never
/// leaves an empty --json or --junit behind, nor truncates an earlier one. "-" is stdout.
void require_writable_file(const std::string& path, const char* flag) {
  if (path == "-") return;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::invalid_argument(std::string(flag) + " " + path + ": is a directory, not a file");
  const std::string probe = path + ".tmp";
  const bool existed = std::filesystem::exists(probe, ec);
  {
    std::ofstream f(probe, std::ios::app);
    if (!f) throw std::invalid_argument(std::string(flag) + " " + path + ": cannot write the file");
  }
  if (!existed) std::filesystem::remove(probe, ec);
}

/// Writes `content` to `path` whole (a temporary file in its folder, renamed into place), or to
/// stdout for "-".
void write_output(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::cout << content << std::flush;
    return;
  }
  fb::detail::write_file_atomically(path, content);
}

/// The command that replays a case exactly (config, seed, distribution, regime, device, tolerances;
/// the plug-ins loaded, for a plug-in's case).
std::string repro_line(const model_entry& model, const gen::case_recipe& recipe, device_kind device,
                       const check_options& checks, const std::string& implementation) {
  const bool external = implementation.rfind(plugin::name_prefix, 0) == 0;
  return gen::repro_command(model, recipe, device) + fmt::format(" --atol {} --rtol {}", checks.atol, checks.rtol) +
         (checks.fp64_rule ? "" : " --strict-fp32") + (external ? plugin::plugin_arguments() : std::string());
}

/// Everything a run shares: options, device, the report and where failures go.
struct verify_run {
  const verify_options& opt;
  device_kind device;
  check_options checks;
  verify_report report;
  bool tty = false;
  int stopped_by = 0;  ///< the signal that stopped the run after a case (0: it ran to the end)

  /// True once SIGINT or SIGTERM was recorded: the report is marked incomplete, saying how far the
  /// run got (`done` of `total` planned cases), and the caller stops before its next case.
  bool stop_requested(int done, int total) {
    const int signal = stop_signal();
    if (signal == 0) return false;
    if (stopped_by == 0) {
      report.complete = false;
      report.incomplete_reason =
          fmt::format("stopped by {} after {} of {} planned cases", signal_name(signal), done, total);
      stopped_by = signal;
    }
    return true;
  }
  std::unique_ptr<std::ofstream> stream;  ///< --case-stream: every verdict, a JSON line each, flushed

  /// Records one verdict; prints a failure with its repro line and saves a bundle when asked.
  void record(const model_entry& model, const std::string& implementation, const std::string& against, int index,
              const gen::case_recipe& recipe, const judged_case* judged, check_result r, double seconds) {
    note_non_finite(model, implementation, index, r);
    verify_case_record rec{model.id,
                           implementation,
                           index,
                           judged != nullptr ? judged->first.config.canonical : recipe.config,
                           recipe.seed,
                           std::string(to_string(recipe.inputs)),
                           std::string(to_string(recipe.params)),
                           r.result,
                           r.rule,
                           r.message,
                           r.vs_expected.max_abs,
                           r.vs_expected.worst_ratio,
                           seconds,
                           "",
                           ""};
    std::string line;  // the failure's lines, printed with the verdict
    if (r.result != outcome::passed) rec.repro = repro_line(model, recipe, device, checks, implementation);
    // A declined case is no failure: counted in its own column, its reason in the JSON, not printed.
    if (r.result != outcome::passed && r.result != outcome::declined) {
      line = fmt::format("{} {} case {}: {}: {} [rule {}]\n    repro: {}", model.id, implementation, index,
                                     to_string(r.result), r.message, to_string(r.rule), rec.repro);
      if (!opt.save_failures.empty() && judged != nullptr) {
        try {
          rec.bundle = save_repro_bundle({model.id, implementation, device, recipe, checks, judged, r, rec.repro},
                                         opt.save_failures);
          // A plug-in's case replays with its libraries loaded, as its repro line does.
          const bool external = implementation.rfind(plugin::name_prefix, 0) == 0;
          line += "\n    saved: " + rec.bundle + "  (replay: fusebench verify --config " +
                  format::shell_quoted(rec.bundle + "/config.json") +
                  (external ? plugin::plugin_arguments() : std::string()) + ")";
        } catch (const std::exception& e) {
          line += "\n    bundle not saved: " + one_line(e);
        }
      }
    }
    pending.push_back({std::move(rec), std::move(r), against, std::move(line)});
    if (!buffering) commit_pending();
  }

  /// Non-finite expectations (non-finite inputs or parameters, e.g. a --tensors file of inf): NaN
  /// matching NaN is allclose's rule, but it compares no value. A case whose expectation holds no
  /// finite element at all verified nothing about the arithmetic: it is not judged (never passed), and
  /// says why. A case with some such elements passes on the rest, with a note of how many were not compared.
  void note_non_finite(const model_entry& model, const std::string& implementation, int index, check_result& r) {
    const error_stats& s = r.vs_expected;
    if (r.result != outcome::passed || s.elements == 0) return;
    if (s.finite_expected == 0) {
      r.result = outcome::not_run;
      r.rule = verdict_rule::none;
      r.message = fmt::format("not judged: the expected output holds no finite value ({} elements NaN/Inf: non-finite "
                              "inputs or parameters?), so no value was compared; {} of them are NaN on both sides",
                              s.elements, s.nan_both);
      return;
    }
    if (s.nan_both > 0 && non_finite_notes++ < 5)
      report.notes.push_back(fmt::format(
          "{} {} case {}: {} of {} output elements are NaN in both the expectation and the output: they match "
          "(torch.allclose's equal_nan) but their values were not compared",
          model.id, implementation, index, s.nan_both, s.elements));
  }
  int non_finite_notes = 0;

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
      if (!v.line.empty()) fmt::print(stderr, "{}{}\n", tty ? format::cleared_line : "", v.line);
      report.add(v.rec, v.r, v.against);
      // Written through at once: the verdicts before a crash reach the parent (run_isolated).
      if (stream) *stream << verdict_to_json(v.rec, v.r).dump() << std::endl;
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

/// Whether this process runs the plug-ins' targets in child processes (--isolate, the default when
/// plug-ins are loaded, in a fuzz run); an isolated child itself (--only) runs its one target
/// in-process, and so does a --config replay (a crash's repro line then shows the crash itself).
bool isolating(const verify_options& opt) {
  return opt.isolate && opt.only.empty() && opt.config.empty() && !plugin::loaded_plugins().empty();
}

/// The targets this process checks itself: --only's one, else every target of the device but the
/// plug-ins' when they run isolated.
std::vector<verify_target> in_process_targets(const verify_options& opt, const model_entry& model, device_kind device) {
  std::vector<verify_target> kept;
  for (verify_target& t : verify_targets(model, device)) {
    const bool skip = !opt.only.empty() ? t.is_reference || t.candidate.name != opt.only
                                        : isolating(opt) && t.candidate.external;
    if (!skip) kept.push_back(std::move(t));
  }
  return kept;
}

/// The plug-ins' targets that run in child processes (none unless isolating).
std::vector<verify_target> isolated_targets(const verify_options& opt, const model_entry& model, device_kind device) {
  std::vector<verify_target> isolated;
  if (!isolating(opt)) return isolated;
  for (verify_target& t : verify_targets(model, device))
    if (!t.is_reference && t.candidate.external) isolated.push_back(std::move(t));
  return isolated;
}

/// The plug-ins' implementations this run judges ("plugin:<name>", sorted): every one loaded, or
/// --only's alone when it names one.
std::vector<std::string> judged_plugins(const verify_options& opt) {
  std::set<std::string> names;
  for (const model_entry& m : all_models())
    for (const implementation& impl : m.fused)
      if (impl.external && (opt.only.empty() || impl.name == opt.only)) names.insert(impl.name);
  return {names.begin(), names.end()};
}

/// Case i of a fuzz run: a function of (seed, i), with --inputs and --params applied.
gen::case_recipe fuzz_recipe(const verify_options& opt, const model_entry& model, const fuzz_budget& budget, int i) {
  gen::case_recipe recipe = gen::sample_case(model, budget, opt.seed, i);
  if (!opt.inputs.empty()) recipe.inputs = *input_distribution_from_string(opt.inputs);
  if (!opt.params.empty()) recipe.params = *param_init_from_string(opt.params);
  return recipe;
}

/// The arguments of an isolated child: this run's cases of `model` (its shard) from index `from` on,
/// only `implementation`, every verdict streamed to `stream_path`.
std::vector<std::string> isolated_arguments(const verify_run& run, const model_entry& model,
                                            const std::string& implementation, int from,
                                            const std::string& stream_path) {
  const verify_options& opt = run.opt;
  std::vector<std::string> args = fan_out::shard_arguments("verify", run.device, opt.seed, run.report.shard);
  args.insert(args.end(), {"--cases", std::to_string(opt.cases), fmt::format("--atol={}", run.checks.atol),
                           fmt::format("--rtol={}", run.checks.rtol), "--model", model.id, "--only", implementation,
                           "--from-case", std::to_string(from), "--case-stream", stream_path, "--no-isolate"});
  if (!opt.inputs.empty()) args.insert(args.end(), {"--inputs", opt.inputs});
  if (!opt.params.empty()) args.insert(args.end(), {"--params", opt.params});
  if (!opt.case_size.empty()) args.insert(args.end(), {"--case-size", opt.case_size});
  if (!run.checks.fp64_rule) args.push_back("--strict-fp32");
  if (!opt.save_failures.empty()) args.insert(args.end(), {"--save-failures", opt.save_failures});
  for (const std::string& p : plugin::loaded_plugins()) args.insert(args.end(), {"--plugin", p});
  return args;
}

/// --isolate: a plug-in's cases of `model` in a child process (`fusebench verify --only plugin:<name>`,
/// the fan-out's process runner), its verdicts streamed back line by line. A child that ends before
/// its shard's last verdict took the case after its last verdict with it: that case is recorded
/// failed, with its repro line, as "crashed (signal N)", "exited (status N)" (a plug-in that calls
/// exit(), whatever the status) or "timed out" (no verdict within --case-timeout: the child is
/// killed), and a new child goes on from the next case. A child still running 5 s after a stop
/// request passed on to it (a hung plug-in ignores it) is killed too.
void run_isolated(verify_run& run, const model_entry& model, const verify_target& target, const fuzz_budget& budget) {
  const verify_options& opt = run.opt;
  const shard_spec shard = run.report.shard;
  int first = shard.index - 1;  // the shard's first case index
  if (first >= opt.cases) return;  // the shard holds none of the cases
  const std::string scratch =
      fan_out::make_scratch_folder(std::filesystem::temp_directory_path().string(), "fusebench-isolate-");
  fmt::print(stderr, "verify: {} {}: its cases in an isolated child process (--isolate)\n", model.id,
             target.candidate.name);
  int shard_last = shard.index - 1;  // the shard's last case index
  while (shard_last + shard.count < opt.cases) shard_last += shard.count;
  for (int child = 0;; ++child) {
    const std::string stream_path = (std::filesystem::path(scratch) / fmt::format("verdicts-{}.jsonl", child)).string();
    const fan_out::shard_process process{fan_out::own_device_slot(target.candidate.name, run.device), shard,
                                         isolated_arguments(run, model, target.candidate.name, first, stream_path)};
    // The child's failure lines (a case, its repro, its bundle) and progress are passed on; its header
    // and a crash's backtrace are not (the crash is recorded below).
    const auto hook = [&model](std::size_t, const std::string& line) {
      return !(line.rfind(model.id + " ", 0) == 0 || line.rfind("    ", 0) == 0 || line.rfind('[', 0) == 0);
    };
    // The time limit runs from the child's start and from each verdict it streams (the file grows).
    auto verdict_at = std::chrono::steady_clock::now();
    std::optional<std::chrono::steady_clock::time_point> stop_at;
    std::uintmax_t streamed = 0;
    bool timed_out = false;
    const auto overdue = [&](std::size_t) {
      const auto now = std::chrono::steady_clock::now();
      std::error_code ec;
      if (const std::uintmax_t size = std::filesystem::file_size(stream_path, ec); !ec && size != streamed) {
        streamed = size;
        verdict_at = now;
      }
      if (stop_signal() != 0) {
        if (!stop_at) stop_at = now;
        return now - *stop_at > std::chrono::seconds(5);
      }
      timed_out = now - verdict_at > std::chrono::seconds(opt.case_timeout);
      return timed_out;
    };
    const fan_out::shard_exit exit = fan_out::run_shard_processes({process}, hook, stop_signal, overdue).front();
    int last = -1;
    std::ifstream in(stream_path);
    for (std::string line; std::getline(in, line);) {
      json j;
      try {
        j = json::parse(line);
      } catch (const json::exception&) {
        break;  // the last line, cut short by the crash
      }
      auto [record, check] = verdict_from_json(j, stream_path);
      last = std::max(last, record.index);
      run.report.add(record, check, expectation_name(target));
    }
    if (stop_signal() != 0) break;
    const bool exited_normally = exit.signal == 0 && (exit.exit_code == exit_ok || exit.exit_code == exit_failure);
    // Only a child that streamed its shard's last verdict finished: an exit before it is no verdict.
    if (exited_normally && last >= shard_last) break;
    const std::string how = timed_out          ? fmt::format("timed out (no verdict within {} s; the isolated process "
                                                             "was killed, --case-timeout)", opt.case_timeout)
                            : exit.signal != 0 ? fan_out::crash_message(exit.signal)
                                               : fmt::format("exited (status {})", exit.exit_code);
    const int crashed = last >= 0 ? last + shard.count : first;
    if (crashed >= opt.cases) {
      run.report.notes.push_back(fmt::format("{} {}: the isolated process {} after its last case", model.id,
                                             target.candidate.name, how));
      break;
    }
    check_result r;
    r.result = outcome::failed;
    r.message = how;
    run.record(model, target.candidate.name, expectation_name(target), crashed, fuzz_recipe(opt, model, budget, crashed),
               nullptr, r, 0.0);
    first = crashed + shard.count;
    if (first >= opt.cases) break;
  }
  fb::detail::remove_tree(scratch);
}

/// A plug-in's implementation of `model` registered for other devices only (a CUDA-only plug-in on
/// --device cpu): each of the shard's cases is recorded not run, with the reason, and one note says
/// it (a skipped implementation is not a passed one: the run exits 1).
void record_other_device_plugins(verify_run& run, const model_entry& model, const fuzz_budget& budget) {
  const verify_options& opt = run.opt;
  if (!opt.only.empty()) return;  // an isolated child, or one implementation asked for by name
  std::map<std::string, std::set<std::string>> elsewhere;  // name -> the devices it runs on
  std::set<std::string> here;
  for (const implementation& impl : model.fused) {
    if (!impl.external) continue;
    if (impl.device == run.device) here.insert(impl.name);
    else elsewhere[impl.name].insert(std::string(to_string(impl.device)));
  }
  const shard_spec shard = run.report.shard;
  for (const auto& [name, devices] : elsewhere) {
    if (here.count(name) != 0) continue;
    check_result r;
    r.result = outcome::not_run;
    r.message = fmt::format("{} runs on {} only; this run is on {}", name, fmt::join(devices, ", "),
                            to_string(run.device));
    int count = 0;
    for (int i = shard.index - 1; i < opt.cases; i += shard.count, ++count) {
      const gen::case_recipe recipe = fuzz_recipe(opt, model, budget, i);
      const verify_case_record record{model.id, name, i, recipe.config, recipe.seed, std::string(to_string(recipe.inputs)),
                                      std::string(to_string(recipe.params)), r.result, r.rule, r.message, 0.0, 0.0, 0.0,
                                      "", ""};
      run.report.add(record, r, "reference fp32/fp64");
    }
    run.report.notes.push_back(fmt::format("{} {}: not run ({} case(s)): {}", model.id, name, count, r.message));
  }
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
  double last_progress = 0;  // elapsed time of the last progress line [seconds]
  // SIGTERM (a time box's `timeout`) or Ctrl-C (recorded by run()'s interrupt_guard): finish the
  // current case, keep every finished one, and mark the report incomplete (its JSON is still written).
  const auto stopped = [&] { return run.stop_requested(done, total); };
  for (const model_entry* model : models) {
    if (stopped()) break;
    const std::vector<verify_target> targets = in_process_targets(opt, *model, run.device);
    int first = shard.index - 1;
    while (first < opt.from_case) first += shard.count;  // an isolated child going on after a crash
    for (int i = first; i < opt.cases; i += shard.count) {
      if (stopped()) break;
      gen::case_recipe recipe = gen::sample_case(*model, budget, opt.seed, i);
      if (!opt.inputs.empty()) recipe.inputs = *input_distribution_from_string(opt.inputs);
      if (!opt.params.empty()) recipe.params = *param_init_from_string(opt.params);
      const auto run_case = [&] {
        const parsed_config config = model->parse(recipe.config);
        const bool affordable = oracle_affordable(*model, config);
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
            prepared = prepare_case(*model, config, recipe, run.device);
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
      // Outside a terminal: every tenth, and at least every 30 s (a tenth of a long run is hours).
      if (run.tty || done == total || done % std::max(1, total / 10) == 0 ||
          elapsed - last_progress >= fan_out::progress_interval_seconds()) {
        last_progress = elapsed;
        const std::string line = fmt::format("[{}/{}] {} case {}  elapsed {:.0f}s  eta {:.0f}s  failures {}", done, total,
                                             model->id, i, elapsed, elapsed / done * (total - done), failures);
        fmt::print(stderr, "{}", run.tty ? format::redrawn_line(line) : line + "\n");
      }
    }
    for (const verify_target& target : isolated_targets(opt, *model, run.device)) {
      if (stopped()) break;
      run_isolated(run, *model, target, budget);
    }
    if (!stopped()) record_other_device_plugins(run, *model, budget);
    if (!opt.inputs.empty() || !opt.params.empty())
      run.report.notes.push_back(fmt::format("{}: only {} inputs and {} parameters were drawn (--inputs/--params)",
                                             model->id, opt.inputs.empty() ? "all" : opt.inputs,
                                             opt.params.empty() ? "both regimes of" : opt.params));
  }
  if (run.tty) fmt::print(stderr, "{}", format::cleared_line);  // the table follows on a clean line
}

/// One given config (--config), with `cases` seeds, or exactly the --case-seed; or a user's tensors.
void run_config(verify_run& run, const model_entry& model, const parsed_config& config,
                const std::optional<tensor_map>& user_tensors, int done_before, int planned) {
  const verify_options& opt = run.opt;
  const std::vector<verify_target> targets = in_process_targets(opt, model, run.device);
  const bool affordable = oracle_affordable(model, config);
  if (!affordable)
    run.report.notes.push_back(fmt::format(
        "{}: the reference's semantics are checked against the fp64 loop oracle on oracle-sized fuzz cases; this "
        "config ({:.3g} conv-output elements, {:.3g} MACs) is above the oracle's budget, so only the fused "
        "implementations are judged here",
        model.id, model.problem_size(config), model.conv_macs(config)));
  if (has_fused(targets) == 0)
    run.report.notes.push_back(fmt::format("{}: no fused implementation on {}", model.id, to_string(run.device)));
  const int n = opt.case_seed || user_tensors ? 1 : opt.cases;
  for (int i = 0; i < n; ++i) {
    if (run.stop_requested(done_before + i, planned)) return;
    gen::case_recipe recipe;
    recipe.config = config.canonical;
    recipe.seed = opt.case_seed.value_or(opt.seed + static_cast<uint64_t>(i));
    recipe.inputs = opt.inputs.empty() ? input_distribution::uniform : *input_distribution_from_string(opt.inputs);
    recipe.params = opt.params.empty() ? ref::param_init::randomized : *param_init_from_string(opt.params);
    std::optional<judged_case> prepared;
    const auto prep_start = std::chrono::steady_clock::now();
    try {
      judged_case c;
      c.first = user_tensors ? case_from_tensors(model, config, *user_tensors) : gen::make_case(model, config, recipe);
      if (has_fused(targets) > 0) {
        c.fresh = gen::make_fresh_case(model, config, recipe);
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

/// A repro bundle (its config.json read and parsed once): the bundle's implementation on its saved
/// tensors, once.
void run_bundle(verify_run& run, const std::string& path, const loaded_bundle& b) {
  const bundle_meta& meta = b.meta;
  const model_entry& model = find_model(meta.model);
  const parsed_config config = model.parse(meta.config);
  require_fits_in_memory(model, config, run.device);
  gen::case_recipe recipe{config.canonical, meta.case_seed, meta.inputs, meta.params};
  judged_case c;
  c.first = case_from_tensors(model, config, b.tensors);
  c.fresh = b.tensors.count("fresh.input") ? case_from_tensors(model, config, b.tensors, "fresh.")
                                           : gen::make_fresh_case(model, config, recipe);
  fmt::print(stderr, "verify: replaying {} ({} {} on {}, recorded {}{}{}) from its saved tensors\n", path, model.id,
             meta.implementation, to_string(run.device), meta.outcome, meta.mismatches.empty() ? "" : ": ",
             meta.mismatches.empty() ? "" : meta.mismatches.dump());
  for (const verify_target& target : verify_targets(model, run.device)) {
    if (target.candidate.name != meta.implementation) continue;
    if (run.stop_requested(0, 1)) return;  // stopped before its one case: written with none
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
  throw std::invalid_argument("bundle " + path + ": implementation " + meta.implementation + " does not exist on " +
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
    // A model named twice (by id and by KernelBench number, or twice the same) runs once: the same
    // cases twice would double its counts and repeat its JUnit names.
    for (const std::string& id : opt.models) {
      const model_entry* m = &find_model(id);
      if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
      else fmt::print(stderr, "verify: --model {} names {} again; it runs once\n", id, m->id);
    }
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
    throw std::invalid_argument("inputs = " + opt.inputs + ": must be uniform, normal, offset, border, sparse, wide or near_constant");
  if (!opt.params.empty() && !param_init_from_string(opt.params))
    throw std::invalid_argument("params = " + opt.params + ": must be random, default or outliers");
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

/// The arguments of the shard process that runs `piece` of this fuzz run on `device` and writes its
/// report to `json_path`: every option that decides the cases or their verdicts, nothing else.
std::vector<std::string> shard_arguments(const verify_options& opt, const std::vector<const model_entry*>& models,
                                         device_kind device, const check_options& checks, const shard_spec& piece,
                                         const std::string& json_path) {
  std::vector<std::string> args = fan_out::shard_arguments("verify", device, opt.seed, piece);
  args.insert(args.end(), {"--cases", std::to_string(opt.cases),
                           fmt::format("--atol={}", checks.atol),  // shortest text that reads back exactly
                           fmt::format("--rtol={}", checks.rtol), "--json", json_path});
  if (!opt.inputs.empty()) args.insert(args.end(), {"--inputs", opt.inputs});
  if (!opt.params.empty()) args.insert(args.end(), {"--params", opt.params});
  if (!opt.case_size.empty()) args.insert(args.end(), {"--case-size", opt.case_size});
  if (!checks.fp64_rule) args.push_back("--strict-fp32");
  if (!opt.save_failures.empty()) args.insert(args.end(), {"--save-failures", opt.save_failures});
  for (const std::string& p : plugin::loaded_plugins()) args.insert(args.end(), {"--plugin", p});
  if (!opt.isolate) args.push_back("--no-isolate");
  args.push_back(fmt::format("--case-timeout={}", opt.case_timeout));
  if (!opt.only.empty()) args.insert(args.end(), {"--only", opt.only});
  std::vector<std::string> ids;
  for (const model_entry* m : models) ids.push_back(m->id);
  fan_out::append_models(args, ids);
  return args;
}

/// `--devices`: the run's shard split once more, one piece per device, each piece a `fusebench verify
/// --shard` child process; their reports merged into `run.report`. Returns the exit status when a
/// child did not finish its piece (its lines were forwarded), else nullopt.
std::optional<int> run_on_devices(verify_run& run, const std::vector<fan_out::device_slot>& slots,
                                  const std::vector<const model_entry*>& models) {
  const verify_options& opt = run.opt;
  const int n = static_cast<int>(slots.size());
  int total = 0;
  for (int d = 0; d < n; ++d)
    total += static_cast<int>(sub_shard(run.report.shard, d, n).size_of(opt.cases) * static_cast<int64_t>(models.size()));
  fmt::print(stderr, "verify: {}{} shard processes ({}): shards {} to {} of {}\n",
             run.report.shard.whole() ? "" : "shard " + to_string(run.report.shard) + " in ", n, opt.devices,
             to_string(sub_shard(run.report.shard, 0, n)), to_string(sub_shard(run.report.shard, n - 1, n)),
             sub_shard(run.report.shard, 0, n).count);
  fan_out::progress_line progress(slots.size(), total, run.tty);
  const fan_out::fan_out_run fanned = fan_out::run_on_devices(
      slots, run.report.shard, std::filesystem::temp_directory_path().string(), "fusebench-verify-",
      [&](const shard_spec& piece, const std::string& out) {
        return shard_arguments(opt, models, run.device, run.checks, piece, out + ".json");
      },
      [&](std::size_t i, const std::string& line) { return progress.consume(i, line); });
  progress.finish();
  if (fanned.interrupted_by != 0) {
    // Each shard process stopped after its current case and wrote its report marked incomplete:
    // their finished cases are merged, printed and written like a whole run's, marked incomplete.
    std::vector<std::pair<std::string, verify_report>> parts;
    for (std::size_t i = 0; i < fanned.processes.size(); ++i) {
      std::ifstream in(fanned.outputs[i] + ".json");
      if (!in) continue;  // stopped before it could write: its cases are not kept
      try {
        parts.emplace_back(fmt::format("{} (shard {})", fanned.processes[i].slot.label,
                                       to_string(fanned.processes[i].shard)),
                           verify_report_from_json(json::parse(in), fanned.outputs[i] + ".json"));
      } catch (const std::exception& e) {
        fmt::print(stderr, "verify: {}: its report is not kept ({})\n", fanned.processes[i].slot.label, one_line(e));
      }
    }
    fb::detail::remove_tree(fanned.scratch);
    int done = 0;
    if (!parts.empty()) {
      merge_rules rules;
      rules.target = run.report.shard;
      rules.allow_missing = rules.allow_incomplete = true;
      try {
        verify_report merged = merge_verify_reports(parts, rules);
        std::set<std::pair<std::string, int>> held;
        for (const verify_case_record& c : merged.cases) held.emplace(c.model, c.index);
        done = static_cast<int>(held.size());
        run.report = std::move(merged);
      } catch (const std::exception& e) {
        fmt::print(stderr, "verify: the shard processes' reports do not merge ({}); none is kept\n", one_line(e));
      }
    }
    run.report.complete = false;
    run.report.incomplete_reason =
        fmt::format("stopped by {} after {} of {} planned cases", signal_name(fanned.interrupted_by), done, total);
    run.stopped_by = fanned.interrupted_by;
    fmt::print(stderr, "verify: interrupted by {}; the shard processes stopped, their {} finished cases are kept\n",
               signal_name(fanned.interrupted_by), done);
    return std::nullopt;
  }
  if (const int status = fan_out::exit_status(fanned); status != exit_ok) {
    fmt::print(stderr, "verify: the shard processes' reports so far are in {}\n", fanned.scratch);
    return status;
  }
  std::vector<std::pair<std::string, verify_report>> parts;
  for (std::size_t i = 0; i < fanned.processes.size(); ++i) {
    const fan_out::shard_process& p = fanned.processes[i];
    const std::string report = fanned.outputs[i] + ".json";
    std::ifstream in(report);
    if (!in) throw std::runtime_error(fmt::format("{}: the shard process wrote no report at {}", p.slot.label, report));
    parts.emplace_back(fmt::format("{} (shard {})", p.slot.label, to_string(p.shard)),
                       verify_report_from_json(json::parse(in), report));
  }
  merge_rules rules;
  rules.target = run.report.shard;
  run.report = merge_verify_reports(parts, rules);
  fb::detail::remove_tree(fanned.scratch);
  return std::nullopt;
}

/// --only names an implementation that some selected model has on `device`.
void require_only_exists(const verify_options& opt, const std::vector<const model_entry*>& models, device_kind device) {
  if (opt.only.empty()) return;
  std::vector<std::string> names;
  for (const model_entry* m : models)
    for (const verify_target& t : verify_targets(*m, device)) {
      if (!t.is_reference && t.candidate.name == opt.only) return;
      if (!t.is_reference && std::find(names.begin(), names.end(), t.candidate.name) == names.end())
        names.push_back(t.candidate.name);
    }
  throw std::invalid_argument(fmt::format("--only {}: no such implementation on {} for the selected model(s) (there: {})",
                                          opt.only, to_string(device), fmt::join(names, ", ")));
}

}  // namespace

int run(const options& opt) {
  validate(opt);
  // From here on SIGINT (Ctrl-C) and SIGTERM (a time box) stop the run after its current case: the
  // finished cases are kept, the table printed, --json and --junit written and marked incomplete,
  // and the exit status is 128 + the signal (130, 143), as bench does. Made before the plug-ins load
  // and the plan is made: a signal before the first case writes the files with 0 cases.
  const interrupt_guard stop_after_case;
  plugin::load_plugins(plugin::plugin_paths(opt.plugins));
  std::optional<json> given;
  if (!opt.config.empty()) given = read_config_argument(opt.config);
  std::optional<loaded_bundle> bundle;  // config.json read once above, parsed once here
  if (given && is_repro_bundle(*given)) {
    // A bundle replays its own case: the flags that pick cases would be ignored, so they are refused.
    const std::pair<bool, const char*> ignored[] = {
        {!opt.models.empty(), "--model"},   {opt.case_seed.has_value(), "--case-seed"}, {opt.cases_given, "--cases"},
        {opt.seed_given, "--seed"},         {!opt.inputs.empty(), "--inputs"},          {!opt.params.empty(), "--params"},
        {!opt.tensors.empty(), "--tensors"}};
    for (const auto& [given_flag, flag] : ignored)
      if (given_flag)
        throw std::invalid_argument(fmt::format(
            "{} with a repro bundle ({}): a bundle replays its own model, case seed and tensors; drop {}", flag,
            opt.config, flag));
    bundle = load_repro_bundle(opt.config, *given);
  }
  // A bundle replays on its own device and tolerances unless the command line names others.
  device_kind device = opt.device.empty() ? best_device() : device_from_string(opt.device);
  check_options checks{opt.atol, opt.rtol, true, true, !opt.strict_fp32};
  if (bundle) {
    if (!opt.device_given) device = device_from_string(bundle->meta.device);
    if (!opt.atol_given) checks.atol = bundle->meta.atol;
    if (!opt.rtol_given) checks.rtol = bundle->meta.rtol;
    if (!opt.strict_fp32) checks.fp64_rule = bundle->meta.fp64_rule;
  }
  std::optional<std::vector<fan_out::device_slot>> slots;
  if (!opt.devices.empty()) {
    fan_out::device_plan plan = fan_out::plan_devices(
        opt.devices, opt.per_device, opt.device_given ? std::optional<device_kind>(device) : std::nullopt, "run");
    device = plan.device;
    slots = std::move(plan.slots);
  }
  if (device == device_kind::cuda && !cuda_available())
    throw std::invalid_argument("device = cuda: no CUDA device or a CPU-only libtorch");
  if (!opt.save_failures.empty()) require_writable_folder(opt.save_failures);
  if (!opt.json_out.empty()) require_writable_file(opt.json_out, "--json");
  if (!opt.junit_out.empty()) require_writable_file(opt.junit_out, "--junit");

  verify_run run{opt, device, checks, {}, isatty(fileno(stderr)) != 0};
  if (!opt.case_stream.empty()) {
    run.stream = std::make_unique<std::ofstream>(opt.case_stream, std::ios::app);
    if (!*run.stream) throw std::invalid_argument("--case-stream " + opt.case_stream + ": cannot write the file");
  }
  run.report.device = device_name(device);
  const build_info build = describe_build();
  run.report.git_commit = build.git_commit;
  run.report.source_digest = build.source_digest;
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
  run.report.plugins = judged_plugins(opt);

  if (bundle) {
    run.report.scope.models = {bundle->meta.model};
    run.report.scope.cases_per_model = 1;
    run_bundle(run, opt.config, *bundle);
  } else if (given) {
    const std::vector<const model_entry*> models = selected_models(opt, given);
    require_only_exists(opt, models, device);
    // The config parsed once per model: an invalid config, or one that cannot fit, exits 2 before any work.
    std::vector<parsed_config> configs;
    for (const model_entry* m : models) {
      configs.push_back(m->parse(*given));
      require_fits_in_memory(*m, configs.back(), device);
    }
    std::optional<tensor_map> user_tensors;
    if (!opt.tensors.empty()) {
      if (models.size() != 1) throw std::invalid_argument("--tensors needs exactly one --model");
      user_tensors = load_tensor_file(opt.tensors);
      (void)case_from_tensors(*models.front(), configs.front(), *user_tensors);  // fit, or exit 2
      require_only_known_tensors(*models.front(), configs.front(), *user_tensors, opt.tensors);
    }
    for (const model_entry* m : models) run.report.scope.models.push_back(m->id);
    fmt::print(stderr, "verify: {} model(s), one config, {} case(s) on {} (atol {}, rtol {})\n", models.size(),
               opt.case_seed || user_tensors ? 1 : opt.cases, run.report.device, checks.atol, checks.rtol);
    const int per_model = opt.case_seed || user_tensors ? 1 : opt.cases;
    const int planned = per_model * static_cast<int>(models.size());
    for (std::size_t k = 0; k < models.size() && run.stopped_by == 0; ++k)
      run_config(run, *models[k], configs[k], user_tensors, per_model * static_cast<int>(k), planned);
  } else {
    const std::vector<const model_entry*> models = selected_models(opt, given);
    require_only_exists(opt, models, device);
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

  // A signal after the last case (or during a one-case replay) still stops the run short of nothing:
  // what finished is complete, but the caller asked to stop, so say so and exit as it asked.
  if (run.stopped_by == 0 && stop_signal() != 0) {
    run.stopped_by = stop_signal();
    fmt::print(stderr, "verify: {} arrived after the last case; every planned case finished\n",
               signal_name(run.stopped_by));
  }
  // The table and verdict go to stdout, unless an output is "-" (stdout): then to stderr, so that
  // stdout holds the JSON or the XML alone.
  std::ostream& human = opt.json_out == "-" || opt.junit_out == "-" ? std::cerr : std::cout;
  const final_writes_guard writing;  // no Ctrl-C cuts the table, the files or `-`'s stdout short
  print_verify_table(run.report, human, opt.wide);
  if (!opt.json_out.empty()) write_output(opt.json_out, verify_report_to_json(run.report).dump(2) + "\n");
  if (!opt.junit_out.empty()) {
    std::ostringstream xml;
    write_junit(run.report, xml);
    write_output(opt.junit_out, xml.str());
  }
  human.flush();
  const int verdict = print_verdict(run.report, human);
  if (run.stopped_by != 0) return 128 + run.stopped_by;  // stopped, its finished cases kept (shell convention)
  return verdict == 0 ? exit_ok : exit_failure;
}

}  // namespace fb::verify
