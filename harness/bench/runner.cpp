#include "harness/bench/runner.h"

#include <c10/core/GradMode.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "harness/bench/bench_state.h"
#include "harness/bench/progress.h"
#include "harness/bench/timed_call.h"
#include "harness/detail/remove_tree.h"
#include "harness/device/device.h"
#include "harness/device/resources.h"
#include "harness/fan_out/fan_out.h"
#include "harness/format/shell_quote.h"
#include "harness/model/case_recipe.h"
#include "harness/model/registry.h"
#include "harness/plugin/plugin_loader.h"
#include "harness/process/build_info.h"
#include "harness/process/exit_status.h"
#include "harness/results/gbench_json.h"
#include "harness/results/results_writer.h"
#include "harness/verify/verify_plan.h"

#if FUSEBENCH_BENCH_DEVICE
#include "harness/bench/device_timing.h"
#endif

namespace fb::bench {
namespace {

constexpr double not_computed = std::numeric_limits<double>::quiet_NaN();
/// Keys of the shared config vocabulary that scale_for_cpu shrinks (never a model name).
constexpr const char* batch_key = "batch_size";
constexpr const char* spatial_keys[] = {"depth", "height", "width"};
/// Conv-output elements a CPU-scaled config may keep: ~0.1 s per libtorch reference call on 2 cores.
constexpr double cpu_problem_budget = 1 << 20;

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string host_name() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

/// The first "model name" of /proc/cpuinfo (x86; "" elsewhere or when unreadable): which CPU timed a CPU run.
std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0)
      if (const auto colon = line.find(':'); colon != std::string::npos) {
        const auto start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? std::string() : line.substr(start);
      }
  return {};
}

std::string format_seconds(double s) {
  if (!std::isfinite(s)) return "-";
  if (s < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

/// The fused implementations of a model for a device, in registry order.
std::vector<const implementation*> fused_for(const model_entry& model, device_kind device) {
  std::vector<const implementation*> out;
  for (const implementation& impl : model.fused)
    if (impl.device == device) out.push_back(&impl);
  return out;
}

/// A plug-in's implementations of `model` registered for other devices only (a CUDA-only plug-in on
/// --device cpu), each with why it is not run here, in name order: each gets a row not_run with that
/// reason (a skipped implementation is listed, never silently absent).
std::vector<std::pair<std::string, std::string>> plugins_elsewhere(const model_entry& model, device_kind device) {
  std::map<std::string, std::set<std::string>> elsewhere;  // name -> the devices it runs on
  std::set<std::string> here;
  for (const implementation& impl : model.fused) {
    if (!impl.external) continue;
    if (impl.device == device) here.insert(impl.name);
    else elsewhere[impl.name].insert(std::string(to_string(impl.device)));
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, devices] : elsewhere)
    if (here.count(name) == 0)
      out.emplace_back(name, fmt::format("{} runs on {} only; this run is on {}", name, fmt::join(devices, ", "),
                                         to_string(device)));
  return out;
}

}  // namespace

std::size_t cases_of(const bench_point& point, device_kind device, bool peers) {
  return 2 + fused_for(*point.model, device).size() + plugins_elsewhere(*point.model, device).size() +
         (peers ? torch_peers.size() : 0);
}

std::vector<std::string> unjudged_plugins(const results_file& results) {
  std::vector<std::string> out;
  // A shard of a plan may hold no config of a plug-in's model: the merge of the whole run is judged.
  if (results.environment.shard != "1/1") return out;
  for (const std::string& name : results.environment.plugins) {
    const bool judged = std::any_of(results.cases.begin(), results.cases.end(), [&](const case_result& c) {
      return c.implementation == name &&
             (c.outcome == outcome::passed || c.outcome == outcome::incorrect || c.outcome == outcome::failed);
    });
    if (!judged) out.push_back(name);
  }
  return out;
}

namespace {

/// Everything shared by the cases of one run.
struct run_context {
  const bench_settings& settings;
  device_calibration calibration;
  call_timer& timer;
  results_writer& writer;
  progress& prog;
  std::ostream& log;
  bench_summary& summary;

