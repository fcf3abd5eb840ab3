#pragma once
/// Export to Google Benchmark's JSON format, so that benchmark's tools/compare.py (and anything else
/// that reads --benchmark_format=json output) works on fusebench runs.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "harness/results/results.h"

namespace fb {

/// Google Benchmark name of a case: "model/config_label/implementation".
[[nodiscard]] std::string gbench_name(const case_result& c);

/// The results as a Google Benchmark JSON document: a `context` (date, host_name, executable,
/// library_build_type, plus the fusebench environment) and a `benchmarks` array. Per timed case:
/// one `run_type: "iteration"` entry per sample (repetition_index, iterations 1), then the
/// `run_type: "aggregate"` entries mean, median and stddev, all with real_time = cpu_time in
/// time_unit "us" (GPU event time: there is no separate CPU time). compare.py pairs entries by name,
/// so its U test sees every sample. A case that did not pass is one entry with error_occurred and
/// no times, which compare.py skips.
[[nodiscard]] nlohmann::json to_gbench_json(const results_file& results);

/// Writes to_gbench_json atomically (temporary file, then rename).
void save_gbench_json(const results_file& results, const std::filesystem::path& path);

}  // namespace fb
