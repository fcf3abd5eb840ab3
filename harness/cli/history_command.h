#pragma once
/// The `history` subcommand. main.cpp calls add_history_command before parsing and runs the action it
/// sets after parsing; tests call run_history directly.
#include <filesystem>
#include <string>
#include <vector>

#include "harness/cli/commands.h"

namespace fb::cli {

/// Options of `fusebench history PATH... --out DIR`.
struct history_options {
  std::vector<std::filesystem::path> paths;  ///< results files, or folders searched recursively
  std::filesystem::path out_dir;             ///< folder for index.html, history.md, history.csv
  double min_effect = 0.05;                  ///< smallest level change that is a step [fraction]
  double alpha = 0.01;                       ///< Mann-Whitney p-value below which a step is real [probability]
  bool clean_runs_only = false;              ///< leave dirty trees and incomplete runs out of step detection
  std::vector<std::string> gpus;             ///< keep only these GPUs (name or slug); empty: all
  std::filesystem::path repository;          ///< git repository that orders the commits; empty: the one holding the first path
  bool no_git = false;                       ///< order by run date only
};

/// Renders the history. Returns 0 when written, 2 on bad usage or a bad or mixed file (one line
/// "fusebench: error: ..." on stderr; nothing is written then).
[[nodiscard]] int run_history(const history_options& options);

}  // namespace fb::cli
