#include "harness/report/compare.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include "harness/format/number_format.h"
#include "harness/report/report_model.h"
#include "harness/stats/mann_whitney.h"

namespace fb::report {
namespace {

using key = std::tuple<std::string, std::string, std::string>;

key key_of(const case_result& c) { return {c.model, c.config_label, c.implementation}; }

std::optional<double> median_of(const case_result* c) {
  if (c == nullptr || c->outcome != outcome::passed || !c->stats) return std::nullopt;
  return c->stats->median;
}

/// True when the run has no such implementation to judge (ref_tf32 on a CPU): not a failure of it.
bool lacks(const case_result& c) { return c.outcome == outcome::not_supported; }

/// Verdict of a case present and passing on both sides.
void judge_timing(case_comparison& out, const case_result& base, const case_result& cur, const compare_settings& s) {
  out.base_median = median_of(&base);
  out.cur_median = median_of(&cur);
  if (!out.base_median && !out.cur_median) {
    out.note = "not timed";
    return;
  }
  if (!out.base_median || !out.cur_median) {
    // Timed on one side only: nothing to compare, and nothing that shows the other side is no slower.
    out.result = verdict::undecided;
    out.note = out.base_median ? "not timed in CUR" : "not timed in BASE";
    return;
  }
  out.ratio = *out.cur_median / *out.base_median;
  const std::vector<double>& a = base.stats->samples;
  const std::vector<double>& b = cur.stats->samples;
  // A median alone cannot tell noise from change, and with too few samples no data can reach p < alpha:
  // calling such a case "same" would pass a 3x slowdown measured twice.
  if (a.empty() || b.empty() || stats::mann_whitney_min_p_value(a.size(), b.size()) >= s.alpha) {
    out.result = verdict::undecided;
    out.note = fmt::format("n = {} vs {}: a rank test cannot reach p < {} with so few samples (needs {} per side)",
                           a.size(), b.size(), s.alpha, stats::mann_whitney_min_samples(s.alpha));
    if (!a.empty() && !b.empty()) out.p_value = stats::mann_whitney_u(a, b).p_value;
    return;
  }
  out.p_value = stats::mann_whitney_u(a, b).p_value;
  if (*out.p_value >= s.alpha) return;
  if (*out.ratio > 1.0 + s.min_effect) {
    out.result = verdict::slower;
    out.regression = true;
  } else if (*out.ratio < 1.0 - s.min_effect) {
    out.result = verdict::faster;
  }
}

}  // namespace

std::string_view to_string(verdict v) {
  switch (v) {
    case verdict::faster: return "faster";
    case verdict::slower: return "slower";
    case verdict::same: return "same";
    case verdict::undecided: return "undecided";
    case verdict::missing: return "missing";
    case verdict::added: return "new";
    case verdict::fail: return "fail";
    case verdict::fixed: return "fixed";
  }
  return "same";
}

std::string case_comparison::get_name() const { return fmt::format("{}/{}/{}", model, config_label, implementation); }

bool comparison::has_regression() const {
  return std::any_of(cases.begin(), cases.end(), [](const case_comparison& c) { return c.regression; });
}

bool comparison::has_failure() const {
  return std::any_of(cases.begin(), cases.end(), [](const case_comparison& c) { return c.failing; });
}

bool comparison::judged_nothing() const {
  return std::none_of(cases.begin(), cases.end(), [](const case_comparison& c) { return c.gated; });
}

std::size_t comparison::count(verdict v) const {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [v](const case_comparison& c) { return c.result == v; }));
}

std::size_t comparison::count(verdict v, bool gated) const {
  return static_cast<std::size_t>(std::count_if(
      cases.begin(), cases.end(), [v, gated](const case_comparison& c) { return c.gated == gated && c.result == v; }));
}

