/// `fusebench compare BASE CUR [--min-effect 0.05] [--alpha 0.01] [--allow-different-gpu] [--out FILE]`.
#include <iostream>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/std.h>

#include "harness/cli/commands.h"  // exit codes shared by all subcommands
#include "harness/cli/output_paths.h"
#include "harness/cli/reporting_commands.h"
#include "harness/history/history_model.h"
#include "harness/process/provenance.h"
#include "harness/report/compare.h"
#include "harness/results/detail/atomic_file.h"
#include "harness/results/results.h"
#include "harness/stats/mann_whitney.h"

namespace fb::cli {
namespace {

constexpr const char* compare_examples = R"(Examples:
  fusebench compare reports/baselines/nvidia-h200.json bench-results/results.json
      per-case verdicts; exit 1 if any case is slower, newly failing, missing or undecided
  fusebench compare reports/baselines/nvidia-h200.json reports/nvidia-h200/results.json --min-effect 0.10 --alpha 0.001 --out compare.md
      only changes above 10% at p < 0.001 count; table also written to compare.md
  fusebench compare reports/baselines/nvidia-h100-80gb-hbm3.json reports/baselines/nvidia-h200.json --allow-different-gpu
      compare across GPUs anyway (refused by default)

Only the implementations under test (fused, plug-ins) are judged: a change of ref or ref_tf32 says
more about the machine than about the code, so it is shown as information (--all-impls gates them
too). An implementation a run cannot have (ref_tf32 on a CPU: not_supported) is not a failure.
A case is slower when the Mann-Whitney p-value < alpha AND median(cur)/median(base) > 1 + min-effect,
faster when p < alpha AND the ratio < 1 - min-effect, same otherwise. It is undecided when its
sample counts cannot reach p < alpha whatever the times (at alpha 0.01: fewer than {} per side) or
it is timed on one side only, and missing when BASE has it and CUR does not. Missing and undecided
cases fail the comparison unless --allow-missing / --allow-undecided; a run marked incomplete
(interrupted or failed bench) is refused unless --allow-incomplete.
Exit status: 0 CUR covers BASE without regression; 1 a regression (slower or newly failing), a
missing or an undecided case; 2 bad usage, an invalid or unreadable file, different GPUs or an
incomplete run.
The first lines check each file's recorded commit against its source digest in the git repository
holding BASE ("DIGEST MISMATCH" when the sources are another commit's or no commit's; files written
before digests were recorded say so); they do not change the exit status.)";

/// Each file's recorded commit checked against its source digest by the git repository holding BASE
/// (a mismatch is shown, it does not fail the comparison: the timings are what they are).
std::string provenance_lines(const compare_options& options, const results_file& base, const results_file& cur) {
  const std::filesystem::path top = history::find_repository(options.base.parent_path());
  std::optional<source_repository> repository;
  if (!top.empty()) repository.emplace(top);
  source_repository* checker = repository ? &*repository : nullptr;
  const provenance base_check = check_provenance(base.environment.git_commit, base.environment.source_digest, checker);
  const provenance cur_check = check_provenance(cur.environment.git_commit, cur.environment.source_digest, checker);
  return fmt::format("Provenance: BASE commit {}: {}.\nProvenance: CUR commit {}: {}.\n",
                     base.environment.git_commit.empty() ? "unknown" : base.environment.git_commit, base_check.get_text(),
                     cur.environment.git_commit.empty() ? "unknown" : cur.environment.git_commit, cur_check.get_text());
}

}  // namespace

int run_compare(const compare_options& options) {
  try {
    refuse_clashing_paths({{"BASE", options.base}, {"CUR", options.cur}}, {{"--out", options.out}});
    const results_file base = load_results(options.base);
    const results_file cur = load_results(options.cur);
    report::compare_settings settings;
    settings.alpha = options.alpha;
    settings.min_effect = options.min_effect;
    settings.allow_different_gpu = options.allow_different_gpu;
    settings.allow_missing = options.allow_missing;
    settings.allow_undecided = options.allow_undecided;
    settings.allow_incomplete = options.allow_incomplete;
    settings.all_impls = options.all_impls;
    settings.base_name = fmt::format("BASE ({})", options.base.string());
    settings.cur_name = fmt::format("CUR ({})", options.cur.string());
    const report::comparison result = report::compare_results(base, cur, settings);

    std::ostringstream table;
    table << provenance_lines(options, base, cur) << "\n";
    report::print_comparison_markdown(table, result);
    const std::string summary = report::comparison_summary(result);
    if (!options.out.empty() && options.out != "-")
      fb::detail::write_file_atomically(options.out, table.str() + "\n" + summary + "\n");
    fmt::print("{}\n{}\n", table.str(), summary);
    return result.has_failure() || result.judged_nothing() ? exit_failure : exit_ok;
  } catch (const std::exception& e) {
    fmt::print(stderr, "fusebench: error: {}\n", e.what());
    return exit_usage;
  }
}

void add_compare_command(CLI::App& app, command_action& run) {
  auto options = std::make_shared<compare_options>();
  CLI::App* sub = app.add_subcommand("compare", "Compare two results files case by case; exit 1 on a regression");
  sub->add_option("base", options->base, "Baseline results JSON")->required();
  sub->add_option("cur", options->cur, "Current results JSON")->required();
  sub->add_option("--min-effect", options->min_effect, "Smallest median change that counts [fraction]")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--alpha", options->alpha, "Significance level of the Mann-Whitney U test")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  sub->add_flag("--allow-different-gpu", options->allow_different_gpu, "Compare runs of different GPUs anyway");
  sub->add_flag("--allow-missing", options->allow_missing,
                "Cases of BASE missing from CUR are listed but do not fail (exit 1) the comparison");
  sub->add_flag("--allow-undecided", options->allow_undecided,
                "Cases with too few samples to decide are listed but do not fail (exit 1) the comparison");
  sub->add_flag("--allow-incomplete", options->allow_incomplete,
                "Compare a run marked incomplete (interrupted or failed bench) instead of refusing it (exit 2)");
  sub->add_flag("--all-impls", options->all_impls,
                "Gate the references (ref, ref_tf32) too; by default only the implementations under test (fused, "
                "plug-ins) can fail the comparison, and the references' changes are shown as information");
  sub->add_option("--out", options->out, "Also write the Markdown table and summary to FILE ('-': stdout only)");
  // The bound is computed, not typed: the help cannot drift from what compare does.
  sub->footer(fmt::format(compare_examples, stats::mann_whitney_min_samples(0.01)));
  sub->callback([options, &run]() { run = [options]() { return run_compare(*options); }; });
}

}  // namespace fb::cli
