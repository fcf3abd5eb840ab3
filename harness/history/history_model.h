#pragma once
/// `fusebench history`: many results files regrouped as series over runs (one series per GPU, model,
/// implementation and config), runs ordered by commit, and the steps found in each series. The page,
/// Markdown and CSV writers only format this record.
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/process/provenance.h"
#include "harness/results/outcome.h"
#include "harness/results/results.h"
#include "harness/stats/change_points.h"

namespace fb::history {

/// What a history holds and how its steps are found.
struct history_settings {
  stats::change_point_settings steps;  ///< minimum effect and alpha of a step
  /// Leave the points of dirty trees and incomplete runs out of step detection (they are drawn and
  /// marked either way). Off by default: a gate measures a copy of the working tree, so its runs are
  /// dirty. Cases that did not pass are never used.
  bool clean_runs_only = false;
  std::vector<std::string> gpus;  ///< keep only runs of these GPUs (name or slug, e.g. "nvidia-h200"); empty: all
};

/// Where a commit sits in the repository's history.
struct commit_position {
  std::size_t topological_index = 0;  ///< position in `git log --topo-order --reverse` (parents first)
  std::int64_t commit_time = 0;       ///< committer date [seconds since 1970]
};

/// The repository's commits by full hash; empty when there is no repository (or no git).
using commit_order = std::map<std::string, commit_position>;

/// One bench run: one results file, or several identical copies of it (a baseline, a gate folder).
struct run_record {
  std::vector<std::string> sources;  ///< files holding this run; the first one was read
  std::string device;                ///< gpu_name, or "CPU (<hostname>)" for a CPU run
  std::string device_slug;           ///< lower case, '-' for the rest, e.g. "nvidia-h100-80gb-hbm3"
  std::string commit;                ///< the measuring harness's commit without "-dirty"; "unknown" if not recorded
  bool dirty = false;                ///< measured from a tree with uncommitted changes
  bool commit_in_repository = false; ///< the commit is in the repository that ordered the runs
  /// What the source digest says of the commit (provenance::get_text), e.g. "sources are 43b68bf's
  /// (digest matches)" or "no source digest (...)"
  std::string source_check;
  bool source_mismatch = false;      ///< the recorded commit is not what the digest names: shown as a caveat
  std::string date;                  ///< start of the run, ISO-8601 UTC
  std::string hostname;              ///< machine that measured
  std::string sweep;                 ///< e.g. "quick"
  bool complete = true;              ///< every planned case finished
  std::string incomplete_reason;     ///< why not; empty when complete
  /// The commit's first 7 characters, with "-dirty" for a dirty tree.
  [[nodiscard]] std::string get_short_commit() const;
  /// e.g. "40f9cd5 · 2026-11-23 21:01Z".
  [[nodiscard]] std::string get_label() const;
  /// "dirty tree", "incomplete run: <reason>", a digest mismatch, or "" for a clean, complete run whose
  /// digest matches (or that has none).
  [[nodiscard]] std::string get_caveat() const;
};

/// One case of one run, as a point of a series.
struct series_point {
  std::size_t run = 0;       ///< index into history::runs
  double median = 0.0;       ///< [seconds]
  double p10 = 0.0;          ///< [seconds]
  double p90 = 0.0;          ///< [seconds]
  std::int64_t n = 0;        ///< timed repetitions [count]
  std::vector<double> samples;  ///< every repetition [seconds]
  double floor_seconds = std::numeric_limits<double>::quiet_NaN();  ///< the case's roofline floor; NaN: none
  /// Median of the strict reference ("ref") of the same run and config over this median; NaN when there
  /// is none or either side did not pass.
  double speedup = std::numeric_limits<double>::quiet_NaN();
  fb::outcome outcome = fb::outcome::passed;  ///< verification result of the case
  std::string excluded_because;  ///< why step detection leaves it out; empty: it is used
};

/// One step of a series, between two clean runs.
struct series_step {
  std::size_t last_run_before = 0;  ///< run index (history::runs) of the last point of the old level
  std::size_t first_run_after = 0;  ///< run index of the first point of the new level
  std::size_t level_before_runs = 0;  ///< points in the old level [count]
  std::size_t level_after_runs = 0;   ///< points in the new level [count]
  double before_median = 0.0;  ///< pooled median of the old level [seconds]
  double after_median = 0.0;   ///< pooled median of the new level [seconds]
  double ratio = 0.0;          ///< after / before
  double p_value = 1.0;        ///< two-sided Mann-Whitney p-value, old level vs new level
};

/// One (device, model, implementation, config) over runs.
struct run_series {
  std::string device;          ///< see run_record::device
  std::string device_slug;     ///< see run_record::device_slug
  std::string model;           ///< registry id
  int kernelbench_id = 0;      ///< KernelBench level-2 problem number
  std::string implementation;  ///< e.g. "fused_cuda"
  std::string config_label;    ///< e.g. "default"
  std::string config;          ///< the config as compact JSON
  int config_variant = 1;      ///< 2, 3, ... when the same label held different configs over time
  std::vector<series_point> points;  ///< in run order
  std::vector<series_step> steps;    ///< in run order
  /// e.g. "fused_cuda default", "ref batch x2 (config 2)".
  [[nodiscard]] std::string get_name() const;
};

/// The series of one (device, model): one chart.
struct chart {
  std::string device;                ///< see run_record::device
  std::string device_slug;           ///< see run_record::device_slug
  std::string model;                 ///< registry id
  int kernelbench_id = 0;            ///< KernelBench level-2 problem number
  std::vector<std::size_t> series;   ///< indices into history::series: ref, ref_tf32, fused; default config first
  std::vector<std::size_t> runs;     ///< the runs with a point in any of them, in order
};

/// Everything the writers format.
struct history {
  history_settings settings;          ///< as given
  std::vector<run_record> runs;       ///< in order: by commit, else by date
  std::vector<run_series> series;         ///< grouped per chart
  std::vector<chart> charts;          ///< by device, then model
  std::vector<std::string> skipped_files;  ///< JSON files found in folders that are not results files
  std::string ordering;               ///< how the runs were ordered, one sentence
};

/// Bad, mixed or missing input: one line for stderr, exit status 2.
class history_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A results file and the path it was read from.
struct loaded_results {
  std::string source;    ///< the path, as given or found
  results_file results;  ///< its contents
  /// Its recorded commit checked against its source digest (check_sources); no_digest until checked.
  provenance source_check;
};

/// Checks each file's recorded commit against its source digest with `repository` (nullptr: none to
/// check against), into loaded_results::source_check.
void check_sources(std::vector<loaded_results>& files, source_repository* repository);

/// Results files read from `paths`: a file is read as a results file (anything else is an error); a
/// folder is searched recursively for *.json, in path order, and a JSON file whose "schema" is not
/// "fusebench-results" is listed in `skipped` and left out. Throws history_error for a missing path, a
/// file that is not valid JSON, and a results file that does not validate (results_error's line).
[[nodiscard]] std::vector<loaded_results> load_results_files(const std::vector<std::filesystem::path>& paths,
                                                             std::vector<std::string>& skipped);

/// The repository's commit order from `git -C repository log --all --topo-order --reverse`; empty when
/// git or the repository is missing.
[[nodiscard]] commit_order read_commit_order(const std::filesystem::path& repository);

/// The top folder of the git repository holding `path`; empty when there is none.
[[nodiscard]] std::filesystem::path find_repository(const std::filesystem::path& path);

/// Builds the history. Runs are identified by (device, commit, date, hostname, sweep, seed, plan);
/// identical copies of a run become one run with several sources. A run whose source digest names a
/// commit (loaded_results::source_check) is that commit's, clean, whatever its file recorded; a digest
/// that matches no commit makes it a dirty run of its recorded commit. Ordering: runs whose commit is in
/// `commits` are placed at the commit's committer date, and runs of one commit by the repository's
/// topological order, then run date; a run whose commit is not there is placed at its run date.
/// Throws history_error for two files that claim the same run with different contents, a shard of a
/// run (merge first), an unknown GPU in settings.gpus, no run left, or invalid settings.
[[nodiscard]] history build_history(std::vector<loaded_results> files, const commit_order& commits,
                                    const history_settings& settings);

/// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3": lower case, every other run of characters one '-'.
[[nodiscard]] std::string slug(std::string_view name);

}  // namespace fb::history
