#include "harness/printers/markdown_printer.h"

#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "harness/printers/detail/format.h"

namespace fb::printers {
namespace {

using namespace report;
namespace d = detail;

/// A Markdown table built row by row; `align` holds "---" or "--:" per column.
class table {
 public:
  table(std::vector<std::string> header, std::vector<std::string> align)
      : m_header(std::move(header)), m_align(std::move(align)) {}
  void add_row(std::vector<std::string> cells) { m_rows.push_back(std::move(cells)); }
  void print(std::ostream& out) const {
    print_line(out, m_header);
    print_line(out, m_align);
    for (const auto& row : m_rows) print_line(out, row);
  }

 private:
  static void print_line(std::ostream& out, const std::vector<std::string>& cells) {
    fmt::print(out, "| {} |\n", fmt::join(cells, " | "));
  }
  std::vector<std::string> m_header;
  std::vector<std::string> m_align;
  std::vector<std::vector<std::string>> m_rows;
};

std::string median_cell(const std::optional<impl_cell>& cell) {
  if (!cell) return std::string(d::none);
  if (cell->outcome != outcome::passed) return std::string(to_string(cell->outcome));  // the note below says why
  return cell->stats ? d::format_time(cell->stats->median) : std::string(d::none);
}

std::string range_cell(const std::optional<impl_cell>& cell) {
  if (!cell || !cell->is_timed()) return median_cell(cell);
  const timing_stats& s = *cell->stats;
  return d::format_time_range(s.median, s.p10, s.p90);
}

/// The fused time is shown only when the case passed: the time of a wrong answer means nothing.
std::string fused_time_cell(const fused_entry& e, bool with_range) {
  if ((e.status != fused_status::ok && e.status != fused_status::impossible) || !e.cell.stats)
    return std::string(d::none);
  const timing_stats& s = *e.cell.stats;
  return with_range ? d::format_time_range(s.median, s.p10, s.p90) : d::format_time(s.median);
}

std::string speedup_cell(const std::optional<stats::ratio_estimate>& ratio) {
  return ratio ? d::format_ratio(*ratio) : std::string(d::none);
}

std::string floor_cell(const fused_entry& e) {
  if ((e.status != fused_status::ok && e.status != fused_status::impossible) || !e.cell.floor)
    return std::string(d::none);
  return d::format_percent(e.cell.floor->percent_of_floor);
}

std::string status_cell(const fused_entry& e) {
  switch (e.status) {
    case fused_status::fail:
    case fused_status::skipped: return fmt::format("{} ({})", to_string(e.status), to_string(e.cell.outcome));
    case fused_status::impossible: return "IMPOSSIBLE (below floor)";
    default: return std::string(to_string(e.status));
  }
}

void print_summary(std::ostream& out, const report_model& report) {
  fmt::print(out, "## Summary (config `{}`)\n\n", default_config_label);
  table t({"model", "KernelBench", "implementation", "ref", "ref_tf32", "fused", "vs ref", "vs ref_tf32",
           "% of floor", "status"},
          {"---", "--:", "---", "--:", "--:", "--:", "--:", "--:", "--:", "---"});
  for (const model_report& m : report.models) {
    const sweep_row* row = m.get_default_row();
    const std::string kb = std::to_string(m.kernelbench_id);
    if (row == nullptr) {
      t.add_row({m.model, kb, std::string(d::none), std::string(d::none), std::string(d::none), std::string(d::none),
                 std::string(d::none), std::string(d::none), std::string(d::none), "no default config"});
      continue;
    }
    if (row->fused.empty()) {
      t.add_row({m.model, kb, std::string(d::none), median_cell(row->ref), median_cell(row->ref_tf32),
                 std::string(d::none), std::string(d::none), std::string(d::none), std::string(d::none),
                 "reference only"});
      continue;
    }
    for (const fused_entry& e : row->fused)
      t.add_row({m.model, kb, e.cell.implementation, median_cell(row->ref), median_cell(row->ref_tf32),
                 fused_time_cell(e, false), speedup_cell(e.vs_ref), speedup_cell(e.vs_ref_tf32), floor_cell(e),
                 status_cell(e)});
  }
  for (const geomean_entry& g : report.geomeans) {
    const auto counted = [](std::optional<double> ratio, int models) {
      return ratio ? fmt::format("**{}** ({} models)", d::format_ratio(ratio), models) : std::string(d::none);
    };
    t.add_row({"**geometric mean**", "", g.implementation, "", "", "", counted(g.vs_ref, g.models_vs_ref),
               counted(g.vs_ref_tf32, g.models_vs_ref_tf32), "", ""});
  }
  t.print(out);
  out << "\n";
}

void print_model(std::ostream& out, const model_report& m) {
  fmt::print(out, "## {} (KernelBench #{})\n\n", m.model, m.kernelbench_id);
  std::vector<std::string> header{"config", "size", "ref", "ref_tf32"};
  std::vector<std::string> align{"---", "--:", "--:", "--:"};
  for (const std::string& impl : m.fused_implementations) {
    // With one fused implementation the short headers are unambiguous; with several, name them.
    const std::string prefix = m.fused_implementations.size() > 1 ? impl + " " : std::string();
    header.insert(header.end(), {impl, prefix + "vs ref", prefix + "vs ref_tf32", prefix + "% of floor", prefix + "status"});
    align.insert(align.end(), {"--:", "--:", "--:", "--:", "---"});
  }
  if (m.fused_implementations.empty()) {
    header.emplace_back("status");
    align.emplace_back("---");
  }
  table t(std::move(header), std::move(align));
  std::vector<std::string> notes;
  for (const sweep_row& row : m.rows) {
    std::vector<std::string> cells{d::markdown_cell(row.config_label), d::format_count(row.problem_size),
                                   range_cell(row.ref), range_cell(row.ref_tf32)};
    for (const fused_entry& e : row.fused)
      cells.insert(cells.end(), {fused_time_cell(e, true), speedup_cell(e.vs_ref), speedup_cell(e.vs_ref_tf32),
                                 floor_cell(e), status_cell(e)});
    if (row.fused.empty()) cells.emplace_back("reference only");
    t.add_row(std::move(cells));
    for (const impl_cell& cell : row.all)
      if (cell.outcome != outcome::passed)
        notes.push_back(fmt::format("- `{}` {}: {}: {}", row.config_label, cell.implementation, to_string(cell.outcome),
                                    cell.message.empty() ? std::string("(no message)") : cell.message));
  }
  t.print(out);
  if (!notes.empty()) fmt::print(out, "\nNot passed:\n\n{}\n", fmt::join(notes, "\n"));
  out << "\n";
}

void print_environment(std::ostream& out, const run_environment& env) {
  out << "## Environment\n\n";
  table t({"field", "value"}, {"---", "---"});
  const auto text = [](const std::string& s) { return s.empty() ? std::string(d::none) : d::markdown_cell(s); };
  t.add_row({"device", text(env.device)});
  t.add_row({"GPU", text(env.gpu_name)});
  t.add_row({"SMs", env.sm_count > 0 ? std::to_string(env.sm_count) : std::string(d::none)});
  t.add_row({"L2", d::format_bytes(static_cast<double>(env.l2_bytes))});
  t.add_row({"driver", text(env.driver)});
  t.add_row({"CUDA runtime", text(env.cuda_runtime)});
  t.add_row({"libtorch", text(env.libtorch)});
  t.add_row({"git commit", text(env.git_commit)});
  t.add_row({"build type", text(env.build_type)});
  t.add_row({"date", text(env.date)});
  t.add_row({"host", text(env.hostname)});
  t.add_row({"measured bandwidth (max of copy and read)", d::format_rate(env.measured_bandwidth, "B/s")});
  t.add_row({"measured FP32 peak (FMA)", d::format_rate(env.measured_fp32_peak, "FLOP/s")});
  t.add_row({"sweep", text(env.sweep)});
  t.add_row({"seed", std::to_string(env.seed)});
  t.print(out);
}

}  // namespace

void markdown_printer::do_print_report(const report_model& report) {
  const run_environment& env = report.environment;
  fmt::print(m_out, "# fusebench report\n\n");
  fmt::print(m_out, "{} on {}, {}, commit {}.\n\n", env.device.empty() ? std::string("?") : env.device,
             env.gpu_name.empty() ? std::string("host CPU") : env.gpu_name, env.date,
             env.git_commit.empty() ? std::string("unknown") : env.git_commit);
  m_out << "Times are medians, with p10–p90 in parentheses in the per-model tables. A speedup is "
           "median(reference) / median(fused) with its 95% bootstrap interval in brackets; `ref` is libtorch "
           "fp32 with TF32 off, `ref_tf32` is libtorch with TF32 allowed. % of floor is the roofline floor "
           "divided by the median (100% = at the floor). FAIL and SKIP cases never show a speedup.\n\n";
  print_summary(m_out, report);
  for (const model_report& m : report.models) print_model(m_out, m);
  print_environment(m_out, env);
}

}  // namespace fb::printers
