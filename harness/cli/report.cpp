/// `fusebench report RESULTS --out DIR [--format md,csv,charts]`.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/std.h>

#include "harness/cli/commands.h"  // exit codes shared by all subcommands
#include "harness/cli/output_paths.h"
#include "harness/cli/reporting_commands.h"
#include "harness/detail/remove_tree.h"
#include "harness/printers/chart_printer.h"
#include "harness/printers/csv_printer.h"
#include "harness/printers/markdown_printer.h"
#include "harness/printers/printer_multiplex.h"
#include "harness/report/report_model.h"
#include "harness/results/results.h"

namespace fb::cli {
namespace {

constexpr const char* report_examples = R"(Examples:
  fusebench report reports/nvidia-h200/results.json --out /tmp/h200-report
      /tmp/h200-report/report.md (linking its charts), report.csv and charts/*.png
  fusebench report reports/baselines/nvidia-h200.json --out /tmp/r --format md
      Markdown only

The outputs are rendered into a temporary folder inside --out and moved into place only when all
of them succeeded: report.md and report.csv are replaced, charts/ is replaced as a whole (no chart
of an earlier render is left behind). A run marked incomplete gets a banner on report.md, an
"INCOMPLETE RUN" title on every chart and run_complete=false on every CSV row.
Exit status: 0 written, 2 bad usage, an invalid or unreadable results file, or a failed render
(gnuplot failing, or a --gnuplot that does not exist; nothing is replaced then), or RESULTS being
one of the outputs (report.md, report.csv, inside charts/). Without gnuplot (the default name not
on PATH) the chart scripts are written and a warning is printed.)";

bool wants(const report_options& o, std::string_view format) {
  return std::find(o.formats.begin(), o.formats.end(), format) != o.formats.end();
}

namespace fs = std::filesystem;

/// A fresh folder inside `out_dir` (same filesystem, so the final moves are renames), removed with
/// everything in it when the render fails or is done.
class staging_folder {
 public:
  explicit staging_folder(const fs::path& out_dir) {
    for (int attempt = 0;; ++attempt) {
      m_path = out_dir / fmt::format(".fusebench-report-{}-{}", ::getpid(), attempt);
      std::error_code ec;
      if (fs::create_directory(m_path, ec)) return;
      if (ec || attempt > 100) throw std::runtime_error(fmt::format("cannot create a folder in {}", out_dir));
    }
  }
  ~staging_folder() {
    fb::detail::remove_tree(m_path);  // best effort: a leftover hidden folder is harmless
  }
  staging_folder(const staging_folder&) = delete;
  staging_folder& operator=(const staging_folder&) = delete;
  [[nodiscard]] const fs::path& get_path() const { return m_path; }

 private:
  fs::path m_path;
};

/// Replaces `target` (a file or a folder) by `rendered`. A folder is swapped: the old one is moved
/// aside first and restored if the new one cannot take its place.
void move_into_place(const fs::path& rendered, const fs::path& target, const fs::path& aside) {
  std::error_code ec;
  const bool had_folder = fs::is_directory(target, ec);
  if (had_folder) {
    fs::rename(target, aside, ec);
    if (ec) throw std::runtime_error(fmt::format("cannot replace {}: {}", target, ec.message()));
  }
  fs::rename(rendered, target, ec);
  if (ec) {
    if (had_folder) fs::rename(aside, target, ec);
    throw std::runtime_error(fmt::format("cannot move the rendered {} into place: {}", target, ec.message()));
  }
}

/// Renders every requested output into `stage`; returns the names written there, in order.
std::vector<std::string> render(const report_options& options, report::report_model& model, const fs::path& stage) {
  std::vector<std::string> written;
  // Charts first: report.md links the ones that were drawn.
  if (wants(options, "charts")) {
    printers::chart_printer charts(stage / "charts", std::cerr, options.gnuplot);
    charts.print_report(model);  // throws when gnuplot fails: nothing is moved into place then
    for (report::chart_link link : charts.get_links()) {
      link.path = "charts/" + link.path;
      model.charts.push_back(std::move(link));
    }
    written.emplace_back("charts");
  }
  printers::printer_multiplex text;
  std::vector<std::pair<std::string, std::unique_ptr<std::ofstream>>> files;
  const auto add_file_printer = [&](const char* name, auto make) {
    auto out = std::make_unique<std::ofstream>(stage / name, std::ios::binary | std::ios::trunc);
    if (!*out) throw std::runtime_error(fmt::format("cannot write {}", stage / name));
    text.add_printer(make(*out));
    files.emplace_back(name, std::move(out));
  };
  if (wants(options, "md"))
    add_file_printer("report.md", [](std::ostream& out) { return std::make_unique<printers::markdown_printer>(out); });
  if (wants(options, "csv"))
    add_file_printer("report.csv", [](std::ostream& out) { return std::make_unique<printers::csv_printer>(out); });
  text.print_report(model);
  for (auto& [name, out] : files) {
    out->close();
    if (!*out) throw std::runtime_error(fmt::format("cannot write {}", stage / name));
    written.push_back(name);
  }
  return written;
}

/// What a render replaces in --out: report.md, report.csv and charts/ as a whole.
std::vector<path_role> replaced_outputs(const report_options& options) {
  std::vector<path_role> outputs;
  if (wants(options, "md")) outputs.push_back({"--out's report.md", options.out_dir / "report.md"});
  if (wants(options, "csv")) outputs.push_back({"--out's report.csv", options.out_dir / "report.csv"});
  if (wants(options, "charts")) outputs.push_back({"--out's charts/", options.out_dir / "charts", true});
  return outputs;
}

}  // namespace

int run_report(const report_options& options) {
  try {
    for (const std::string& f : options.formats)
      if (f != "md" && f != "csv" && f != "charts")
        throw std::runtime_error(fmt::format("unknown format '{}': expected md, csv or charts", f));
    refuse_clashing_paths({{"RESULTS", options.results}}, replaced_outputs(options));
    // A --gnuplot the user named must exist: without it the charts would be replaced by scripts alone.
    if (wants(options, "charts") && options.gnuplot != report_options{}.gnuplot &&
        !printers::find_program(options.gnuplot))
      throw std::runtime_error(fmt::format("--gnuplot {}: no such executable program; nothing was replaced",
                                           options.gnuplot));
    const results_file results = load_results(options.results);
    report::report_model model = report::build_report_model(results);

    std::error_code ec;
    std::filesystem::create_directories(options.out_dir, ec);
    if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", options.out_dir, ec.message()));

    const staging_folder stage(options.out_dir);
    const std::vector<std::string> written = render(options, model, stage.get_path());
    for (const std::string& name : written)
      move_into_place(stage.get_path() / name, options.out_dir / name, stage.get_path() / (name + ".old"));
    for (const std::string& name : written) {
      if (name == "charts")
        fmt::print("fusebench report: wrote {} charts in {}\n", model.charts.size(), (options.out_dir / name).string());
      else
        fmt::print("fusebench report: wrote {}\n", (options.out_dir / name).string());
    }
    if (const std::string note = model.get_incomplete_note(); !note.empty())
      fmt::print(stderr, "fusebench report: warning: {}\n", note);
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