  /// Unwinds to the case loop once a stop was requested: between cases and after a timed sample.
  void check_stop() const {
    if (const int signal = settings.stop_signal ? settings.stop_signal() : 0; signal != 0)
      throw run_interrupted(signal);
  }
};

/// What is decided about a point before anything is allocated.
struct case_plan {
  const bench_point& point;
  parsed_config config;  ///< parsed once, here
  bench_state state;  ///< size, floor counters, input sets, policy, skip
};

/// The result row of `name` in `plan`, not yet judged or timed.
case_result make_row(const case_plan& plan, const std::string& name) {
  case_result r;
  r.model = plan.point.model->id;
  r.kernelbench_id = plan.point.model->kernelbench_id;
  r.config = plan.point.config;
  r.config_label = plan.point.label;
  r.implementation = name;
  r.problem_size = plan.state.get_element_count();
  r.max_abs_error = not_computed;
  r.max_rel_error = not_computed;
  r.decided_by = verdict_rule::none;
  return r;
}

/// Counts a finished row into the summary's totals.
void count_row(bench_summary& summary, const case_result& row) {
  if (is_peer_implementation(row.implementation)) {  // information: never failing, never the exit status
    if (row.outcome == outcome::passed && row.stats) ++summary.peers_within;
    else if (row.outcome == outcome::incorrect && row.stats) ++summary.peers_outside;
    else if (row.outcome == outcome::failed || row.outcome == outcome::incorrect) ++summary.peers_error;
    else ++summary.peers_skipped;
    return;
  }
  if (row.stats) ++summary.timed;
  if (row.outcome == outcome::incorrect || row.outcome == outcome::failed) ++summary.failing;
  if (row.outcome == outcome::not_run || row.outcome == outcome::not_supported ||
      row.outcome == outcome::invalid_config || row.outcome == outcome::declined)
    ++summary.skipped;
  if (row.floor && row.floor->impossible) ++summary.impossible;
}

/// Writes a finished row (the file is rewritten at once) and says on the terminal what went wrong.
void record(run_context& ctx, case_result row) {
  count_row(ctx.summary, row);
  if (row.floor && row.floor->impossible) {
    ctx.prog.finish();
    fmt::print(ctx.log, "IMPOSSIBLE: {} median {} is below its roofline floor {} ({:.2f}x floor)\n",
               gbench_name(row), format_seconds(row.stats->median), format_seconds(row.floor->floor_seconds),
               row.stats->median / row.floor->floor_seconds);
  }
  if ((row.outcome == outcome::incorrect || row.outcome == outcome::failed) &&
      !is_peer_implementation(row.implementation)) {
    ctx.prog.finish();
    fmt::print(ctx.log, "FAIL: {}: {}: {}\n", gbench_name(row), to_string(row.outcome), row.message);
  }
  ctx.writer.add_case(std::move(row));
}

/// "model/config/impl: fused 1.23 ms, ref 4.56 ms: 3.71x (ref_tf32 2.00 ms: 1.63x)": what a case
/// measured, said as it finishes, so a long run shows its speedups before its table.
std::string speedup_line(const std::string& name, double fused, const std::optional<double>& ref,
                         const std::optional<double>& ref_tf32) {
  std::string line = fmt::format("time: {}: fused {}", name, format_seconds(fused));
  if (ref) line += fmt::format(", ref {}: speedup {:.2f}x", format_seconds(*ref), *ref / fused);
  else line += ", ref not timed";
  if (ref_tf32) line += fmt::format(" (ref_tf32 {}: {:.2f}x)", format_seconds(*ref_tf32), *ref_tf32 / fused);
  return line;
}

/// The rows of the point's plug-ins that do not run on this device: not_run, with the reason.
void record_plugins_elsewhere(run_context& ctx, const case_plan& plan) {
  for (const auto& [name, why] : plugins_elsewhere(*plan.point.model, ctx.settings.device)) {
    ctx.check_stop();
    case_result r = make_row(plan, name);
    ctx.prog.begin_case(gbench_name(r));
    r.outcome = outcome::not_run;
    r.message = why;
    ctx.prog.finish();
    fmt::print(ctx.log, "not run: {}: {}\n", gbench_name(r), why);
    record(ctx, std::move(r));
  }
}

/// Every row of the point with the same outcome: an invalid config, a skip, no input sets (the
/// plug-ins of other devices keep their own reason).
void record_all(run_context& ctx, const case_plan& plan, outcome o, const std::string& message) {
  std::vector<std::string> names{"ref", "ref_tf32"};
  for (const implementation* impl : fused_for(*plan.point.model, ctx.settings.device)) names.push_back(impl->name);
  for (const std::string& name : names) {
    ctx.check_stop();
    case_result r = make_row(plan, name);
    ctx.prog.begin_case(gbench_name(r));
    r.outcome = o;
    r.message = message;
    record(ctx, std::move(r));
  }
  record_plugins_elsewhere(ctx, plan);
  if (!ctx.settings.peers.enabled) return;
  for (std::string_view peer : torch_peers) {
    ctx.check_stop();
    case_result r = make_row(plan, std::string(peer_prefix) + std::string(peer));
    ctx.prog.begin_case(gbench_name(r));
    r.outcome = o;
    r.message = message;
    r.peer = peer_details{};
    record(ctx, std::move(r));
  }
}

/// Canonical config, floor counters, policy and input sets that fit the device's memory. An invalid
/// config records its rows as invalid_config and gives nullopt; a config that does not fit is
/// returned with state.is_skipped().
std::optional<case_plan> plan_case(run_context& ctx, const bench_point& point) {
  const model_entry& model = *point.model;
  const bench_settings& settings = ctx.settings;
  case_plan plan{point, parsed_config{}, bench_state{}};
  try {
    plan.config = model.parse(point.config);
  } catch (const std::invalid_argument& e) {  // ref::config_error and its kin
    record_all(ctx, plan, outcome::invalid_config, e.what());
    return std::nullopt;
  }
  bench_state& state = plan.state;
  state.add_element_count(model.problem_size(plan.config));
  if (model.fused_work) {
    const work_estimate work = model.fused_work(plan.config);
    state.add_global_memory_bytes(work.bytes);
    state.add_flops(work.flops);
    state.set_arithmetic_unit(work.unit);
  }
  state.set_repetition_policy(settings.policy);

  // Fewer input sets before giving up: 2 still defeat caches that remember the last call.
  const int most = std::max(1, settings.input_sets);
  const int fewest = std::min(2, most);
  const double available = available_bytes(settings.device);
  int sets = most;
  while (sets > fewest && available > 0.0 &&
         case_bytes_estimate(model, plan.config, sets, true) > usable_memory_fraction * available)
    --sets;
  state.set_input_sets(sets);
  const double need = case_bytes_estimate(model, plan.config, sets, true);
  if (available > 0.0 && need > usable_memory_fraction * available)
    state.skip(fmt::format("does not fit in {} memory: needs ~{:.1f} GiB with {} input sets, {:.1f} GiB available",
                           to_string(settings.device), to_gib(need), sets, to_gib(available)));
  return plan;
}

/// The rotated input sets, each with its own parameters, made once and placed on the device.
std::vector<model_case> make_input_sets(const case_plan& plan, const bench_settings& settings) {
  std::vector<model_case> sets;
  for (int k = 0; k < plan.state.get_input_sets(); ++k) {
    const gen::case_recipe recipe{plan.config.canonical, settings.seed + 101 + static_cast<std::uint64_t>(k),
                                  input_distribution::uniform, ref::param_init::randomized};
    sets.push_back(on_device(gen::make_case(*plan.point.model, plan.config, recipe), settings.device));
  }
  synchronize(settings.device);
  return sets;
}

/// Untimed calls first (cuDNN heuristics, lazy module loading, first-touch page faults), one per
/// input set, stopping early when they are slow: the cap is there to bound the run.
void warm_up(const repetition_policy& policy, int calls, const std::function<double(std::size_t)>& sample) {
  double spent = 0.0;
  for (int i = 0; i < std::max(1, calls); ++i) {
    spent += sample(static_cast<std::size_t>(i));
    if (spent > 0.1 * policy.time_cap) break;
  }
}

/// Warm-up, then samples through Google Benchmark; `call(i)` runs repetition i. `prepare(i)`
/// (optional) runs before every call, outside the timed region: it frees what the previous call
/// returned, or poisons the output the call will write. A requested stop ends it after the current
/// sample (run_interrupted).
timing_stats time_implementation(run_context& ctx, const case_plan& plan, const case_result& row,
                                 const std::function<void(std::size_t)>& call,
                                 const std::function<void(std::size_t)>& prepare = {}) {
  const auto sample = [&](std::size_t i) {
    if (prepare) prepare(i);
    const double seconds = ctx.timer.time_once([&] { call(i); });
    ctx.check_stop();
    return seconds;
  };
  const repetition_policy& policy = plan.state.get_repetition_policy();
  warm_up(policy, ctx.settings.warmup_calls, sample);
  const sample_run run = collect_samples(gbench_name(row), policy, sample);
  return summarize_samples(run.samples);
}

/// ref and ref_tf32: not verified against themselves, only timed.
/// Returns the medians of ref and ref_tf32 (nullopt where not timed), for the per-case speedup lines.
std::pair<std::optional<double>, std::optional<double>> time_references(run_context& ctx, const case_plan& plan,
                                                                        const std::vector<model_case>& sets) {
  const model_entry& model = *plan.point.model;
  std::pair<std::optional<double>, std::optional<double>> medians;
  for (const bool tf32 : {false, true}) {
    ctx.check_stop();
    case_result row = make_row(plan, tf32 ? "ref_tf32" : "ref");
    ctx.prog.begin_case(gbench_name(row));
    if (tf32 && ctx.settings.device != device_kind::cuda) {
      row.outcome = outcome::not_supported;
      row.message = "TF32 exists only on CUDA devices";
      record(ctx, std::move(row));
      continue;
    }
    try {
      const ref::tf32_guard guard(tf32);
      ref::forward_result keep;  // freed by `prepare`, outside the timed call
      row.stats = time_implementation(
          ctx, plan, row,
          [&](std::size_t i) {
            const model_case& c = sets[i % sets.size()];
            keep = model.reference(c.config, c.params, c.input);
          },
          [&](std::size_t) { keep = ref::forward_result{}; });
      row.outcome = outcome::passed;
    } catch (const run_interrupted&) {
      throw;
    } catch (const std::exception& e) {
      row.outcome = outcome::failed;
      row.message = std::string("timing: ") + e.what();
    }
    if (row.outcome == outcome::passed && row.stats) (tf32 ? medians.second : medians.first) = row.stats->median;
    record(ctx, std::move(row));
  }
  return medians;
}

/// Verifies `impl` at the plan's exact config with fresh random parameters, under the verdict rules.
/// The case verify_fused judges: the config, a seed of its own, uniform inputs, random parameters.
gen::case_recipe verification_recipe(const case_plan& plan, const bench_settings& settings) {
  return {plan.config.canonical, settings.seed + 7919, input_distribution::uniform, ref::param_init::randomized};
}

/// --isolate: an outside plug-in's verification of this config runs first in a child process, on
/// verify_fused's own case (`fusebench verify --config ... --case-seed ... --only plugin:<name>`). A
/// child that ends without writing its verdict (its --json) makes the row failed, with the command
/// that replays it: "crashed (signal N)", "exited (status N)" (a plug-in that calls exit()) or "timed
/// out" (past --case-timeout it is killed); the plug-in is then neither verified nor timed here, and
/// false is returned. (A crash that only repeated timed calls provoke is not caught this way: it ends
/// the bench.)
bool survives_isolated_verification(const case_plan& plan, const bench_settings& settings,
                                    const implementation& impl, case_result& row) {
  if (!settings.isolate_plugins || !impl.external) return true;
  const model_entry& model = *plan.point.model;
  const gen::case_recipe recipe = verification_recipe(plan, settings);
  std::vector<std::string> args{"verify",
                                "--device",
                                std::string(to_string(settings.device)),
                                "--model",
                                model.id,
                                "--config",
                                plan.config.canonical.dump(),
                                "--case-seed",
                                std::to_string(recipe.seed),
                                "--inputs",
                                std::string(to_string(recipe.inputs)),
                                "--params",
                                "random",
                                "--only",
                                impl.name,
                                fmt::format("--atol={}", settings.checks.atol),
                                fmt::format("--rtol={}", settings.checks.rtol)};
  if (!settings.checks.fp64_rule) args.push_back("--strict-fp32");
  for (const std::string& p : plugin::loaded_plugins()) args.insert(args.end(), {"--plugin", p});
  args.push_back("--no-isolate");
  std::string repro = "fusebench";
  for (const std::string& a : args) repro += " " + format::shell_quoted(a);
  const std::string scratch =
      fan_out::make_scratch_folder(std::filesystem::temp_directory_path().string(), "fusebench-isolate-");
  const std::string verdict_path = (std::filesystem::path(scratch) / "verdict.json").string();
  args.insert(args.end(), {"--json", verdict_path});
  const fan_out::shard_process process{fan_out::own_device_slot(impl.name, settings.device), shard_spec{}, args};
  const std::function<int()> stop = settings.stop_signal ? settings.stop_signal : std::function<int()>([] { return 0; });
  const auto started = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> stop_at;
  bool timed_out = false;
  const auto overdue = [&](std::size_t) {  // the time limit; a child that ignores a stop passed on, 5 s later
    const auto now = std::chrono::steady_clock::now();
    if (stop() != 0) {
      if (!stop_at) stop_at = now;
      return now - *stop_at > std::chrono::seconds(5);
    }
    timed_out = now - started > std::chrono::seconds(settings.case_timeout);
    return timed_out;
  };
  const fan_out::shard_exit exit =
      fan_out::run_shard_processes({process}, [](std::size_t, const std::string&) { return true; }, stop, overdue)
          .front();
  bool verdict = false;  // the child wrote its case's verdict: it returned, whatever the verdict says
  try {
    std::ifstream in(verdict_path);
    verdict = in.good() && !json::parse(in).at("cases").empty();
  } catch (const json::exception&) {
  }
  fb::detail::remove_tree(scratch);
  if (const int signal = stop(); signal != 0) throw run_interrupted(signal);  // the case unfinished: not recorded
  if (verdict && exit.signal == 0 && (exit.exit_code == exit_ok || exit.exit_code == exit_failure)) return true;
  row.outcome = outcome::failed;
  const std::string how = timed_out ? fmt::format("timed out (no verdict within {} s; the isolated process was killed, "
                                                  "--case-timeout)", settings.case_timeout)
                          : exit.signal != 0 ? fan_out::crash_message(exit.signal)
                                             : fmt::format("exited (status {})", exit.exit_code);
  row.message = how + " verifying it in an isolated process; repro: " + repro;
  return false;
}

/// Fills the row's outcome and verification fields.
void verify_fused(const run_context& ctx, const case_plan& plan, const implementation& impl, case_result& row) {
  const bench_settings& settings = ctx.settings;
  const gen::case_recipe recipe = verification_recipe(plan, settings);
  const check_result check = verify_case(*plan.point.model, verify_target{impl, false}, recipe, settings.checks);
  row.outcome = check.result;
  row.message = check.result == outcome::passed ? std::string() : check.message;
  row.decided_by = check.rule;
  if (check.result == outcome::passed || check.result == outcome::incorrect) {
    row.max_abs_error = check.vs_expected.max_abs;
    row.max_rel_error = check.vs_expected.max_rel;
    row.tolerance_ratio = check.vs_expected.worst_ratio;
  }
}

/// The last output a timed run left for each input set, and whether the set was used at all.
struct timed_outputs {
  std::vector<output_slots> slots;  ///< one per input set; they share one workspace
  std::vector<bool> used;           ///< a call ran on the set since its output was poisoned
};

/// Judges the output of the last repetition on each input set under the verdict rules (against the
/// fp32 reference with TF32 off, or fp64 with the reference's error as allowance where the fp32
/// reference is itself off) at the run's tolerances: a kernel that behaves while verified and not
/// while timed (a counter, a cache, a race that needs a hot loop) is caught here, as GPU MODE's
/// evaluator does. Returns an empty string when every used set matches, else what differs. Runs
/// after the timed region.
std::string check_timed_outputs(const run_context& ctx, const case_plan& plan, const std::vector<model_case>& sets,
                                const timed_outputs& outputs) {
  const check_options& checks = ctx.settings.checks;
  for (std::size_t k = 0; k < sets.size(); ++k) {
    if (!outputs.used[k]) continue;
    const expected_results expected = reference_expectations(*plan.point.model, sets[k], ctx.settings.device);
    const value_judgement j = judge_output(outputs.slots[k].output, expected, *plan.point.model, checks);
    const error_stats& errors = j.stats;
    if (errors.violations > 0)
      return fmt::format(
          "timed output differs from verification: input set {} of {}: {} of {} elements outside the tolerance "
          "(rule {}, max abs error {:.3g}{}); the implementation passed verification, then changed its answer while timed",
          k + 1, sets.size(), errors.violations, expected.fp32.output.numel(), to_string(j.rule), errors.max_abs,
          errors.nonfinite > 0 ? fmt::format(", {} NaN/Inf or never written", errors.nonfinite) : std::string());
  }
  return {};
}

/// Times a verified fused implementation, each input set writing its own output, then checks the
/// outputs the timed calls left (check_timed_outputs). Fills stats and floor, or marks the row.
void time_fused(run_context& ctx, const case_plan& plan, const std::vector<model_case>& sets,
                const implementation& impl, case_result& row) {
  const model_entry& model = *plan.point.model;
  const device_kind device = ctx.settings.device;
  try {
    // Allocated once per case: the timed call is the kernel, not the allocation.
    const at::TensorOptions on_device = at::TensorOptions().device(to_device(device));
    const std::size_t ws = impl.workspace_bytes ? impl.workspace_bytes(plan.config) : 0;
    const at::Tensor workspace = at::empty({static_cast<int64_t>(ws)}, on_device.dtype(at::kByte));
    timed_outputs outputs;
    for (const model_case& set : sets) {
      output_slots slots;
      slots.output = at::empty(model.output_shape(plan.config), on_device.dtype(at::kFloat));
      for (const std::string& name : model.buffer_names(plan.config)) slots.buffers[name] = set.params.at(name).clone();
      slots.workspace = workspace;
      outputs.slots.push_back(std::move(slots));
    }
    outputs.used.assign(sets.size(), false);
    row.stats = time_implementation(
        ctx, plan, row, [&](std::size_t i) { impl.run(sets[i % sets.size()], outputs.slots[i % sets.size()]); },
        [&](std::size_t i) {
          // NaN in, so an output the call does not write cannot pass for one it wrote.
          outputs.slots[i % sets.size()].output.fill_(std::numeric_limits<float>::quiet_NaN());
          outputs.used[i % sets.size()] = true;
        });
    synchronize(device);
    if (const std::string differs = check_timed_outputs(ctx, plan, sets, outputs); !differs.empty()) {
      row.outcome = outcome::incorrect;
      row.message = differs;
      row.stats.reset();  // the time of a wrong answer is never a result
      return;
    }
    const double peak = plan.state.get_arithmetic_unit() == arithmetic_unit::fp64_mma ? ctx.calibration.fp64_mma_peak
                                                                                       : ctx.calibration.fp32_peak;
    row.floor = plan.state.get_floor(ctx.calibration.bandwidth, peak, row.stats->median);
  } catch (const run_interrupted&) {
    throw;
  } catch (const std::exception& e) {
    row.outcome = outcome::failed;
    row.message = std::string("timing: ") + e.what();
    row.stats.reset();
  }
}

/// One config: plan, input sets, the references, then each fused implementation verified and, if it
/// passes, timed and checked again. Returns the plan when the config was timed (its peers come later).
std::optional<case_plan> run_point(run_context& ctx, const bench_point& point) {
  std::optional<case_plan> plan = plan_case(ctx, point);
  if (!plan) return std::nullopt;
  if (plan->state.is_skipped()) {
    ctx.prog.finish();
    fmt::print(ctx.log, "skip: {}/{}: {}\n", point.model->id, point.label, plan->state.get_skip_reason());
    record_all(ctx, *plan, outcome::not_run, plan->state.get_skip_reason());
    return std::nullopt;
  }
  std::vector<model_case> sets;
  try {
    sets = make_input_sets(*plan, ctx.settings);
  } catch (const std::exception& e) {
    record_all(ctx, *plan, outcome::failed, std::string("making the input sets: ") + e.what());
    return std::nullopt;
  }
  const auto [ref_median, ref_tf32_median] = time_references(ctx, *plan, sets);
  for (const implementation* impl : fused_for(*point.model, ctx.settings.device)) {
    ctx.check_stop();
    case_result row = make_row(*plan, impl->name);
    ctx.prog.begin_case(gbench_name(row));
    if (survives_isolated_verification(*plan, ctx.settings, *impl, row)) verify_fused(ctx, *plan, *impl, row);
    if (row.outcome == outcome::passed) {
      ctx.check_stop();
      time_fused(ctx, *plan, sets, *impl, row);
    }
    if (row.outcome == outcome::passed && row.stats) {
      ctx.prog.finish();
      fmt::print(ctx.log, "{}\n", speedup_line(gbench_name(row), row.stats->median, ref_median, ref_tf32_median));
    }
    record(ctx, std::move(row));
  }
  record_plugins_elsewhere(ctx, *plan);
  return plan;
}

/// The repetition policy as the peer helper reads it (peers/torch_peers.py's want_more).
json policy_json(const repetition_policy& p) {
  return {{"min_samples", p.min_samples}, {"max_samples", p.max_samples}, {"min_time", p.min_time},
          {"time_cap", p.time_cap},       {"target_rse", p.target_rse}};
}

/// Writes `c`'s parameters, buffers and input as the repro bundle does (torch::pickle_save of a dict of
/// CPU tensors under their state_dict names, "input" for the input): what torch.load reads.
void write_case_tensors(const model_case& c, const std::filesystem::path& file) {
  c10::Dict<std::string, at::Tensor> tensors;
  for (const auto& [name, t] : c.params) tensors.insert(name, t.to(at::kCPU).contiguous());
  tensors.insert("input", c.input.to(at::kCPU).contiguous());
  const std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(tensors));
  std::ofstream out(file, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

/// A peer's output file (torch.save of one tensor), read and checked for dtype and shape.
at::Tensor read_peer_output(const std::filesystem::path& file, const std::vector<int64_t>& shape) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("the helper named " + file.filename().string() + " but wrote no such file");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue value;
  try {
    value = torch::jit::pickle_load(bytes);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{} is not a saved tensor ({})", file.filename().string(),
                                         std::string(e.what()).substr(0, 120)));
  }
  if (!value.isTensor()) throw std::runtime_error(file.filename().string() + " holds no tensor");
  const at::Tensor t = value.toTensor();
  if (t.sizes().vec() != shape)
    throw std::runtime_error(fmt::format("wrong shape: [{}] where the model's output is [{}]", fmt::join(t.sizes(), ", "),
                                         fmt::join(shape, ", ")));
  if (t.scalar_type() != at::kFloat)
    throw std::runtime_error(fmt::format("wrong dtype: {} where the model's output is float32", c10::toString(t.scalar_type())));
  return t;
}

