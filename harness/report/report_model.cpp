#include "harness/report/report_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace fb::report {
namespace {

impl_cell make_cell(const case_result& c) {
  return impl_cell{c.implementation, c.outcome,      c.message, c.max_abs_error, c.max_rel_error,
                   c.tolerance_ratio, c.decided_by, c.stats,   c.floor,         c.peer};
}

fused_status status_of(const impl_cell& cell) {
  switch (cell.outcome) {
    case outcome::passed: break;
    case outcome::incorrect:
    case outcome::failed: return fused_status::fail;
    case outcome::not_run:
    case outcome::not_supported:
    case outcome::declined:
    case outcome::invalid_config: return fused_status::skipped;
  }
  if (!cell.stats) return fused_status::untimed;
  if (cell.floor && cell.floor->impossible) return fused_status::impossible;
  return fused_status::ok;
}

/// median(reference) / median(fused), with an interval when both kept their samples.
std::optional<stats::ratio_estimate> speedup(const std::optional<impl_cell>& reference, const impl_cell& fused) {
  if (!reference || !reference->is_timed() || !fused.stats) return std::nullopt;
  const timing_stats& r = *reference->stats;
  const timing_stats& f = *fused.stats;
  if (!r.samples.empty() && !f.samples.empty()) return stats::ratio_interval(r.samples, f.samples);
  const double ratio = r.median / f.median;
  return stats::ratio_estimate{ratio, std::nan(""), std::nan("")};  // NaN ends: no interval known
}

/// median(peer) / median(fused) for a peer that was timed, whether its values passed or not.
std::optional<stats::ratio_estimate> speedup_over_peer(const std::optional<impl_cell>& peer, const impl_cell& fused) {
  if (!peer || !peer->stats || !fused.stats) return std::nullopt;
  const timing_stats& r = *peer->stats;
  const timing_stats& f = *fused.stats;
  if (!r.samples.empty() && !f.samples.empty()) return stats::ratio_interval(r.samples, f.samples);
  return stats::ratio_estimate{r.median / f.median, std::nan(""), std::nan("")};
}

/// A peer's time counts when its values were judged (passed or incorrect) and it was timed; a peer that
/// failed or was skipped has no time to compare.
bool peer_timed(const impl_cell& cell) {
  return cell.stats.has_value() && (cell.outcome == outcome::passed || cell.outcome == outcome::incorrect);
}

/// Canonical order within a row: ref, ref_tf32, the peers, then fused names alphabetically.
int role_rank(std::string_view implementation) {
  if (implementation == ref_impl) return 0;
  if (implementation == ref_tf32_impl) return 1;
  if (is_peer_implementation(implementation)) return 2;
  return 3;
}

}  // namespace

bool is_default_label(std::string_view label) {
  return label == default_config_label ||
         (label.size() > default_config_label.size() && label.substr(0, default_config_label.size()) == default_config_label &&
          label[default_config_label.size()] == '/');
}

std::string report_model::get_incomplete_note() const {
  if (status.complete) return {};
  std::string note = "INCOMPLETE RUN: ";
  note += status.incomplete_reason.empty() ? std::string("no reason recorded") : status.incomplete_reason;
  if (status.planned_cases > 0 && status.incomplete_reason.find(" of ") == std::string::npos)
    note += " (" + std::to_string(cases) + " of " + std::to_string(status.planned_cases) + " cases)";
  return note;
}

bool is_fused_implementation(std::string_view implementation) {
  return implementation != ref_impl && implementation != ref_tf32_impl && !is_peer_implementation(implementation);
}

std::string_view to_string(fused_status status) {
  switch (status) {
    case fused_status::ok: return "ok";
    case fused_status::fail: return "FAIL";
    case fused_status::skipped: return "SKIP";
    case fused_status::impossible: return "IMPOSSIBLE";
    case fused_status::untimed: return "untimed";
    case fused_status::missing: return "missing";
  }
  return "missing";
}

const sweep_row* model_report::get_default_row() const {
  for (const sweep_row& row : rows)
    if (is_default_label(row.config_label)) return &row;
  return nullptr;
}