comparison compare_results(const results_file& base, const results_file& cur, const compare_settings& settings) {
  if (!(settings.alpha > 0.0 && settings.alpha < 1.0))
    throw compare_error(fmt::format("alpha must lie in (0, 1), got {}", settings.alpha));
  if (!(settings.min_effect >= 0.0))
    throw compare_error(fmt::format("min effect must be >= 0, got {}", settings.min_effect));
  if (base.environment.gpu_name != cur.environment.gpu_name && !settings.allow_different_gpu)
    throw compare_error(fmt::format(
        "BASE was measured on '{}' and CUR on '{}': timings of different GPUs are not comparable "
        "(pass --allow-different-gpu to compare anyway)",
        base.environment.gpu_name, cur.environment.gpu_name));
  // An interrupted or failed run holds only the cases it finished: comparing it as if it were whole
  // would report "no regression" for everything it never measured.
  for (const auto& [name, run] : {std::pair{&settings.base_name, &base}, std::pair{&settings.cur_name, &cur}})
    if (!run->status.complete && !settings.allow_incomplete)
      throw compare_error(fmt::format("{} is an incomplete run ({}): pass --allow-incomplete to compare its "
                                      "finished cases anyway",
                                      *name, run->status.incomplete_reason.empty()
                                                 ? std::string("no reason recorded")
                                                 : run->status.incomplete_reason));

  // Files repeat no case (results_from_json refuses that); for results built in memory the last
  // occurrence wins, as in the report.
  std::map<key, const case_result*> cur_by_key;
  for (const case_result& c : cur.cases) cur_by_key[key_of(c)] = &c;
  std::map<key, const case_result*> base_by_key;
  std::vector<key> order;
  for (const case_result& c : base.cases)
    if (base_by_key.insert_or_assign(key_of(c), &c).second) order.push_back(key_of(c));
  for (const case_result& c : cur.cases)
    if (base_by_key.count(key_of(c)) == 0 && std::find(order.begin(), order.end(), key_of(c)) == order.end())
      order.push_back(key_of(c));

  comparison result;
  result.settings = settings;
  for (const key& k : order) {
    case_comparison out;
    std::tie(out.model, out.config_label, out.implementation) = k;
    const auto b_it = base_by_key.find(k);
    const auto c_it = cur_by_key.find(k);
    const case_result* b = b_it == base_by_key.end() ? nullptr : b_it->second;
    const case_result* c = c_it == cur_by_key.end() ? nullptr : c_it->second;
    out.base_median = median_of(b);
    out.cur_median = median_of(c);
    if (c == nullptr) {
      out.result = verdict::missing;
      out.note = "not in CUR";
    } else if (b == nullptr) {
      out.result = c->outcome == outcome::passed || lacks(*c) ? verdict::added : verdict::fail;
      out.note = c->outcome == outcome::passed ? "not in BASE" : fmt::format("{} (not in BASE)", to_string(c->outcome));
    } else if (lacks(*c) && b->outcome != outcome::passed) {
      // The run has no such implementation (ref_tf32 on a CPU): nothing was judged, nothing failed.
      out.result = verdict::same;
      out.note = fmt::format("{} in BASE, {} in CUR", to_string(b->outcome), to_string(c->outcome));
    } else if (c->outcome != outcome::passed) {
      out.result = verdict::fail;
      out.regression = b->outcome == outcome::passed;  // passed before, fails now
      out.note = out.regression ? fmt::format("passed in BASE, {} in CUR", to_string(c->outcome))
                                : fmt::format("{} in BASE and CUR", to_string(c->outcome));
    } else if (b->outcome != outcome::passed) {
      out.result = verdict::fixed;
      out.note = fmt::format("{} in BASE", to_string(b->outcome));
    } else {
      judge_timing(out, *b, *c, settings);
    }
    // A peer (PyTorch as a user runs it) is information even under --all-impls: its TF32 rows miss the
    // tolerance by design, and its speed is torch's, not the code's.
    out.gated = !is_peer_implementation(out.implementation) &&
                (settings.all_impls || is_fused_implementation(out.implementation));
    if (!out.gated) out.regression = false;  // a reference's change is information about the machine, not the code
    out.failing = out.gated && (out.regression || (out.result == verdict::missing && !settings.allow_missing) ||
                                (out.result == verdict::undecided && !settings.allow_undecided));
    result.cases.push_back(std::move(out));
  }
  return result;
}

void print_comparison_markdown(std::ostream& out, const comparison& c) {
  namespace d = fb::format;
  fmt::print(out, "| case | base median | cur median | ratio | p-value | verdict |\n");
  fmt::print(out, "|---|--:|--:|--:|--:|---|\n");
  for (const case_comparison& cc : c.cases) {
    const std::string base = cc.base_median ? d::format_time(*cc.base_median) : std::string(d::none);
    const std::string cur = cc.cur_median ? d::format_time(*cc.cur_median) : std::string(d::none);
    const std::string ratio = cc.ratio ? fmt::format("{:.3f}", *cc.ratio) : std::string(d::none);
    const std::string p = cc.p_value ? fmt::format("{:.2g}", *cc.p_value) : std::string(d::none);
    std::string shown(to_string(cc.result));
    if (cc.failing) shown = fmt::format("**{}**", shown);  // what fails the gate stands out in a PR comment
    if (!cc.note.empty()) shown += fmt::format(" ({})", d::markdown_cell(cc.note));
    if (!cc.gated)
      shown += is_peer_implementation(cc.implementation) ? " (peer: information, never gated)"
                                                          : " (reference: information, --all-impls gates it)";
    fmt::print(out, "| {} | {} | {} | {} | {} | {} |\n", d::markdown_cell(cc.get_name()), base, cur, ratio, p, shown);
  }
}