/// "peer: 44/default/peer:eager: 4.03 ms, within tolerance (100%); fused 33.71 us is 120x faster".
std::string peer_line(const case_result& row, const std::optional<double>& fused_median) {
  std::string line = fmt::format("peer: {}: ", gbench_name(row));
  if (!row.stats) return line + std::string(to_string(row.outcome)) + ": " + row.message.substr(0, 200);
  line += fmt::format("{}, {} ({:.4g}% within)", format_seconds(row.stats->median),
                      row.outcome == outcome::passed ? "within tolerance" : "OUTSIDE tolerance",
                      100.0 * row.peer->share_within_tolerance);
  if (row.peer->compile_seconds) line += fmt::format(", first call {:.1f} s", *row.peer->compile_seconds);
  if (fused_median) line += fmt::format("; fused {} is {:.3g}x faster", format_seconds(*fused_median),
                                        row.stats->median / *fused_median);
  return line;
}

/// The torch peers of one timed case: set 0 of its input sets (the reference's tensors) handed to the
/// helper, each output judged here against that set's expectations under the run's verdict rules.
void run_case_peer_rows(run_context& ctx, const case_plan& plan, double budget_left) {
  release_cached_device_memory();  // the helper gets the memory the previous case's judging held
  const model_entry& model = *plan.point.model;
  const device_kind device = ctx.settings.device;
  const gen::case_recipe recipe{plan.config.canonical, ctx.settings.seed + 101, input_distribution::uniform,
                                ref::param_init::randomized};  // make_input_sets' first set
  const model_case host_case = gen::make_case(model, plan.config, recipe);
  std::optional<expected_results> expected;  // computed once, after the helper has left the device
  std::optional<model_case> device_case;
  peer_case c;
  c.model = model.id;
  c.config = plan.config.canonical;
  c.device = std::string(to_string(device));
  c.policy = policy_json(plan.state.get_repetition_policy());
  c.warmup_calls = ctx.settings.warmup_calls;
  c.output_shape = model.output_shape(plan.config);
  c.write_tensors = [&](const std::filesystem::path& folder) { write_case_tensors(host_case, folder / "tensors.pt"); };
  c.judge = [&](const std::filesystem::path& file, case_result& row) {
    const at::Tensor got = read_peer_output(file, c.output_shape).to(to_device(device));
    if (!expected) {
      device_case = on_device(host_case, device);
      expected = reference_expectations(model, *device_case, device);
    }
    const check_options& checks = ctx.settings.checks;
    const value_judgement j = judge_output(got, *expected, model, checks);  // verify's rule: group and floor
    const error_stats& e = j.stats;
    row.decided_by = j.rule;
    row.max_abs_error = e.max_abs;
    row.max_rel_error = e.max_rel;
    row.tolerance_ratio = e.worst_ratio;
    const double elements = static_cast<double>(std::max<int64_t>(1, e.elements));
    row.peer->share_within_tolerance = 1.0 - static_cast<double>(e.violations) / elements;
    row.outcome = e.violations == 0 ? outcome::passed : outcome::incorrect;
    row.message = e.violations == 0 ? std::string()
                                    : fmt::format("{} of {} elements outside the tolerance (rule {}, max abs error {:.3g}{})",
                                                  e.violations, e.elements, to_string(j.rule), e.max_abs,
                                                  e.nonfinite > 0 ? fmt::format(", {} NaN/Inf", e.nonfinite) : std::string());
  };
  std::vector<case_result> rows;
  for (std::string_view peer : torch_peers) {
    case_result row = make_row(plan, std::string(peer_prefix) + std::string(peer));
    row.peer = peer_details{};
    rows.push_back(std::move(row));
  }
  ctx.prog.begin_case(gbench_name(rows.front()));
  run_case_peers(ctx.settings.peers, c, rows, budget_left, ctx.settings.stop_signal, [&](const std::string& line) {
    ctx.prog.finish();
    fmt::print(ctx.log, "{}\n", line);
  });
  // The fastest fused time of this case, for the console's comparison.
  std::optional<double> fused_median;
  for (const case_result& r : ctx.writer.get_results().cases)
    if (r.model == model.id && r.config_label == plan.point.label && r.outcome == outcome::passed && r.stats &&
        r.implementation != "ref" && r.implementation != "ref_tf32" && !is_peer_implementation(r.implementation))
      fused_median = fused_median ? std::min(*fused_median, r.stats->median) : r.stats->median;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    case_result& row = rows[i];
    if (i > 0) ctx.prog.begin_case(gbench_name(row));  // one helper ran them all: counted as they are recorded
    ctx.prog.finish();
    fmt::print(ctx.log, "{}\n", peer_line(row, fused_median));
    record(ctx, std::move(row));
  }
}

