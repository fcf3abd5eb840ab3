/// `fusebench history PATH... --out DIR`.
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/std.h>

#include "harness/cli/history_command.h"
#include "harness/history/history_model.h"
#include "harness/history/history_writers.h"
#include "harness/results/detail/atomic_file.h"

namespace fb::cli {
namespace {

constexpr const char* history_examples = R"(Examples:
  fusebench history reports --out /tmp/history
      every results file under reports/ (results.json, gate/*/bench-results.json, baselines; other
      JSON files are skipped), one chart per GPU and model: /tmp/history/index.html, history.md, history.csv
  fusebench history reports --gpu nvidia-h100-80gb-hbm3 --out reports/nvidia-h100-80gb-hbm3/history
      the H100's runs only (how the repository's own history pages are made)
  fusebench history base.json run2/results.json run3/results.json --min-effect 0.10 --alpha 0.001 --out h
      only steps above 10% at p < 0.001

Runs are ordered by commit when the git repository holding the first PATH (or --repo) has the
commits, else by run date. A file's recorded commit is checked against its source digest: a run is
placed at the commit whose tree has its digest (a mismatch with the recorded commit is shown as such),
at its recorded commit as a dirty run when no commit has it, and as recorded when the file has no
digest (older files). Identical copies of a run (a baseline, a gate folder) count once. A step
is a change point of a series (GPU, model, implementation, config) found by binary segmentation of
the runs' log medians and kept when the pooled median of the runs before and after moves by more
than --min-effect and a Mann-Whitney U test of their samples gives p < --alpha. Runs of dirty
trees and incomplete runs are drawn hollow and marked in every table; --clean-runs-only leaves them
out of step detection. Cases that did not pass are drawn as squares and never used. The three files
are each replaced atomically.
Exit status: 0 written; 2 bad usage, a missing path, a file that is not valid JSON, an invalid
results file, two files holding the same run with different contents, or a shard (merge first).)";

}  // namespace

int run_history(const history_options& options) {
  try {
    history::history_settings settings;
    settings.steps.min_effect = options.min_effect;
    settings.steps.alpha = options.alpha;
    settings.clean_runs_only = options.clean_runs_only;
    settings.gpus = options.gpus;
    if (options.paths.empty()) throw history::history_error("no PATH given: name results files or folders");
    std::vector<std::string> skipped;
    std::vector<history::loaded_results> files = history::load_results_files(options.paths, skipped);
    const std::filesystem::path repository =
        options.no_git ? std::filesystem::path()
                       : !options.repository.empty() ? options.repository : history::find_repository(options.paths.front());
    const history::commit_order commits = history::read_commit_order(repository);
    if (!options.no_git && !options.repository.empty() && commits.empty())
      throw history::history_error(fmt::format("--repo {}: not a git repository with commits", options.repository.string()));
    // The repository checks each file's commit against its source digest (none under --no-git).
    std::optional<source_repository> sources;
    if (!commits.empty()) sources.emplace(repository);
    history::check_sources(files, sources ? &*sources : nullptr);
    history::history h = history::build_history(std::move(files), commits, settings);
    h.skipped_files = std::move(skipped);

    std::error_code ec;
    std::filesystem::create_directories(options.out_dir, ec);
    if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", options.out_dir, ec.message()));
    const std::string html = history::render_history_html(h);
    const std::string markdown = history::render_history_markdown(h);
    const std::string csv = history::render_history_csv(h);
    fb::detail::write_file_atomically(options.out_dir / "history.csv", csv);
    fb::detail::write_file_atomically(options.out_dir / "history.md", markdown);
    fb::detail::write_file_atomically(options.out_dir / "index.html", html);

    std::size_t steps = 0;
    for (const history::run_series& s : h.series)
      for (const history::series_step& step : s.steps) {
        fmt::print("step: {}\n", history::describe_step(h, s, step));
        ++steps;
      }
    fmt::print("fusebench history: {} runs, {} series, {} charts, {} steps; {}\n", h.runs.size(), h.series.size(),
               h.charts.size(), steps, h.ordering);
    if (!h.skipped_files.empty())
      fmt::print("fusebench history: skipped {} JSON files that are not results files\n", h.skipped_files.size());
    fmt::print("fusebench history: wrote {}, history.md and history.csv\n", (options.out_dir / "index.html").string());
    return exit_ok;
  } catch (const std::exception& e) {
    fmt::print(stderr, "fusebench: error: {}\n", e.what());
    return exit_usage;
  }
}

void add_history_command(CLI::App& app, command_action& run) {
  auto options = std::make_shared<history_options>();
  CLI::App* sub = app.add_subcommand("history", "Trend charts and detected steps over many results files (static HTML, Markdown, CSV)");
  sub->add_option("paths", options->paths, "Results files, or folders searched recursively for them")->required();
  sub->add_option("--out", options->out_dir, "Output folder for index.html, history.md, history.csv (created if needed)")
      ->required()
      ->check(non_empty("a folder"));
  sub->add_option("--min-effect", options->min_effect, "Smallest change of a series' level that is a step [fraction]")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--alpha", options->alpha, "Mann-Whitney p-value below which a step is real")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  sub->add_flag("--clean-runs-only", options->clean_runs_only,
                "Find steps among runs of clean trees that completed only (the others are drawn either way)");
  sub->add_option("--gpu", options->gpus, "Keep only runs of this GPU (name or slug, e.g. nvidia-h200); repeatable");
  sub->add_option("--repo", options->repository, "Git repository whose history orders the runs' commits");
  sub->add_flag("--no-git", options->no_git, "Order the runs by run date, without asking git");
  sub->footer(history_examples);
  sub->callback([options, &run]() { run = [options]() { return run_history(*options); }; });
}

}  // namespace fb::cli
