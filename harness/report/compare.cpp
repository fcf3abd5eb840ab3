#include "harness/report/compare.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "harness/printers/detail/format.h"
#include "harness/stats/mann_whitney.h"

namespace fb::report {
namespace {

using key = std::tuple<std::string, std::string, std::string>;

key key_of(const case_result& c) { return {c.model, c.config_label, c.implementation}; }

std::optional<double> median_of(const case_result* c) {
  if (c == nullptr || c->outcome != outcome::passed || !c->stats) return std::nullopt;
  return c->stats->median;
}

/// Verdict of a case present and passing on both sides.
void judge_timing(case_comparison& out, const case_result& base, const case_result& cur, const compare_settings& s) {
  out.base_median = median_of(&base);
  out.cur_median = median_of(&cur);
  if (!out.base_median || !out.cur_median) {
    out.note = "not timed";
    return;
  }
  out.ratio = *out.cur_median / *out.base_median;
  const std::vector<double>& a = base.stats->samples;
  const std::vector<double>& b = cur.stats->samples;
  if (a.size() < 2 || b.size() < 2) {
    out.note = "too few samples for a rank test";  // a median alone cannot tell noise from change
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

std::size_t comparison::count(verdict v) const {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [v](const case_comparison& c) { return c.result == v; }));
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

  // Last occurrence wins, as in the report: a re-run of a case overrides the first attempt.
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
      out.result = c->outcome == outcome::passed ? verdict::added : verdict::fail;
      out.note = c->outcome == outcome::passed ? "not in BASE" : fmt::format("{} (not in BASE)", to_string(c->outcome));
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
    result.cases.push_back(std::move(out));
  }
  return result;
}

void print_comparison_markdown(std::ostream& out, const comparison& c) {
  namespace d = printers::detail;
  fmt::print(out, "| case | base median | cur median | ratio | p-value | verdict |\n");
  fmt::print(out, "|---|--:|--:|--:|--:|---|\n");
  for (const case_comparison& cc : c.cases) {
    const std::string base = cc.base_median ? d::format_time(*cc.base_median) : std::string(d::none);
    const std::string cur = cc.cur_median ? d::format_time(*cc.cur_median) : std::string(d::none);
    const std::string ratio = cc.ratio ? fmt::format("{:.3f}", *cc.ratio) : std::string(d::none);
    const std::string p = cc.p_value ? fmt::format("{:.2g}", *cc.p_value) : std::string(d::none);
    std::string shown(to_string(cc.result));
    if (cc.regression) shown = fmt::format("**{}**", shown);  // regressions stand out in a PR comment
    if (!cc.note.empty()) shown += fmt::format(" ({})", d::markdown_cell(cc.note));
    fmt::print(out, "| {} | {} | {} | {} | {} | {} |\n", d::markdown_cell(cc.get_name()), base, cur, ratio, p, shown);
  }
}

std::string comparison_summary(const comparison& c) {
  const auto newly_failing = static_cast<std::size_t>(std::count_if(
      c.cases.begin(), c.cases.end(), [](const case_comparison& x) { return x.result == verdict::fail && x.regression; }));
  const std::string counts = fmt::format(
      "{} faster, {} same, {} fixed, {} failing, {} missing, {} new of {} cases (alpha {}, min effect {}%)",
      c.count(verdict::faster), c.count(verdict::same), c.count(verdict::fixed), c.count(verdict::fail),
      c.count(verdict::missing), c.count(verdict::added), c.cases.size(), c.settings.alpha,
      c.settings.min_effect * 100.0);
  if (c.has_regression())
    return fmt::format("REGRESSION: {} slower, {} newly failing; {}", c.count(verdict::slower), newly_failing, counts);
  return fmt::format("no regression: {}", counts);
}

}  // namespace fb::report
