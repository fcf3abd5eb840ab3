#include "harness/printers/markdown_printer.h"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include "harness/format/number_format.h"

namespace fb::printers {
namespace {

using namespace report;
namespace d = fb::format;

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

/// time / floor: 1.00× is at the roofline floor, 2× twice its time; below 1× is impossible.
std::string floor_cell(const fused_entry& e) {
  if ((e.status != fused_status::ok && e.status != fused_status::impossible) || !e.cell.floor || !e.cell.stats)
    return std::string(d::none);
  return d::format_ratio(d::time_over_floor(e.cell.stats->median, e.cell.floor->floor_seconds));
}

/// max |err| / (atol + rtol*|ref|) of the verification: <= 1 passes.
std::string tolerance_cell(const fused_entry& e) {
  if (e.status == fused_status::missing) return std::string(d::none);
  return d::format_tolerance_ratio(e.cell.tolerance_ratio);
}

std::string status_cell(const fused_entry& e) {
  switch (e.status) {
    case fused_status::fail:
    case fused_status::skipped: return fmt::format("{} ({})", to_string(e.status), to_string(e.cell.outcome));
    case fused_status::impossible: return "IMPOSSIBLE (below floor)";
    default: return std::string(to_string(e.status));
  }
}

/// True when any model of the run has peer rows: only then do the peer columns appear.
bool has_peers(const report_model& report) {
  return std::any_of(report.models.begin(), report.models.end(),
                     [](const model_report& m) { return !m.peer_implementations.empty(); });
}

/// "6.90× [6.8–7.0] (max_autotune 21.39 ms)": fused against a peer, named with its time (and, when its
/// values missed the tolerance, the share within).
std::string peer_speedup_cell(const std::optional<stats::ratio_estimate>& ratio, const std::optional<impl_cell>& peer) {
  if (!ratio || !peer || !peer->stats) return std::string(d::none);
  std::string name = peer->implementation.substr(peer_implementation_prefix.size());
  std::string cell = fmt::format("{} ({} {}", d::format_ratio(*ratio), name, d::format_time(peer->stats->median));
  if (peer->outcome != outcome::passed && peer->peer && std::isfinite(peer->peer->share_within_tolerance))
    cell += fmt::format(", {:.3g}% within tol", 100.0 * peer->peer->share_within_tolerance);
  return cell + ")";
}

/// A peer's share of elements within tolerance: "100%", "20.2%"; "-" when not judged.
std::string share_cell(const impl_cell& c) {
  if (!c.peer || !std::isfinite(c.peer->share_within_tolerance)) return std::string(d::none);
  return fmt::format("{:.4g}%", 100.0 * c.peer->share_within_tolerance);
}

/// The label the summary's rows come from: "default", or "default/cpu-small" in a scaled CPU run.
std::string default_labels(const report_model& report) {
  std::vector<std::string> labels;
  for (const model_report& m : report.models)
    if (const sweep_row* row = m.get_default_row();
        row != nullptr && std::find(labels.begin(), labels.end(), row->config_label) == labels.end())
      labels.push_back(row->config_label);
  if (labels.empty()) labels.emplace_back(default_config_label);
  return fmt::format("`{}`", fmt::join(labels, "`, `"));
}

void print_summary(std::ostream& out, const report_model& report) {
  fmt::print(out, "## Summary (config {})\n\n", default_labels(report));
  const bool peers = has_peers(report);
  std::vector<std::string> header{"model", "KernelBench", "implementation", "ref", "ref_tf32", "fused", "vs ref",
                                  "vs ref_tf32", "time / floor", "status"};
  std::vector<std::string> align{"---", "--:", "---", "--:", "--:", "--:", "--:", "--:", "--:", "---"};
  if (peers) {
    header.insert(header.end() - 1, {"vs fastest peer within tol", "vs fastest peer"});
    align.insert(align.end() - 1, {"--:", "--:"});
  }
  // The peer cells go before the status: empty ones where a row has no fused time.
  const auto with_peers = [&](std::vector<std::string> cells, const std::vector<std::string>& peer_cells) {
    if (peers) cells.insert(cells.end() - 1, peer_cells.begin(), peer_cells.end());
    return cells;
  };
  const std::vector<std::string> no_peer_cells{std::string(d::none), std::string(d::none)};
  table t(header, align);
  for (const model_report& m : report.models) {
    const sweep_row* row = m.get_default_row();
    const std::string kb = std::to_string(m.kernelbench_id);
    if (row == nullptr) {
      t.add_row(with_peers({m.model, kb, std::string(d::none), std::string(d::none), std::string(d::none),
                            std::string(d::none), std::string(d::none), std::string(d::none), std::string(d::none),
                            "no default config"},
                           no_peer_cells));
      continue;
    }
    if (row->fused.empty()) {
      t.add_row(with_peers({m.model, kb, std::string(d::none), median_cell(row->ref), median_cell(row->ref_tf32),
                            std::string(d::none), std::string(d::none), std::string(d::none), std::string(d::none),
                            "reference only"},
                           no_peer_cells));
      continue;
    }
    for (const fused_entry& e : row->fused)
      t.add_row(with_peers({m.model, kb, e.cell.implementation, median_cell(row->ref), median_cell(row->ref_tf32),
                            fused_time_cell(e, false), speedup_cell(e.vs_ref), speedup_cell(e.vs_ref_tf32),
                            floor_cell(e), status_cell(e)},
                           {peer_speedup_cell(e.vs_fastest_passing_peer, row->fastest_passing_peer),
                            peer_speedup_cell(e.vs_fastest_peer, row->fastest_peer)}));
  }
  for (const geomean_entry& g : report.geomeans) {
    const auto counted = [](std::optional<double> ratio, int models) {
      return ratio ? fmt::format("**{}** ({} models)", d::format_ratio(ratio), models) : std::string(d::none);
    };
    t.add_row(with_peers({"**geometric mean**", "", g.implementation, "", "", "", counted(g.vs_ref, g.models_vs_ref),
                          counted(g.vs_ref_tf32, g.models_vs_ref_tf32), "", ""},
                         {"", ""}));
  }
  t.print(out);
  out << "\n";
}

/// Which verdict rule decided the fused cases' verification, so a reader sees how many passed against
/// the fp32 reference and how many needed the fp64 allowance.
void print_rules(std::ostream& out, const report_model& report) {
  int fused_cases = 0;
  for (const rule_count& r : report.rules) fused_cases += r.cases;
  if (fused_cases == 0) return;
  out << "## Verification rules\n\n";
  table t({"decided by", "fused cases"}, {"---", "--:"});
  for (const rule_count& r : report.rules) {
    if (r.cases == 0) continue;
    t.add_row({r.rule ? fmt::format("`{}`", to_string(*r.rule)) : std::string("not recorded (results file version 1)"),
               std::to_string(r.cases)});
  }
  t.print(out);
  out << "\n`fp32_reference`: judged against the fp32 reference; `fp64_allowance`: judged against fp64 with the "
         "reference's own error as allowance (the fp32 reference misses fp64, or the candidate misses the fp32 window); `none`: values never judged "
         "(the case threw, was skipped or its config is invalid).\n\n";
}

/// Markdown image links to the charts drawn beside the report (`model` empty: the run-wide ones).
void print_charts(std::ostream& out, const report_model& report, const std::string& model) {
  bool any = false;
  for (const chart_link& c : report.charts)
    if (c.model == model) {
      fmt::print(out, "![{}]({})\n", d::markdown_cell(c.title), c.path);
      any = true;
    }
  if (any) out << "\n";
}

void print_model(std::ostream& out, const report_model& report, const model_report& m) {
  fmt::print(out, "## {} (KernelBench #{})\n\n", m.model, m.kernelbench_id);
  std::vector<std::string> header{"config", "size", "ref", "ref_tf32"};
  std::vector<std::string> align{"---", "--:", "--:", "--:"};
  for (const std::string& impl : m.fused_implementations) {
    // With one fused implementation the short headers are unambiguous; with several, name them.
    const std::string prefix = m.fused_implementations.size() > 1 ? impl + " " : std::string();
    header.insert(header.end(), {impl, prefix + "vs ref", prefix + "vs ref_tf32", prefix + "time / floor",
                                 prefix + "max err / tol", prefix + "status"});
    align.insert(align.end(), {"--:", "--:", "--:", "--:", "--:", "---"});
    if (!m.peer_implementations.empty()) {  // per config, as the summary gives them for the default
      header.insert(header.end() - 1, {prefix + "vs fastest peer within tol", prefix + "vs fastest peer"});
      align.insert(align.end() - 1, {"--:", "--:"});
    }
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
    for (const fused_entry& e : row.fused) {
      cells.insert(cells.end(), {fused_time_cell(e, true), speedup_cell(e.vs_ref), speedup_cell(e.vs_ref_tf32),
                                 floor_cell(e), tolerance_cell(e), status_cell(e)});
      if (!m.peer_implementations.empty())
        cells.insert(cells.end() - 1, {peer_speedup_cell(e.vs_fastest_passing_peer, row.fastest_passing_peer),
                                       peer_speedup_cell(e.vs_fastest_peer, row.fastest_peer)});
    }
    if (row.fused.empty()) cells.emplace_back("reference only");
    t.add_row(std::move(cells));
    for (const impl_cell& cell : row.all)
      if (cell.outcome != outcome::passed)
        notes.push_back(fmt::format("- `{}` {}: {}: {}", row.config_label, cell.implementation, to_string(cell.outcome),
                                    cell.message.empty() ? std::string("(no message)") : cell.message));
  }
  t.print(out);
  if (!m.peer_implementations.empty()) {
    // What a PyTorch user would run instead, judged by the same rules: information, never a failure.
    out << "\nPeers (PyTorch as a user would run it; judged by the same verdict rules; information):\n\n";
    table p({"config", "peer", "median (p10–p90)", "within tol", "max err / tol", "first call", "torch", "status"},
            {"---", "---", "--:", "--:", "--:", "--:", "---", "---"});
    for (const sweep_row& row : m.rows)
      for (const impl_cell& c : row.peers) {
        const timing_stats* s = c.stats ? &*c.stats : nullptr;
        p.add_row({d::markdown_cell(row.config_label), c.implementation,
                   s ? d::format_time_range(s->median, s->p10, s->p90) : std::string(d::none), share_cell(c),
                   d::format_tolerance_ratio(c.tolerance_ratio),
                   c.peer && c.peer->compile_seconds ? fmt::format("{:.1f} s", *c.peer->compile_seconds)
                                                     : std::string(d::none),
                   c.peer && !c.peer->torch_version.empty() ? d::markdown_cell(c.peer->torch_version)
                                                            : std::string(d::none),
                   c.outcome == outcome::passed     ? std::string("within tolerance")
                   : c.outcome == outcome::incorrect ? std::string("OUTSIDE tolerance")
                                                     : std::string(to_string(c.outcome))});
      }
    p.print(out);
  }
  if (!notes.empty()) fmt::print(out, "\nNot passed:\n\n{}\n", fmt::join(notes, "\n"));
  out << "\n";
  print_charts(out, report, m.model);
}

void print_environment(std::ostream& out, const run_environment& env) {
  out << "## Environment\n\n";
  table t({"field", "value"}, {"---", "---"});
  const auto text = [](const std::string& s) { return s.empty() ? std::string(d::none) : d::markdown_cell(s); };
  t.add_row({"device", text(env.device)});
  t.add_row({"GPU", text(env.gpu_name)});
  if (!env.cpu_name.empty()) t.add_row({"CPU", text(env.cpu_name)});  // files before cpu_name have none
  t.add_row({"SMs", env.sm_count > 0 ? std::to_string(env.sm_count) : std::string(d::none)});
  t.add_row({"L2", d::format_bytes(static_cast<double>(env.l2_bytes))});
  t.add_row({"driver", text(env.driver)});
  t.add_row({"CUDA runtime", text(env.cuda_runtime)});
  t.add_row({"libtorch", text(env.libtorch)});
  t.add_row({"git commit", text(env.git_commit)});
  t.add_row({"source digest (SHA-256)", text(env.source_digest)});
  t.add_row({"build type", text(env.build_type)});
  t.add_row({"date", text(env.date)});
  t.add_row({"host", text(env.hostname)});
  t.add_row({"measured bandwidth (max of copy and read)", d::format_rate(env.measured_bandwidth, "B/s")});
  t.add_row({"measured FP32 peak (FMA)", d::format_rate(env.measured_fp32_peak, "FLOP/s")});
  t.add_row({"measured fp64 MMA peak (tensor cores; CPU: fp64 FMA)", d::format_rate(env.measured_fp64_mma_peak, "FLOP/s")});
  t.add_row({"sweep", text(env.sweep)});
  t.add_row({"seed", std::to_string(env.seed)});
  t.add_row({"tolerances (atol, rtol)", std::isfinite(env.atol) && std::isfinite(env.rtol)
                                            ? fmt::format("{:g}, {:g}", env.atol, env.rtol)
                                            : std::string(d::none)});
  t.print(out);
}

}  // namespace

void markdown_printer::do_print_report(const report_model& report) {
  const run_environment& env = report.environment;
  fmt::print(m_out, "# fusebench report\n\n");
  // First thing on the page: numbers of an interrupted run must not pass for a whole run's.
  if (const std::string note = report.get_incomplete_note(); !note.empty())
    fmt::print(m_out,
               "> **{}.** This report shows only the cases that finished; configs and implementations that "
               "are absent were never measured. Do not use it as a baseline.\n\n",
               d::markdown_cell(note));
  fmt::print(m_out, "{} on {}, {}, commit {}.\n\n", env.device.empty() ? std::string("?") : env.device,
             !env.gpu_name.empty() ? env.gpu_name : !env.cpu_name.empty() ? env.cpu_name : std::string("host CPU"), env.date,
             env.git_commit.empty() ? std::string("unknown") : env.git_commit);
  m_out << "Times are medians, with p10–p90 in parentheses in the per-model tables. A speedup is "
           "median(reference) / median(fused) with its 95% bootstrap interval in brackets; `ref` is libtorch "
           "fp32 with TF32 off, `ref_tf32` is libtorch with TF32 allowed. time / floor is the median divided by "
           "the roofline floor (1.00× = at the floor, 2× = twice the floor's time; below 1× is IMPOSSIBLE). "
           "max err / tol is the verification's largest |fused − ref| / (atol + rtol·|ref|): at most 1 passes, "
           "0.1 uses a tenth of the tolerance. FAIL and SKIP cases never show a speedup.\n\n";
  if (has_peers(report))
    m_out << "Peers (`peer:*`) are PyTorch run the ways a user would instead of our kernels (eager with "
             "cudnn.benchmark, torch.compile, max-autotune-no-cudagraphs; strict fp32 and TF32), timed by "
             "peers/torch_peers.py with the bench's protocol and judged here by the same verdict rules. \"vs fastest "
             "peer within tol\" is median(that peer) / median(fused) over the peers whose every output element is "
             "within tolerance; \"vs fastest peer\" takes any timed peer, its share within tolerance shown when it "
             "misses. A peer that could not run is listed with its reason.\n\n";
  print_summary(m_out, report);
  print_charts(m_out, report, "");
  print_rules(m_out, report);
  for (const model_report& m : report.models) print_model(m_out, report, m);
  print_environment(m_out, env);
}

}  // namespace fb::printers
