/// history.md and history.csv.
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/history/history_writers.h"
#include "harness/format/number_format.h"

namespace fb::history {
namespace {

using format::csv_field;
using format::format_ratio;
using format::format_time;
using format::format_time_range;
using format::markdown_cell;

std::string number(double x) { return std::isfinite(x) ? fmt::format("{}", x) : std::string(); }

std::string optional_ratio(double x) {
  return format_ratio(std::isfinite(x) ? std::optional<double>(x) : std::nullopt);
}

/// The step of `s` whose new level starts at run `run`, if any.
const series_step* step_at(const run_series& s, std::size_t run) {
  for (const series_step& step : s.steps)
    if (step.first_run_after == run) return &step;
  return nullptr;
}

}  // namespace

std::string describe_step(const history& h, const run_series& s, const series_step& step) {
  return fmt::format("{} {} {}: {}..{} {} -> {} ({:.3g}x, p {:.2g}; runs per level {} -> {})", s.device, s.model, s.get_name(),
                     h.runs[step.last_run_before].get_short_commit(), h.runs[step.first_run_after].get_short_commit(),
                     format_time(step.before_median), format_time(step.after_median), step.ratio, step.p_value,
                     step.level_before_runs, step.level_after_runs);
}

std::string render_history_markdown(const history& h) {
  std::ostringstream out;
  out << "# Performance history\n\n";
  out << fmt::format(
      "{} runs, {} series, {} charts. {} Steps: binary segmentation of each series' run medians (log), a step "
      "kept where the pooled median of the runs before and after moves by more than {:g}% and a Mann-Whitney U "
      "test of their samples gives p < {:g}{}.\n\n",
      h.runs.size(), h.series.size(), h.charts.size(), h.ordering, h.settings.steps.min_effect * 100.0,
      h.settings.steps.alpha,
      h.settings.clean_runs_only ? "; dirty trees, incomplete runs and failing cases are shown but not used"
                                 : "; failing cases are shown but not used, dirty trees and incomplete runs are used and marked");

  out << "## Steps\n\n";
  std::size_t steps = 0;
  for (const run_series& s : h.series) steps += s.steps.size();
  if (steps == 0) {
    out << "No steps found.\n\n";
  } else {
    out << "| GPU | model | series | commits | before | after | ratio | p-value | runs before / after |\n";
    out << "| --- | --- | --- | --- | --: | --: | --: | --: | --: |\n";
    for (const chart& c : h.charts)
      for (std::size_t i : c.series)
        for (const series_step& step : h.series[i].steps)
          out << fmt::format("| {} | {} | {} | {}..{} | {} | {} | {:.3g}× | {:.2g} | {} / {} |\n", markdown_cell(c.device),
                             c.model, markdown_cell(h.series[i].get_name()),
                             h.runs[step.last_run_before].get_short_commit(),
                             h.runs[step.first_run_after].get_short_commit(), format_time(step.before_median),
                             format_time(step.after_median), step.ratio, step.p_value, step.level_before_runs,
                             step.level_after_runs);
    out << "\n";
  }

  out << "## Runs\n\n| # | GPU | commit | date | sweep | host | status | sources | files |\n"
         "| --: | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (std::size_t i = 0; i < h.runs.size(); ++i) {
    const run_record& r = h.runs[i];
    const std::string caveat = r.get_caveat();
    out << fmt::format("| {} | {} | {}{} | {} | {} | {} | {} | {} | {} |\n", i + 1, markdown_cell(r.device),
                       r.get_short_commit(), r.commit_in_repository ? "" : " (not in the repository)", r.date,
                       markdown_cell(r.sweep), markdown_cell(r.hostname),
                       caveat.empty() ? "complete" : markdown_cell(caveat), markdown_cell(r.source_check),
                       markdown_cell(fmt::format("{}", fmt::join(r.sources, ", "))));
  }
  out << "\n";

  for (const chart& c : h.charts) {
    out << fmt::format("## {} · {} (KernelBench #{})\n\n", c.device, c.model, c.kernelbench_id);
    out << "| series | run | commit | median (p10–p90) | speedup vs strict ref | floor | note |\n";
    out << "| --- | --: | --- | --: | --: | --: | --- |\n";
    for (std::size_t i : c.series) {
      const run_series& s = h.series[i];
      for (const series_point& p : s.points) {
        const run_record& r = h.runs[p.run];
        std::vector<std::string> notes;
        if (const series_step* step = step_at(s, p.run))
          notes.push_back(fmt::format("step {:.3g}× (p {:.2g})", step->ratio, step->p_value));
        if (!p.excluded_because.empty()) notes.push_back("not used for steps: " + p.excluded_because);
        else if (const std::string caveat = r.get_caveat(); !caveat.empty()) notes.push_back(caveat);
        out << fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", markdown_cell(s.get_name()), p.run + 1,
                           r.get_short_commit(), format_time_range(p.median, p.p10, p.p90), optional_ratio(p.speedup),
                           std::isfinite(p.floor_seconds) ? format_time(p.floor_seconds) : std::string("—"),
                           markdown_cell(fmt::format("{}", fmt::join(notes, "; "))));
      }
    }
    out << "\n";
  }
  if (!h.skipped_files.empty())
    out << fmt::format("Not results files (skipped): {}\n", markdown_cell(fmt::format("{}", fmt::join(h.skipped_files, ", "))));
  return out.str();
}

std::string render_history_csv(const history& h) {
  std::ostringstream out;
  out << "gpu,model,kernelbench_id,implementation,config_label,config_variant,config,run,commit,dirty,"
         "commit_in_repository,date,run_complete,outcome,median_s,p10_s,p90_s,n,floor_s,speedup_vs_ref,"
         "used_for_steps,excluded_because,step_from_commit,step_before_median_s,step_after_median_s,step_ratio,"
         "step_p_value\n";
  for (const chart& c : h.charts)
    for (std::size_t i : c.series) {
      const run_series& s = h.series[i];
      for (const series_point& p : s.points) {
        const run_record& r = h.runs[p.run];
        const series_step* step = step_at(s, p.run);
        std::vector<std::string> row{
            csv_field(s.device), csv_field(s.model), std::to_string(s.kernelbench_id), csv_field(s.implementation),
            csv_field(s.config_label), std::to_string(s.config_variant), csv_field(s.config), std::to_string(p.run + 1),
            csv_field(r.commit), r.dirty ? "true" : "false", r.commit_in_repository ? "true" : "false",
            csv_field(r.date), r.complete ? "true" : "false", std::string(to_string(p.outcome)), number(p.median),
            number(p.p10), number(p.p90), std::to_string(p.n), number(p.floor_seconds), number(p.speedup),
            p.excluded_because.empty() ? "true" : "false", csv_field(p.excluded_because),
            step != nullptr ? csv_field(h.runs[step->last_run_before].commit) : std::string(),
            step != nullptr ? number(step->before_median) : std::string(),
            step != nullptr ? number(step->after_median) : std::string(),
            step != nullptr ? number(step->ratio) : std::string(),
            step != nullptr ? number(step->p_value) : std::string()};
        out << fmt::format("{}\n", fmt::join(row, ","));
      }
    }
  return out.str();
}

}  // namespace fb::history