/// After every kernel timing of the run: the peers of each timed case, one helper process per case
/// (peers.h), nothing of ours on the device meanwhile. The stage's budget (--peer-budget) is dealt
/// fairly: each case gets what is left divided by the cases left (what one leaves unused goes to the
/// next), so a tight budget times the cheap peers of every model rather than every peer of the first;
/// the peers a case's share leaves out are recorded as skipped for time.
void run_peer_stage(run_context& ctx, const std::vector<case_plan>& plans) {
  if (plans.empty()) return;
  const peer_settings& peers = ctx.settings.peers;
  ctx.prog.finish();
  fmt::print(ctx.log, "bench: peers: {} case(s) x {} torch peers, {} {}{}\n", plans.size(), torch_peers.size(),
             peers.python, peer_helper_path(peers),
             peers.budget > 0 ? fmt::format(", budget {:g} s", peers.budget) : std::string());
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < plans.size(); ++i) {
    ctx.check_stop();
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double share = peers.budget > 0 ? (peers.budget - spent) / static_cast<double>(plans.size() - i)
                                          : std::numeric_limits<double>::infinity();
    run_case_peer_rows(ctx, plans[i], share);
  }
}

}  // namespace

json scale_for_cpu(const model_entry& model, const json& config) {
  json c = model.canonicalize(config);
  const auto try_set = [&](const char* key, int64_t value) {
    json candidate = c;
    candidate[key] = value;
    try {
      c = model.canonicalize(candidate);
    } catch (const std::invalid_argument&) {
      // The model rejects this change (e.g. W' pinned to C_out): keep the field as it is.
    }
  };
  const auto integer = [&](const char* key) { return c.contains(key) && c.at(key).is_number_integer(); };
  if (integer(batch_key)) {
    const int64_t base =
        model.default_config.contains(batch_key) ? model.default_config.at(batch_key).get<int64_t>() : 1;
    try_set(batch_key, std::max<int64_t>(1, c.at(batch_key).get<int64_t>() / std::max<int64_t>(1, base)));
  }
  for (const char* key : spatial_keys)
    if (integer(key)) try_set(key, std::max<int64_t>(1, c.at(key).get<int64_t>() / 4));
  // Large 2D defaults are still seconds per reference call after /4: halve on to the budget.
  while (model.problem_size(model.parse(c)) > cpu_problem_budget) {
    const json before = c;
    for (const char* key : spatial_keys)
      if (integer(key) && c.at(key).get<int64_t>() > 1) try_set(key, c.at(key).get<int64_t>() / 2);
    if (c == before) break;  // nothing left that the model accepts
  }
  return c;
}

