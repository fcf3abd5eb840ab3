#pragma once
/// Writes the results file while a run goes on, so an interrupted run keeps its finished cases.
#include <filesystem>

#include "harness/results/results.h"

namespace fb {

/// Owns the results of one run and rewrites the whole file after every finished case: the new
/// content goes to `path.tmp`, which is then rename()d over `path`. At any instant `path` is a
/// complete, loadable file (at worst one case behind), whatever kills the process.
class results_writer {
 public:
  /// Writes the file at once with no cases, so even a run that dies in its first case leaves a
  /// valid file. An empty `gbench_path` skips the Google Benchmark JSON. Throws std::runtime_error
  /// when the file cannot be written.
  results_writer(std::filesystem::path path, run_environment environment, std::filesystem::path gbench_path = {});

  /// Appends a finished case and rewrites both files.
  void add_case(case_result result);

  /// Replaces the environment (e.g. once bandwidth is measured) and rewrites both files.
  void set_environment(run_environment environment);

  /// Everything written so far.
  [[nodiscard]] const results_file& get_results() const { return m_results; }
  /// The results file [path].
  [[nodiscard]] const std::filesystem::path& get_path() const { return m_path; }

 private:
  void flush() const;

  std::filesystem::path m_path;
  std::filesystem::path m_gbench_path;
  results_file m_results;
};

}  // namespace fb
