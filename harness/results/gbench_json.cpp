#include "harness/results/gbench_json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "harness/results/detail/atomic_file.h"

namespace fb {
namespace {

using json = nlohmann::json;

constexpr double microseconds_per_second = 1e6;

/// Google Benchmark writes "release" or "debug".
std::string library_build_type(const std::string& build_type) {
  std::string lower = build_type;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return lower == "debug" ? "debug" : "release";
}

json timed_entry(const std::string& name, std::size_t family, const char* run_type, std::int64_t repetitions,
                 std::int64_t iterations, double seconds) {
  const double us = std::isfinite(seconds) ? seconds * microseconds_per_second : 0.0;
  return json{{"name", name},
              {"family_index", family},
              {"per_family_instance_index", 0},
              {"run_name", name},
              {"run_type", run_type},
              {"repetitions", repetitions},
              {"threads", 1},
              {"iterations", iterations},
              {"real_time", us},
              {"cpu_time", us},
              {"time_unit", "us"}};
}

}  // namespace

std::string gbench_name(const case_result& c) {
  return fmt::format("{}/{}/{}", c.model, c.config_label, c.implementation);
}

nlohmann::json to_gbench_json(const results_file& results) {
  const run_environment& env = results.environment;
  json context{{"date", env.date},
               {"host_name", env.hostname},
               {"executable", "fusebench"},
               {"num_cpus", std::max(1u, std::thread::hardware_concurrency())},
               {"mhz_per_cpu", 0},
               {"cpu_scaling_enabled", false},
               {"caches", json::array()},
               {"library_build_type", library_build_type(env.build_type)},
               // Extra context keys are allowed by the format and ignored by compare.py.
               {"fusebench_schema_version", results_schema_version},
               // compare.py cannot tell an interrupted run from a finished one; a reader of this file can.
               {"fusebench_complete", results.status.complete},
               {"fusebench_incomplete_reason", results.status.incomplete_reason},
               {"device", env.device},
               {"gpu_name", env.gpu_name},
               {"driver", env.driver},
               {"cuda_runtime", env.cuda_runtime},
               {"libtorch", env.libtorch},
               {"git_commit", env.git_commit}};

  json benchmarks = json::array();
  for (std::size_t family = 0; family < results.cases.size(); ++family) {
    const case_result& c = results.cases[family];
    const std::string name = gbench_name(c);
    if (c.outcome != outcome::passed || !c.stats) {
      json entry{{"name", name},
                 {"family_index", family},
                 {"per_family_instance_index", 0},
                 {"run_name", name},
                 {"run_type", "iteration"},
                 {"repetitions", 1},
                 {"repetition_index", 0},
                 {"threads", 1},
                 {"iterations", 0}};
      entry["error_occurred"] = true;
      entry["error_message"] = c.outcome == outcome::passed
                                   ? std::string("not timed")
                                   : fmt::format("{}: {}", to_string(c.outcome), c.message);
      benchmarks.push_back(std::move(entry));
      continue;
    }
    const timing_stats& s = *c.stats;
    const auto repetitions = static_cast<std::int64_t>(s.samples.size());
    for (std::size_t i = 0; i < s.samples.size(); ++i) {
      json entry = timed_entry(name, family, "iteration", repetitions, 1, s.samples[i]);
      entry["repetition_index"] = i;
      benchmarks.push_back(std::move(entry));
    }
    const std::pair<const char*, double> aggregates[] = {{"mean", s.mean}, {"median", s.median}, {"stddev", s.stdev}};
    for (const auto& [aggregate, value] : aggregates) {
      json entry = timed_entry(fmt::format("{}_{}", name, aggregate), family, "aggregate", repetitions, s.n, value);
      entry["run_name"] = name;
      entry["aggregate_name"] = aggregate;
      entry["aggregate_unit"] = "time";
      benchmarks.push_back(std::move(entry));
    }
  }
  return json{{"context", std::move(context)}, {"benchmarks", std::move(benchmarks)}};
}

void save_gbench_json(const results_file& results, const std::filesystem::path& path) {
  detail::write_file_atomically(path, to_gbench_json(results).dump(2) + "\n");
}

}  // namespace fb
