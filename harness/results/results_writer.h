#pragma once
/// Writes the results file while a run goes on, so an interrupted run keeps its finished cases.
#include <filesystem>

#include "harness/results/results.h"

namespace fb {

/// Owns the results of one run and rewrites the whole file after every finished case: the new
/// content goes to `path.tmp`, which is then rename()d over `path`. At any instant `path` is a
/// complete, loadable file (at worst one case behind), whatever kills the process.
///
/// A previous file at `path` (an earlier run into the same folder) is not touched until the new run
/// is complete: the run is written beside it, to partial_path(path), which finish() renames over
/// `path`. An interrupted or failed rerun so leaves the earlier file and the partial one beside it.
///
/// The file says "complete": false until finish() is called, so a run that is killed, interrupted
/// or fails is never mistaken for a finished one; its incomplete_reason says how far it got.
/// Where a run that must not yet replace `path` writes: "results.json" -> "results.partial.json".
[[nodiscard]] std::filesystem::path partial_path(const std::filesystem::path& path);

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

  /// Records how many cases the run will write [count] and rewrites both files.
  void set_planned_cases(std::int64_t planned);

  /// Marks the run complete and rewrites both files. Call once every planned case is in.
  void finish();

  /// Marks the run incomplete for `reason` (e.g. "interrupted by SIGINT after 3 of 12 cases") and
  /// rewrites both files; the finished cases stay.
  void mark_incomplete(std::string reason);

  /// Everything written so far.
  [[nodiscard]] const results_file& get_results() const { return m_results; }
  /// Where the results are now [path]: the final path, or partial_path of it while a previous file
  /// there waits for this run to finish.
  [[nodiscard]] const std::filesystem::path& get_path() const { return m_live_path; }
  /// Where the Google Benchmark JSON is now [path] (empty when none is written).
  [[nodiscard]] const std::filesystem::path& get_gbench_path() const { return m_live_gbench_path; }

 private:
  void flush();

  std::filesystem::path m_path;
  std::filesystem::path m_gbench_path;
  std::filesystem::path m_live_path;         // m_path, or beside it until finish()
  std::filesystem::path m_live_gbench_path;  // m_gbench_path, or beside it until finish()
  results_file m_results;
  bool m_explicit_reason = false;  // mark_incomplete() gave the reason; flush() keeps it
};

}  // namespace fb
