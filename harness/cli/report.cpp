/// `fusebench report RESULTS --out DIR [--format md,csv,charts]`.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/std.h>

#include "harness/cli/commands.h"  // exit codes shared by all subcommands
#include "harness/cli/reporting_commands.h"
#include "harness/printers/chart_printer.h"
#include "harness/printers/csv_printer.h"
#include "harness/printers/markdown_printer.h"
#include "harness/printers/printer_multiplex.h"
#include "harness/report/report_model.h"
#include "harness/results/results.h"

namespace fb::cli {
namespace {

constexpr const char* report_examples = R"(Examples:
  fusebench report results.json --out report/
      report/report.md, report/report.csv and report/charts/*.png
  fusebench report reports/baselines/NVIDIA_H200.json --out /tmp/r --format md
      Markdown only

Exit status: 0 written, 2 bad usage or unreadable results file.)";

bool wants(const report_options& o, std::string_view format) {
  return std::find(o.formats.begin(), o.formats.end(), format) != o.formats.end();
}

/// An output file that must be fully written; the stream is checked when the report is done.
std::unique_ptr<std::ofstream> open_output(const std::filesystem::path& path) {
  auto out = std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc);
  if (!*out) throw std::runtime_error(fmt::format("cannot write {}", path));
  return out;
}

}  // namespace

int run_report(const report_options& options) {
  try {
    for (const std::string& f : options.formats)
      if (f != "md" && f != "csv" && f != "charts")
        throw std::runtime_error(fmt::format("unknown format '{}': expected md, csv or charts", f));
    const results_file results = load_results(options.results);
    const report::report_model model = report::build_report_model(results);

    std::error_code ec;
    std::filesystem::create_directories(options.out_dir, ec);
    if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", options.out_dir, ec.message()));

    printers::printer_multiplex printers;
    std::vector<std::pair<std::filesystem::path, std::unique_ptr<std::ofstream>>> files;
    const auto add_file_printer = [&](const char* name, auto make) {
      const std::filesystem::path path = options.out_dir / name;
      files.emplace_back(path, open_output(path));
      printers.add_printer(make(*files.back().second));
    };
    if (wants(options, "md"))
      add_file_printer("report.md", [](std::ostream& out) { return std::make_unique<printers::markdown_printer>(out); });
    if (wants(options, "csv"))
      add_file_printer("report.csv", [](std::ostream& out) { return std::make_unique<printers::csv_printer>(out); });
    printers::chart_printer* charts = nullptr;
    if (wants(options, "charts")) {
      auto p = std::make_unique<printers::chart_printer>(options.out_dir / "charts", std::cerr, options.gnuplot);
      charts = p.get();
      printers.add_printer(std::move(p));
    }
    printers.print_report(model);

    for (auto& [path, stream] : files) {
      stream->close();
      if (!*stream) throw std::runtime_error(fmt::format("cannot write {}", path));
      fmt::print("fusebench report: wrote {}\n", path.string());
    }
    if (charts != nullptr && !charts->get_charts().empty())
      fmt::print("fusebench report: wrote {} charts in {}\n", charts->get_charts().size(),
                 (options.out_dir / "charts").string());
    return exit_ok;
  } catch (const std::exception& e) {
    fmt::print(stderr, "fusebench: error: {}\n", e.what());
    return exit_usage;
  }
}

void add_report_command(CLI::App& app, command_action& run) {
  auto options = std::make_shared<report_options>();
  CLI::App* sub = app.add_subcommand("report", "Render a results file as Markdown, CSV and PNG charts");
  sub->add_option("results", options->results, "Results JSON written by `fusebench bench`")->required();
  sub->add_option("--out", options->out_dir, "Output folder (created if needed)")->required();
  sub->add_option("--format", options->formats, "Comma-separated outputs: md, csv, charts")
      ->delimiter(',')
      ->check(CLI::IsMember({"md", "csv", "charts"}))
      ->capture_default_str();
  sub->add_option("--gnuplot", options->gnuplot, "gnuplot program used for the charts")->capture_default_str();
  sub->footer(report_examples);
  sub->callback([options, &run]() { run = [options]() { return run_report(*options); }; });
}

}  // namespace fb::cli