std::vector<bench_point> plan_sweep(const std::vector<const model_entry*>& models, const std::string& sweep,
                                    bool cpu_small) {
  if (sweep != "quick" && sweep != "standard")
    throw std::invalid_argument("sweep = " + sweep + ": must be quick or standard");
  std::vector<bench_point> points;
  for (const model_entry* model : models) {
    std::vector<sweep_point> configs = sweep == "quick" ? std::vector<sweep_point>{{"default", model->default_config}}
                                                        : model->sweep();
    const std::size_t first_of_model = points.size();
    for (sweep_point& p : configs) {
      bench_point b{model, p.label, model->canonicalize(p.config), {}};
      if (cpu_small) {
        b.config = scale_for_cpu(*model, b.config);
        b.label += cpu_small_suffix;
      }
      // Timing one config twice under two names would make a sweep look wider than it is.
      const auto same = std::find_if(points.begin() + static_cast<std::ptrdiff_t>(first_of_model), points.end(),
                                     [&](const bench_point& earlier) { return earlier.config == b.config; });
      if (same != points.end()) {
        same->merged_labels.push_back(b.label);
        continue;
      }
      points.push_back(std::move(b));
    }
  }
  return points;
}

std::string plan_digest(const std::vector<bench_point>& points) {
  json plan = json::array();
  for (const bench_point& p : points)
    plan.push_back({{"model", p.model->id}, {"label", p.label}, {"config", p.config}, {"merged_labels", p.merged_labels}});
  return fingerprint(plan.dump());
}

