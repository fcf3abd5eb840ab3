#include "harness/bench/runner.h"

#include <c10/core/GradMode.h>

#include <fmt/format.h>
#include <fmt/ostream.h>
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
#include <set>
#include <stdexcept>

#include "harness/bench/bench_state.h"
#include "harness/bench/progress.h"
#include "harness/bench/timed_call.h"
#include "harness/device.h"
#include "harness/generators.h"
#include "harness/registry.h"
#include "harness/results/gbench_json.h"
#include "harness/results/results_writer.h"
#include "harness/verify_plan.h"

#if FUSEBENCH_BENCH_DEVICE
#include "harness/bench/device_timing.h"
#endif
#if __has_include(<torch/version.h>)
#include <torch/version.h>  // only the TORCH_VERSION macros, no torch API
#endif

namespace fb::bench {
namespace {

constexpr double not_computed = std::numeric_limits<double>::quiet_NaN();
/// Share of the free device memory a config may plan to use: torch's allocator rounds up and
/// fragments, and cuDNN takes workspaces we do not count.
constexpr double usable_memory_fraction = 0.85;
/// Keys of the shared config vocabulary that scale_for_cpu shrinks (never a model name).
constexpr const char* batch_key = "batch_size";
constexpr const char* spatial_keys[] = {"depth", "height", "width"};
/// Conv-output elements a CPU-scaled config may keep: ~0.1 s per libtorch reference call on 2 cores.
constexpr double cpu_problem_budget = 1 << 20;

std::string run_command(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  if (::pclose(pipe) != 0) return {};
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

/// The commit that measured: asked of git at run time (the binary may be older than the checkout's
/// HEAD only if someone forgot to rebuild, which -dirty does not catch), else the configure-time one.
std::string git_commit() {
#ifdef FUSEBENCH_SOURCE_DIR
  const std::string git = std::string("git -C '") + FUSEBENCH_SOURCE_DIR + "' ";
  // --verify: a repository without commits prints "HEAD" for plain rev-parse HEAD.
  const std::string head = run_command(git + "rev-parse --verify --quiet HEAD 2>/dev/null");
  if (!head.empty())
    return head + (run_command(git + "status --porcelain --untracked-files=no 2>/dev/null").empty() ? "" : "-dirty");
#endif
#ifdef FUSEBENCH_GIT_COMMIT
  if (std::string(FUSEBENCH_GIT_COMMIT).size() > 0) return FUSEBENCH_GIT_COMMIT;
#endif
  return "unknown";
}

std::string libtorch_version() {
#if defined(TORCH_VERSION)
  return TORCH_VERSION;
#elif defined(FUSEBENCH_LIBTORCH_VERSION)
  return FUSEBENCH_LIBTORCH_VERSION;
#else
  return "unknown";
#endif
}

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

double product(const std::vector<int64_t>& shape) {
  double n = 1.0;
  for (int64_t s : shape) n *= static_cast<double>(s);
  return n;
}

std::string format_seconds(double s) {
  if (!std::isfinite(s)) return "-";
  if (s < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

/// The fused implementations of a model for a device, in registry order.
std::vector<const implementation*> fused_for(const model_entry& model, device_kind device) {
  std::vector<const implementation*> out;
  for (const implementation& impl : model.fused)
    if (impl.device == device) out.push_back(&impl);
  return out;
}

/// Everything shared by the cases of one run.
struct run_context {
  const bench_settings& settings;
  device_calibration calibration;
  call_timer& timer;
  results_writer& writer;
  progress& prog;
  std::ostream& log;
  bench_summary& summary;
};

/// Memory a config plans to use on the device [bytes]: the rotated input sets, and the reference's
/// footprint (input, output and ~3 conv-output-sized temporaries), in fp32 for the timing and in
/// fp32 plus fp64 at once during verification.
double planned_bytes(const model_entry& model, const json& config, int input_sets) {
  const double in = product(model.input_shape(config));
  const double out = product(model.output_shape(config));
  const double conv = model.problem_size(config);
  double workspace = 0.0;
  for (const implementation& impl : model.fused)
    if (impl.workspace_bytes) workspace = std::max(workspace, static_cast<double>(impl.workspace_bytes(config)));
  const double reference_fp32 = 4.0 * (in + out + 3.0 * conv);
  return 4.0 * input_sets * in + 3.0 * reference_fp32 + workspace;
}

/// Untimed calls first (cuDNN heuristics, lazy module loading, first-touch page faults), one per
/// input set, stopping early when they are slow: the cap is there to bound the run.
void warm_up(const bench_settings& settings, const std::function<double(std::size_t)>& sample) {
  double spent = 0.0;
  for (int i = 0; i < std::max(1, settings.warmup_calls); ++i) {
    spent += sample(static_cast<std::size_t>(i));
    if (spent > 0.1 * settings.policy.time_cap) break;
  }
}

/// Warm-up, then samples through Google Benchmark; `call(i)` runs on input set i % sets. `release`
/// (optional) runs before every timed call, outside the timed region: it frees what the previous
/// call returned, so no repetition pays for freeing the last one's output.
timing_stats time_implementation(run_context& ctx, const case_result& row,
                                 const std::function<void(std::size_t)>& call,
                                 const std::function<void()>& release = {}) {
  const auto sample = [&](std::size_t i) {
    if (release) release();
    return ctx.timer.time_once([&] { call(i); });
  };
  warm_up(ctx.settings, sample);
  const sample_run run = collect_samples(gbench_name(row), ctx.settings.policy, sample);
  if (release) release();
  return summarize_samples(run.samples);
}

void record(run_context& ctx, case_result row) {
  if (row.stats) ++ctx.summary.timed;
  if (row.outcome == outcome::incorrect || row.outcome == outcome::failed) ++ctx.summary.failing;
  if (row.outcome == outcome::not_run || row.outcome == outcome::not_supported ||
      row.outcome == outcome::invalid_config)
    ++ctx.summary.skipped;
  if (row.floor && row.floor->impossible) {
    ++ctx.summary.impossible;
    ctx.prog.finish();
    fmt::print(ctx.log, "IMPOSSIBLE: {} median {} is below its roofline floor {} ({:.0f}% of floor)\n",
               gbench_name(row), format_seconds(row.stats->median), format_seconds(row.floor->floor_seconds),
               row.floor->percent_of_floor);
  }
  if (row.outcome == outcome::incorrect || row.outcome == outcome::failed) {
    ctx.prog.finish();
    fmt::print(ctx.log, "FAIL: {}: {}: {}\n", gbench_name(row), to_string(row.outcome), row.message);
  }
  ctx.writer.add_case(std::move(row));
}

void run_point(run_context& ctx, const bench_point& point) {
  const model_entry& model = *point.model;
  const bench_settings& settings = ctx.settings;
  const device_kind device = settings.device;
  const std::vector<const implementation*> fused = fused_for(model, device);

  std::vector<std::string> names{"ref", "ref_tf32"};
  for (const implementation* impl : fused) names.push_back(impl->name);
  double problem_size = 0.0;  // known once the config is accepted
  const auto make_row = [&](const std::string& name) {
    case_result r;
    r.model = model.id;
    r.kernelbench_id = model.kernelbench_id;
    r.config = point.config;
    r.config_label = point.label;
    r.implementation = name;
    r.problem_size = problem_size;
    r.max_abs_error = not_computed;
    r.max_rel_error = not_computed;
    return r;
  };
  const auto record_all = [&](outcome o, const std::string& message) {
    for (const std::string& name : names) {
      ctx.prog.begin_case(fmt::format("{}/{}/{}", model.id, point.label, name));
      case_result r = make_row(name);
      r.outcome = o;
      r.message = message;
      record(ctx, std::move(r));
    }
  };

  json config;
  try {
    config = model.canonicalize(point.config);
    problem_size = model.problem_size(config);
  } catch (const std::invalid_argument& e) {  // ref::config_error and its kin
    record_all(outcome::invalid_config, e.what());
    return;
  }

  // The counters of this config (cf. nvbench state): the floor comes from them.
  bench_state state;
  state.set_repetition_policy(settings.policy);
  state.add_element_count(static_cast<std::int64_t>(problem_size));
  if (model.fused_work) {
    const work_estimate work = model.fused_work(config);
    state.add_global_memory_reads<unsigned char>(static_cast<std::int64_t>(work.bytes));
    state.add_flops(work.flops);
  }

  int sets = std::max(1, settings.input_sets);
  if (device == device_kind::cuda) {
    const double free_bytes = free_device_memory();
    while (sets > std::min(2, settings.input_sets) &&
           planned_bytes(model, config, sets) > usable_memory_fraction * free_bytes)
      --sets;
    const double need = planned_bytes(model, config, sets);
    if (free_bytes > 0.0 && need > usable_memory_fraction * free_bytes)
      state.skip(fmt::format("does not fit in device memory: needs ~{:.1f} GiB with {} input sets, {:.1f} GiB free",
                             gib(need), sets, gib(free_bytes)));
  }
  if (state.is_skipped()) {
    ctx.prog.finish();
    fmt::print(ctx.log, "skip: {}/{}: {}\n", model.id, point.label, state.get_skip_reason());
    record_all(outcome::not_run, state.get_skip_reason());
    return;
  }

  // The rotated input sets, each with its own parameters, made once and placed on the device.
  std::vector<model_case> cases;
  try {
    for (int k = 0; k < sets; ++k) {
      const gen::case_recipe recipe{config, settings.seed + 101 + static_cast<std::uint64_t>(k),
                                    input_distribution::uniform, ref::param_init::randomized};
      cases.push_back(on_device(gen::make_case(model, recipe), device));
    }
    synchronize(device);
  } catch (const std::exception& e) {
    record_all(outcome::failed, std::string("making the input sets: ") + e.what());
    return;
  }
  const auto set_of = [&](std::size_t i) -> const model_case& { return cases[i % cases.size()]; };

  // The references: not verified against themselves, only timed.
  for (const bool tf32 : {false, true}) {
    case_result row = make_row(tf32 ? "ref_tf32" : "ref");
    ctx.prog.begin_case(gbench_name(row));
    if (tf32 && device != device_kind::cuda) {
      row.outcome = outcome::not_supported;
      row.message = "TF32 exists only on CUDA devices";
      record(ctx, std::move(row));
      continue;
    }
    try {
      const ref::tf32_guard guard(tf32);
      ref::forward_result keep;  // freed by `release`, outside the timed call
      row.stats = time_implementation(
          ctx, row,
          [&](std::size_t i) {
            const model_case& c = set_of(i);
            keep = model.reference(c.config, c.params, c.input);
          },
          [&] { keep = ref::forward_result{}; });
      row.outcome = outcome::passed;
    } catch (const std::exception& e) {
      row.outcome = outcome::failed;
      row.message = std::string("timing: ") + e.what();
    }
    record(ctx, std::move(row));
  }

  // The fused implementations: verified at this exact config with fresh random parameters, and
  // timed only if they pass.
  for (const implementation* impl : fused) {
    case_result row = make_row(impl->name);
    ctx.prog.begin_case(gbench_name(row));
    check_result check;
    try {
      for (int attempt = 0; attempt < std::max(1, settings.verify_attempts); ++attempt) {
        const gen::case_recipe recipe{config, settings.seed + 7919 * static_cast<std::uint64_t>(attempt),
                                      input_distribution::uniform, ref::param_init::randomized};
        check = verify_case(model, verify_target{*impl, false}, recipe, settings.checks);
        if (check.result != outcome::not_run) break;  // not_run: ill-conditioned draw, try another seed
      }
    } catch (const std::exception& e) {
      check.result = outcome::failed;
      check.message = std::string("verification: ") + e.what();
    }
    row.outcome = check.result;
    row.message = check.result == outcome::passed ? std::string() : check.message;
    if (check.result == outcome::passed || check.result == outcome::incorrect) {
      row.max_abs_error = check.vs_expected.max_abs;
      row.max_rel_error = check.vs_expected.max_rel;
    }
    if (check.result != outcome::passed) {
      record(ctx, std::move(row));
      continue;
    }
    try {
      // Allocated once per case: the timed call is the kernel, not the allocation.
      const at::TensorOptions on_device = at::TensorOptions().device(to_device(device));
      output_slots slots;
      slots.output = at::empty(model.output_shape(config), on_device.dtype(at::kFloat));
      for (const std::string& name : model.buffer_names(config))
        slots.buffers[name] = cases.front().params.at(name).clone();
      const std::size_t ws = impl->workspace_bytes ? impl->workspace_bytes(config) : 0;
      slots.workspace = at::empty({static_cast<int64_t>(ws)}, on_device.dtype(at::kByte));
      row.stats = time_implementation(ctx, row, [&](std::size_t i) { impl->run(set_of(i), slots); });
      row.floor = state.get_floor(ctx.calibration.bandwidth, ctx.calibration.fp32_peak, row.stats->median);
    } catch (const std::exception& e) {
      row.outcome = outcome::failed;
      row.message = std::string("timing: ") + e.what();
      row.stats.reset();
    }
    record(ctx, std::move(row));
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
  while (model.problem_size(c) > cpu_problem_budget) {
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
    for (sweep_point& p : configs) {
      bench_point b{model, p.label, model->canonicalize(p.config)};
      if (cpu_small) {
        b.config = scale_for_cpu(*model, b.config);
        b.label += cpu_small_suffix;
      }
      points.push_back(std::move(b));
    }
  }
  return points;
}

std::vector<bench_point> load_config_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("--config " + path.string() + ": cannot read the file");
  const json doc = json::parse(in);
  const json entries = doc.is_array() ? doc : json::array({doc});
  if (entries.empty()) throw std::invalid_argument("--config " + path.string() + ": no configs in the file");
  std::vector<bench_point> points;
  std::set<std::pair<std::string, std::string>> labels;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json& e = entries[i];
    const std::string where = fmt::format("--config {} entry {}", path.string(), i);
    if (!e.is_object() || !e.contains("model") || !e.at("model").is_string() || !e.contains("config") ||
        !e.at("config").is_object())
      throw std::invalid_argument(where + ": must be {\"model\": ID, \"config\": {...}, \"label\": \"...\"}");
    if (e.contains("label") && !e.at("label").is_string())
      throw std::invalid_argument(where + ": label must be a string");
    const std::string model_id = e.at("model").get<std::string>();
    const model_entry& model = find_model(model_id);
    bench_point p{&model, e.contains("label") ? e.at("label").get<std::string>() : fmt::format("custom {}", i + 1),
                  model.canonicalize(e.at("config"))};
    if (!labels.insert({model.id, p.label}).second)
      throw std::invalid_argument(where + ": label \"" + p.label + "\" is used twice for " + model.id);
    points.push_back(std::move(p));
  }
  return points;
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
  env.libtorch = libtorch_version();
  env.git_commit = git_commit();
#ifdef FUSEBENCH_BUILD_TYPE
  env.build_type = FUSEBENCH_BUILD_TYPE;
#endif
  env.date = utc_now();
  env.hostname = host_name();
  env.sweep = sweep;
  env.seed = seed;
  return env;
}

bench_summary run_bench(const std::vector<bench_point>& points, const bench_settings& settings) {
  if (settings.device == device_kind::cuda && !cuda_available())
    throw std::invalid_argument("device = cuda: no CUDA device or a CPU-only libtorch");
  const c10::AutoGradMode no_grad(false);  // timing, not training: no autograd bookkeeping in the references
  bench_summary summary;
  std::filesystem::create_directories(settings.out_dir);
  summary.results_path = settings.out_dir / "results.json";
  summary.gbench_path = settings.out_dir / "gbench.json";

  std::ostream& log = settings.progress_out != nullptr ? *settings.progress_out : std::cerr;
  run_environment env = describe_environment(settings.device, settings.sweep_name, settings.seed);
  results_writer writer(summary.results_path, env, summary.gbench_path);
  fmt::print(log, "bench: {} config(s) on {}; measuring bandwidth and FP32 peak\n", points.size(),
             settings.device == device_kind::cuda ? env.gpu_name : std::string("cpu"));
  const device_calibration calibration = settings.calibration ? *settings.calibration : calibrate(settings.device);
  env.measured_bandwidth = calibration.bandwidth;
  env.measured_fp32_peak = calibration.fp32_peak;
  writer.set_environment(env);
  fmt::print(log, "bench: bandwidth {:.1f} GB/s (copy {:.1f}, read {:.1f}; the floor takes the larger), FP32 peak {:.1f} GFLOP/s\n",
             calibration.bandwidth * 1e-9, calibration.copy_bandwidth * 1e-9, calibration.read_bandwidth * 1e-9,
             calibration.fp32_peak * 1e-9);

  std::size_t total = 0;
  for (const bench_point& p : points) total += 2 + fused_for(*p.model, settings.device).size();
  call_timer timer(settings.device);
  const auto steady = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  progress prog = settings.progress_out != nullptr ? progress(total, *settings.progress_out, false, steady)
                                                   : progress(total);
  run_context ctx{settings, calibration, timer, writer, prog, log, summary};
  for (const bench_point& point : points) run_point(ctx, point);
  prog.finish();
  summary.results = writer.get_results();
  return summary;
}

void print_summary(const bench_summary& summary, std::ostream& out) {
  for (const case_result& c : summary.results.cases) {
    std::string line = fmt::format("{:<58} {:<13}", gbench_name(c), to_string(c.outcome));
    if (c.stats)
      line += fmt::format(" median {:>11}  p10 {:>11}  p90 {:>11}  n {:>4}", format_seconds(c.stats->median),
                          format_seconds(c.stats->p10), format_seconds(c.stats->p90), c.stats->n);
    if (c.floor)
      line += fmt::format("  {:.1f}% of floor{}", c.floor->percent_of_floor, c.floor->impossible ? " IMPOSSIBLE" : "");
    if (!c.message.empty()) line += "  " + c.message.substr(0, 160);
    fmt::print(out, "{}\n", line);
  }
  fmt::print(out, "\nbench: {} timed, {} failing, {} skipped, {} impossible\nbench: wrote {} and {}\n",
             summary.timed, summary.failing, summary.skipped, summary.impossible, summary.results_path.string(),
             summary.gbench_path.string());
}

}  // namespace fb::bench