report_model build_report_model(const results_file& results) {
  report_model report;
  report.environment = results.environment;
  report.status = results.status;
  report.cases = results.cases.size();
  for (verdict_rule r : all_verdict_rules) report.rules.push_back({r, 0});
  report.rules.push_back({std::nullopt, 0});
  for (const case_result& c : results.cases) {
    if (!is_fused_implementation(c.implementation)) continue;
    for (rule_count& r : report.rules)
      if (r.rule == c.decided_by) ++r.cases;
  }

  // model -> config label -> implementation -> case; std::map keeps "the last one wins" simple.
  struct model_cases {
    int kernelbench_id = 0;
    std::map<std::string, std::map<std::string, const case_result*>> configs;
  };
  std::map<std::string, model_cases> by_model;
  for (const case_result& c : results.cases) {
    model_cases& m = by_model[c.model];
    m.kernelbench_id = c.kernelbench_id;
    m.configs[c.config_label][c.implementation] = &c;
  }

  for (const auto& [model_name, cases] : by_model) {
    model_report model;
    model.model = model_name;
    model.kernelbench_id = cases.kernelbench_id;
    for (const auto& [label, impls] : cases.configs)
      for (const auto& [impl, c] : impls)
        if (is_fused_implementation(impl) &&
            std::find(model.fused_implementations.begin(), model.fused_implementations.end(), impl) ==
                model.fused_implementations.end())
          model.fused_implementations.push_back(impl);
    std::sort(model.fused_implementations.begin(), model.fused_implementations.end());
    for (const auto& [label, impls] : cases.configs)
      for (const auto& [impl, c] : impls)
        if (is_peer_implementation(impl) && std::find(model.peer_implementations.begin(), model.peer_implementations.end(),
                                                      impl) == model.peer_implementations.end())
          model.peer_implementations.push_back(impl);
    std::sort(model.peer_implementations.begin(), model.peer_implementations.end());

    for (const auto& [label, impls] : cases.configs) {
      sweep_row row;
      row.config_label = label;
      row.config = impls.begin()->second->config;
      for (const auto& [impl, c] : impls) {
        row.problem_size = std::max(row.problem_size, c->problem_size);
        row.all.push_back(make_cell(*c));
      }
      std::stable_sort(row.all.begin(), row.all.end(), [](const impl_cell& a, const impl_cell& b) {
        return role_rank(a.implementation) < role_rank(b.implementation);
      });
      for (const impl_cell& cell : row.all) {
        if (cell.implementation == ref_impl) row.ref = cell;
        if (cell.implementation == ref_tf32_impl) row.ref_tf32 = cell;
        if (!is_peer_implementation(cell.implementation)) continue;
        row.peers.push_back(cell);
        if (!peer_timed(cell)) continue;
        const auto faster = [&](const std::optional<impl_cell>& best) {
          return !best || cell.stats->median < best->stats->median;
        };
        if (faster(row.fastest_peer)) row.fastest_peer = cell;
        if (cell.outcome == outcome::passed && faster(row.fastest_passing_peer)) row.fastest_passing_peer = cell;
      }
      for (const std::string& impl : model.fused_implementations) {
        fused_entry entry;
        const auto it = impls.find(impl);
        if (it == impls.end()) {
          entry.cell.implementation = impl;
          entry.status = fused_status::missing;
        } else {
          entry.cell = make_cell(*it->second);
          entry.status = status_of(entry.cell);
          // A speedup exists only for a correct, timed case: FAIL and SKIP never show one.
          if (entry.status == fused_status::ok || entry.status == fused_status::impossible) {
            entry.vs_ref = speedup(row.ref, entry.cell);
            entry.vs_ref_tf32 = speedup(row.ref_tf32, entry.cell);
            entry.vs_fastest_passing_peer = speedup_over_peer(row.fastest_passing_peer, entry.cell);
            entry.vs_fastest_peer = speedup_over_peer(row.fastest_peer, entry.cell);
          }
        }
        row.fused.push_back(std::move(entry));
      }
      model.rows.push_back(std::move(row));
    }
    std::stable_sort(model.rows.begin(), model.rows.end(), [](const sweep_row& a, const sweep_row& b) {
      return std::tie(a.problem_size, a.config_label) < std::tie(b.problem_size, b.config_label);
    });
    report.models.push_back(std::move(model));
  }
  std::stable_sort(report.models.begin(), report.models.end(), [](const model_report& a, const model_report& b) {
    return std::tie(a.kernelbench_id, a.model) < std::tie(b.kernelbench_id, b.model);
  });

  // Geometric mean over models of the default-config speedup; IMPOSSIBLE rows do not count, since
  // their timing is suspect.
  std::vector<std::string> fused_names;
  for (const model_report& m : report.models)
    for (const std::string& impl : m.fused_implementations)
      if (std::find(fused_names.begin(), fused_names.end(), impl) == fused_names.end()) fused_names.push_back(impl);
  std::sort(fused_names.begin(), fused_names.end());
  for (const std::string& impl : fused_names) {
    geomean_entry g;
    g.implementation = impl;
    double log_sum_ref = 0.0;
    double log_sum_tf32 = 0.0;
    for (const model_report& m : report.models) {
      const sweep_row* row = m.get_default_row();
      if (row == nullptr) continue;
      for (const fused_entry& e : row->fused) {
        if (e.cell.implementation != impl || e.status != fused_status::ok) continue;
        if (e.vs_ref) {
          log_sum_ref += std::log(e.vs_ref->ratio);
          ++g.models_vs_ref;
        }
        if (e.vs_ref_tf32) {
          log_sum_tf32 += std::log(e.vs_ref_tf32->ratio);
          ++g.models_vs_ref_tf32;
        }
      }
    }
    if (g.models_vs_ref > 0) g.vs_ref = std::exp(log_sum_ref / g.models_vs_ref);
    if (g.models_vs_ref_tf32 > 0) g.vs_ref_tf32 = std::exp(log_sum_tf32 / g.models_vs_ref_tf32);
    report.geomeans.push_back(std::move(g));
  }
  return report;
}

}  // namespace fb::report