std::vector<bench_point> shard_points(const std::vector<bench_point>& points, const shard_spec& shard) {
  std::vector<bench_point> held;
  for (std::size_t p = 0; p < points.size(); ++p)
    if (shard.holds(static_cast<std::int64_t>(p))) held.push_back(points[p]);
  return held;
}

std::vector<bench_point> load_configs(const std::string& file_or_json) {
  const auto first = file_or_json.find_first_not_of(" \t\r\n");
  const bool inline_json = first != std::string::npos && (file_or_json[first] == '{' || file_or_json[first] == '[');
  json doc;
  if (inline_json) {
    doc = json::parse(file_or_json);
  } else {
    std::ifstream in(file_or_json);
    if (!in) throw std::invalid_argument("--config " + file_or_json + ": not inline JSON and not a readable file");
    doc = json::parse(in);
  }
  const std::string source = inline_json ? std::string("--config") : "--config " + file_or_json;
  const json entries = doc.is_array() ? doc : json::array({doc});
  if (entries.empty()) throw std::invalid_argument(source + ": no configs");
  std::vector<bench_point> points;
  std::set<std::pair<std::string, std::string>> labels;
  static const std::set<std::string> keys{"model", "config", "label"};
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json& e = entries[i];
    const std::string where = fmt::format("{} entry {}", source, i);
    if (!e.is_object() || !e.contains("model") || !e.at("model").is_string() || !e.contains("config") ||
        !e.at("config").is_object())
      throw std::invalid_argument(where + ": must be {\"model\": ID, \"config\": {...}, \"label\": \"...\"}");
    // A misspelt "lable" silently dropped would time the right config under the wrong name.
    for (const auto& [key, value] : e.items())
      if (keys.count(key) == 0)
        throw std::invalid_argument(fmt::format("{}: unknown key \"{}\" (keys: model, config, label)", where, key));
    if (e.contains("label") && !e.at("label").is_string())
      throw std::invalid_argument(where + ": label must be a string");
    const std::string model_id = e.at("model").get<std::string>();  // a named string: g++ 13's
    const model_entry& model = find_model(model_id);  // -Wdangling-reference flagged the temporary
    bench_point p{&model, e.contains("label") ? e.at("label").get<std::string>() : fmt::format("custom {}", i + 1),
                  model.canonicalize(e.at("config")), {}};
    if (!labels.insert({model.id, p.label}).second)
      throw std::invalid_argument(where + ": label \"" + p.label + "\" is used twice for " + model.id);
    points.push_back(std::move(p));
  }
  return points;
}

