#pragma once
/// The CLI's subcommands, one file each in harness/cli/. Each adds itself to the app and, when it is
/// the one chosen, sets `run` to its action; main() parses, then calls `run`.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/cli/output_paths.h"
#include "harness/process/exit_status.h"

namespace fb::cli {

/// The chosen subcommand's action; returns the process exit code.
using command_action = std::function<int()>;

using fb::exit_failure;
using fb::exit_ok;
using fb::exit_usage;
using fb::print_error;

void add_list_command(CLI::App& app, command_action& run);
void add_verify_command(CLI::App& app, command_action& run);
void add_bench_command(CLI::App& app, command_action& run);
void add_report_command(CLI::App& app, command_action& run);
void add_compare_command(CLI::App& app, command_action& run);
void add_merge_command(CLI::App& app, command_action& run);
void add_history_command(CLI::App& app, command_action& run);

/// A CLI11 check refusing an empty value (`--shard ""` would otherwise read as "not given"): the
/// parse error then says "<flag>: an empty value; give <what>".
[[nodiscard]] inline CLI::Validator non_empty(const std::string& what) {
  return CLI::Validator(
      [what](std::string& value) { return value.empty() ? "an empty value; give " + what : std::string(); }, "", "");
}

/// A CLI11 check for a seed: 0..2^64-1 written in decimal digits only. CLI11's own conversion
/// saturates ("-1", "2^64" and "1e23" would all run as 2^64-1), so another seed than the one typed runs.
[[nodiscard]] CLI::Validator decimal_seed();

/// A CLI11 check for a count in [low, high] written in decimal digits ("-1" must not wrap to a huge
/// size_t, "2147483648" must not run for days).
[[nodiscard]] CLI::Validator count_within(std::uint64_t low, std::uint64_t high);

/// The `--shard K/N` and `--devices` options of verify and bench (harness/fan_out/), one wording for
/// both: `units` names what a shard holds ("case indices i of each model", "the plan's configs p (in
/// plan order)"), `devices_note` what the CPU fan-out cannot do (may be empty).
void add_fan_out_options(CLI::App* cmd, std::string& shard, std::string& devices, const std::string& units,
                         const std::string& devices_note);

/// `--plugin PATH` (repeatable; FUSEBENCH_PLUGINS adds more), `--isolate/--no-isolate` and
/// `--case-timeout SECONDS` of verify and bench: outside implementations (include/fusebench/plugin.h),
/// judged and timed like the in-tree ones, each isolated case within a time limit.
void add_plugin_options(CLI::App* cmd, std::vector<std::string>& plugins, bool& isolate, int& case_timeout);

/// The plug-in libraries a verify or bench run loads, as inputs of refuse_clashing_paths: each
/// --plugin, then each of FUSEBENCH_PLUGINS (an output written over one would replace the code under test).
[[nodiscard]] std::vector<path_role> plugin_inputs(const std::vector<std::string>& given);

/// The candidate nearest to `word` by edit distance (insertions, deletions, substitutions and
/// swaps of neighbours count 1 each), if it is close enough to be a plausible typo (at most a third
/// of the word, at least 1, at most 3); else "".
[[nodiscard]] std::string nearest_word(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace fb::cli
