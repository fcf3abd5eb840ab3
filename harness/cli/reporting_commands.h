#pragma once
/// The `report` and `compare` subcommands. main.cpp calls the add_* functions before parsing and
/// runs the action they set after parsing; tests call run_* directly.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace fb::cli {

/// The work of the parsed subcommand; returns the process exit status.
using command_action = std::function<int()>;

/// Options of `fusebench report RESULTS --out DIR [--format md,csv,charts]`.
struct report_options {
  std::filesystem::path results;                        ///< results JSON written by `bench`
  std::filesystem::path out_dir;                        ///< folder for report.md, report.csv, charts/
  std::vector<std::string> formats{"md", "csv", "charts"};  ///< any of "md", "csv", "charts"
  std::string gnuplot = "gnuplot";                      ///< program that draws the charts
};

/// Options of `fusebench compare BASE CUR`.
struct compare_options {
  std::filesystem::path base;        ///< baseline results JSON
  std::filesystem::path cur;         ///< current results JSON
  double min_effect = 0.05;          ///< smallest median change that counts [fraction]
  double alpha = 0.01;               ///< significance level of the Mann-Whitney test [probability]
  bool allow_different_gpu = false;  ///< compare runs of different GPUs anyway
  bool allow_missing = false;        ///< cases of BASE missing from CUR do not fail the comparison
  bool allow_undecided = false;      ///< cases with too few samples to decide do not fail the comparison
  bool allow_incomplete = false;     ///< compare a run marked incomplete instead of refusing it
  bool all_impls = false;            ///< gate ref and ref_tf32 too (by default their changes are information)
  std::filesystem::path out;         ///< also write the Markdown table here; empty or "-": stdout only
};

/// Renders a results file. Returns 0 on success, 2 on a bad file or bad options (one line
/// "fusebench: error: ..." on stderr).
[[nodiscard]] int run_report(const report_options& options);

/// Compares two results files. Returns 0 when CUR covers BASE without regression; 1 with a regression,
/// a case of BASE missing from CUR (unless allow_missing) or a case too thinly sampled to decide
/// (unless allow_undecided); 2 on a bad file or bad options, including runs of different GPUs without
/// allow_different_gpu and an incomplete run without allow_incomplete.
[[nodiscard]] int run_compare(const compare_options& options);

/// Adds `report` to `app`; once parsed, `run` is set to run it. REQUIRES: `run` outlives parsing.
void add_report_command(CLI::App& app, command_action& run);

/// Adds `compare` to `app`; once parsed, `run` is set to run it. REQUIRES: `run` outlives parsing.
void add_compare_command(CLI::App& app, command_action& run);

}  // namespace fb::cli