void require_fits(const bench_point& point, device_kind device) {
  const double available = available_bytes(device);
  const double need = case_bytes_estimate(*point.model, point.model->parse(point.config), 2, true);
  if (available > 0.0 && need > usable_memory_fraction * available)
    throw std::invalid_argument(fmt::format(
        "{}/{} needs ~{:.1f} GiB, {:.1f} GiB available on {} (of which bench plans with {:.0f}%)", point.model->id,
        point.label, to_gib(need), to_gib(available), to_string(device), usable_memory_fraction * 100.0));
}

run_environment describe_environment(device_kind device, const std::string& sweep, std::uint64_t seed) {
  run_environment env;
  env.device = std::string(to_string(device));
#if FUSEBENCH_BENCH_DEVICE
  if (device == device_kind::cuda) {
    const device_info info = device_description();
    env.gpu_name = info.name;
    env.sm_count = info.sm_count;
    env.l2_bytes = info.l2_bytes;
    env.driver = info.driver;
    env.cuda_runtime = info.cuda_runtime;
  }
#endif
  env.cpu_name = cpu_model_name();
  const build_info build = describe_build();
  env.libtorch = build.libtorch;
  env.git_commit = build.git_commit;
  env.source_digest = build.source_digest;
  env.build_type = build.build_type;
  env.date = utc_now();
  env.hostname = host_name();
  env.sweep = sweep;
  env.seed = seed;
  return env;
}

namespace {

/// The case loop, once the writer exists: everything whose failure must leave the file marked.
void run_points(const std::vector<bench_point>& points, const bench_settings& settings, run_environment env,
                results_writer& writer, bench_summary& summary, std::ostream& log) {
  fmt::print(log, "bench: {} config(s), {} case(s) on {}; measuring bandwidth, FP32 and fp64 MMA peaks\n", points.size(),
             summary.planned, settings.device == device_kind::cuda ? env.gpu_name : std::string("cpu"));
  for (const bench_point& p : points)
    if (!p.merged_labels.empty())
      fmt::print(log, "bench: {}: {} scale to the same config as \"{}\"; timed once, as \"{}\"\n", p.model->id,
                 fmt::format("\"{}\"", fmt::join(p.merged_labels, "\", \"")), p.label, p.label);
  // Stopped before the first case (the plug-ins were loading): nothing is measured, and the file
  // says so with 0 cases.
  if (const int signal = settings.stop_signal ? settings.stop_signal() : 0; signal != 0) {
    const final_writes_guard writing;
    summary.interrupted_by = signal;
    const std::string before_any_case =
        fmt::format("interrupted by {} after 0 of {} cases", signal_name(signal), summary.planned);
    writer.mark_incomplete(before_any_case);
    return;
  }
  // A shard that holds no config (more shards than configs) has nothing to measure a floor for.
  const device_calibration calibration = settings.calibration ? *settings.calibration
                                         : points.empty()     ? device_calibration{}
                                                              : calibrate(settings.device);
  env.measured_bandwidth = calibration.bandwidth;
  env.measured_fp32_peak = calibration.fp32_peak;
  env.measured_fp64_mma_peak = calibration.fp64_mma_peak;
  writer.set_environment(env);
  fmt::print(log,
             "bench: bandwidth {:.1f} GB/s (copy {:.1f}, read {:.1f}; the floor takes the larger), FP32 peak {:.1f} "
             "GFLOP/s, fp64 MMA peak {:.1f} GFLOP/s\n",
             calibration.bandwidth * 1e-9, calibration.copy_bandwidth * 1e-9, calibration.read_bandwidth * 1e-9,
             calibration.fp32_peak * 1e-9, calibration.fp64_mma_peak * 1e-9);

  call_timer timer(settings.device);
  const auto steady = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  const auto total = static_cast<std::size_t>(summary.planned);
  progress prog = settings.progress_out != nullptr ? progress(total, *settings.progress_out, false, steady)
                                                   : progress(total);
  run_context ctx{settings, calibration, timer, writer, prog, log, summary};
  try {
    std::vector<case_plan> timed;
    for (const bench_point& point : points)
      if (std::optional<case_plan> plan = run_point(ctx, point)) timed.push_back(std::move(*plan));
    if (settings.peers.enabled) run_peer_stage(ctx, timed);
  } catch (const run_interrupted& stop) {
    const final_writes_guard writing;  // the file is marked incomplete whatever Ctrl-C comes now
    prog.finish();
    summary.interrupted_by = stop.get_signal();
    writer.mark_incomplete(fmt::format("interrupted by {} after {} of {} cases", signal_name(stop.get_signal()),
                                       writer.get_results().cases.size(), summary.planned));
    return;
  }
  prog.finish();
  writer.finish();
}

}  // namespace

