/// `fusebench compare BASE CUR [--min-effect 0.05] [--alpha 0.01] [--allow-different-gpu] [--out FILE]`.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/std.h>

#include "harness/cli/commands.h"  // exit codes shared by all subcommands
#include "harness/cli/reporting_commands.h"
#include "harness/report/compare.h"
#include "harness/results/results.h"

namespace fb::cli {
namespace {

constexpr const char* compare_examples = R"(Examples:
  fusebench compare reports/baselines/NVIDIA_H200.json results.json
      per-case verdicts; exit 1 if any case is slower or newly failing
  fusebench compare base.json cur.json --min-effect 0.10 --alpha 0.001 --out compare.md
      only changes above 10% at p < 0.001 count; table also written to compare.md
  fusebench compare h100.json h200.json --allow-different-gpu
      compare across GPUs anyway (refused by default)

A case is slower when the Mann-Whitney p-value < alpha AND median(cur)/median(base) > 1 + min-effect,
faster when p < alpha AND the ratio < 1 - min-effect, else same.
Exit status: 0 no regression, 1 a regression, 2 bad usage, unreadable file or different GPUs.)";

}  // namespace

int run_compare(const compare_options& options) {
  try {
    const results_file base = load_results(options.base);
    const results_file cur = load_results(options.cur);
    report::compare_settings settings;
    settings.alpha = options.alpha;
    settings.min_effect = options.min_effect;
    settings.allow_different_gpu = options.allow_different_gpu;
    const report::comparison result = report::compare_results(base, cur, settings);

    std::ostringstream table;
    report::print_comparison_markdown(table, result);
    const std::string summary = report::comparison_summary(result);
    if (!options.out.empty()) {
      std::ofstream out(options.out, std::ios::binary | std::ios::trunc);
      out << table.str() << "\n" << summary << "\n";
      out.close();
      if (!out) throw std::runtime_error(fmt::format("cannot write {}", options.out));
    }
    fmt::print("{}\n{}\n", table.str(), summary);
    return result.has_regression() ? exit_failure : exit_ok;
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
  sub->add_option("--out", options->out, "Also write the Markdown table and summary to FILE");
  sub->footer(compare_examples);
  sub->callback([options, &run]() { run = [options]() { return run_compare(*options); }; });
}

}  // namespace fb::cli