namespace {

/// "3 cases missing from CUR: a, b, c, d, e and 7 more (...)": the first few gated cases by name, so a
/// truncated run is recognisable at a glance without flooding a CI log with hundreds of lines. Only
/// what can fail the comparison: the references' and peers' gaps are counted on the information line.
std::string gap_line(const comparison& c, verdict v, std::string_view what, bool allowed, std::string_view flag) {
  constexpr std::size_t shown = 5;
  std::vector<std::string> names;
  for (const case_comparison& x : c.cases)
    if (x.gated && x.result == v)
      names.push_back(v == verdict::undecided ? fmt::format("{} ({})", x.get_name(), x.note) : x.get_name());
  if (names.empty()) return {};
  const std::size_t total = names.size();
  if (total > shown) names.resize(shown);
  return fmt::format("\n{} {} {}: {}{}{}", total, total == 1 ? "case" : "cases", what, fmt::join(names, ", "),
                     total > shown ? fmt::format(" and {} more", total - shown) : std::string(),
                     allowed ? std::string(" (accepted by " + std::string(flag) + ")")
                             : fmt::format(" (a failure; {} accepts them)", flag));
}

/// "1 faster, 10 same, 0 undecided, 0 fixed, 0 failing, 0 missing, 0 new": the verdicts of the gated
/// cases (`gated`) or of the others.
std::string verdict_counts(const comparison& c, bool gated) {
  return fmt::format("{} faster, {} same, {} undecided, {} fixed, {} failing, {} missing, {} new",
                     c.count(verdict::faster, gated), c.count(verdict::same, gated), c.count(verdict::undecided, gated),
                     c.count(verdict::fixed, gated), c.count(verdict::fail, gated), c.count(verdict::missing, gated),
                     c.count(verdict::added, gated));
}

}  // namespace

std::string comparison_summary(const comparison& c) {
  // The headline counts only what can fail the comparison (the implementations under test; with
  // --all-impls the references too): a reference's or a peer's change is information, on a line apart.
  const auto newly_failing = static_cast<std::size_t>(std::count_if(c.cases.begin(), c.cases.end(), [](const case_comparison& x) {
    return x.gated && x.result == verdict::fail && x.regression;
  }));
  const auto under_test = static_cast<std::size_t>(
      std::count_if(c.cases.begin(), c.cases.end(), [](const case_comparison& x) { return x.gated; }));
  const std::string counts =
      fmt::format("{} of {} {} under test (alpha {}, min effect {}%)", verdict_counts(c, true), under_test,
                  under_test == 1 ? "case" : "cases", c.settings.alpha, c.settings.min_effect * 100.0);
  std::string head;
  if (c.has_regression())
    head = fmt::format("REGRESSION: {} slower, {} newly failing; {}", c.count(verdict::slower, true), newly_failing,
                       counts);
  else if (c.judged_nothing())
    head = fmt::format("NOTHING UNDER TEST: neither file holds a case that can fail the comparison (a fused or "
                       "plug-in implementation; --all-impls gates the references), so no regression could be seen; {}",
                       counts);
  else if (c.has_failure())
    head = fmt::format("FAIL: no slower case found, but {} does not cover {}; {}", c.settings.cur_name,
                       c.settings.base_name, counts);
  else
    head = fmt::format("no regression: {}", counts);
  const std::size_t information = c.cases.size() - under_test;
  if (information > 0)
    head += fmt::format("\ninformation, never failing the comparison ({}peers): {} slower, {} of {} {}",
                        c.settings.all_impls ? "" : "references without --all-impls, ", c.count(verdict::slower, false),
                        verdict_counts(c, false), information, information == 1 ? "case" : "cases");
  return head +
         gap_line(c, verdict::missing, fmt::format("of {} missing from {}", c.settings.base_name, c.settings.cur_name),
                  c.settings.allow_missing, "--allow-missing") +
         gap_line(c, verdict::undecided, "undecided", c.settings.allow_undecided, "--allow-undecided");
}

}  // namespace fb::report