bench_summary run_bench(const std::vector<bench_point>& points, const bench_settings& settings) {
  if (settings.device == device_kind::cuda && !cuda_available())
    throw std::invalid_argument("device = cuda: no CUDA device or a CPU-only libtorch");
  const c10::AutoGradMode no_grad(false);  // timing, not training: no autograd bookkeeping in the references
  bench_summary summary;
  std::filesystem::create_directories(settings.out_dir);
  summary.results_path = settings.out_dir / "results.json";
  summary.gbench_path = settings.out_dir / "gbench.json";
  for (const bench_point& p : points)
    summary.planned += static_cast<std::int64_t>(cases_of(p, settings.device, settings.peers.enabled));

  std::ostream& log = settings.progress_out != nullptr ? *settings.progress_out : std::cerr;
  run_environment env = describe_environment(settings.device, settings.sweep_name, settings.seed);
  env.atol = settings.checks.atol;
  env.rtol = settings.checks.rtol;
  env.shard = settings.shard;
  env.plan_digest = settings.plan_digest;
  env.plugins = plugin::registered_implementations();
  results_writer writer(summary.results_path, env, summary.gbench_path);
  writer.set_planned_cases(summary.planned);
  try {
    run_points(points, settings, env, writer, summary, log);
  } catch (const std::exception& e) {
    // A run that dies must not leave a file that reads as a finished run with fewer cases.
    try {
      writer.mark_incomplete(fmt::format("bench failed after {} of {} cases: {}", writer.get_results().cases.size(),
                                         summary.planned, e.what()));
    } catch (const std::exception&) {
      // The file cannot be written either; the original error is the one to report.
    }
    throw;
  }
  summary.results = writer.get_results();
  summary.unjudged_plugins = unjudged_plugins(summary.results);
  // Beside a previous run's files until this one is complete (results_writer): say where it is.
  summary.results_path = writer.get_path();
  summary.gbench_path = writer.get_gbench_path();
  return summary;
}

bench_summary summarize_results(const results_file& results, const std::filesystem::path& results_path,
                                const std::filesystem::path& gbench_path) {
  bench_summary summary;
  summary.results_path = results_path;
  summary.gbench_path = gbench_path;
  summary.results = results;
  summary.planned = results.status.planned_cases;
  for (const case_result& c : results.cases) count_row(summary, c);
  summary.unjudged_plugins = unjudged_plugins(results);
  return summary;
}

void print_summary(const bench_summary& summary, std::ostream& out) {
  for (const case_result& c : summary.results.cases) {
    std::string line = fmt::format("{:<58} {:<13}", gbench_name(c), to_string(c.outcome));
    if (c.stats)
      line += fmt::format(" median {:>11}  p10 {:>11}  p90 {:>11}  n {:>4}", format_seconds(c.stats->median),
                          format_seconds(c.stats->p10), format_seconds(c.stats->p90), c.stats->n);
    // time / floor: 1.00x is at the roofline floor, 2x is twice as slow as it; never a percentage,
    // which read as if the time were below the floor.
    if (c.floor && c.stats && c.floor->floor_seconds > 0.0)
      line += fmt::format("  {:.2f}x floor{}", c.stats->median / c.floor->floor_seconds,
                          c.floor->impossible ? " IMPOSSIBLE" : "");
    if (std::isfinite(c.tolerance_ratio)) line += fmt::format("  max err/tol {:.3g}", c.tolerance_ratio);
    if (c.peer && std::isfinite(c.peer->share_within_tolerance))
      line += fmt::format("  {:.4g}% within", 100.0 * c.peer->share_within_tolerance);
    if (!c.message.empty()) line += "  " + c.message.substr(0, 160);
    fmt::print(out, "{}\n", line);
  }
  fmt::print(out, "\nbench: {} timed, {} failing, {} skipped, {} impossible{}\nbench: wrote {} and {}\n",
             summary.timed, summary.failing, summary.skipped, summary.impossible,
             summary.results.status.complete ? std::string()
                                             : "; INCOMPLETE: " + summary.results.status.incomplete_reason,
             summary.results_path.string(), summary.gbench_path.string());
  // A plug-in the run was asked to judge that judged nothing (registered for another device or model
  // only, or declining every config) was skipped, not passed: the run exits 1.
  for (const std::string& name : summary.unjudged_plugins)
    fmt::print(out, "bench: {} judged nothing in this run (not run or declined wherever it was asked); a skipped "
                    "implementation is not a passed one\n",
               name);
  if (summary.peers_within + summary.peers_outside + summary.peers_error + summary.peers_skipped > 0)
    fmt::print(out, "bench: peers (information, never the exit status): {} within tolerance, {} outside, {} error, {} "
                    "skipped\n",
               summary.peers_within, summary.peers_outside, summary.peers_error, summary.peers_skipped);
}

}  // namespace fb::bench
