#include "harness/verify/verify_report.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <limits>
#include <ostream>
#include <set>
#include <type_traits>

#include "harness/format/seed_json.h"
#include "harness/format/xml_text.h"

namespace fb {
namespace {

using format::xml_escaped;

int count(const verify_row& r, verdict_rule rule) {
  const auto it = r.by_rule.find(rule);
  return it == r.by_rule.end() ? 0 : it->second;
}

constexpr const char* verify_schema_name = "fusebench-verify";
constexpr int verify_schema_version = 2;
/// The rules a row counts verdicts by, as the JSON names them under "decided_by".
constexpr verdict_rule counted_rules[] = {verdict_rule::fp32_reference, verdict_rule::fp64_allowance,
                                          verdict_rule::fp64_oracle};

/// Typed fields of a verify JSON, each failure one line naming the file and the field.
class verify_json_reader {
 public:
  explicit verify_json_reader(const std::string& source) : m_source(source) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw std::invalid_argument(fmt::format("verify file '{}': {}", m_source, problem));
  }
  const json& field(const json& object, const std::string& path, const char* key) const {
    if (!object.is_object()) fail(fmt::format("{} is not an object", path.empty() ? "the top level" : path));
    const auto it = object.find(key);
    if (it == object.end()) fail(fmt::format("field {}{} is missing", path.empty() ? "" : path + ".", key));
    return *it;
  }
  template <class T>
  T get(const json& object, const std::string& path, const char* key) const {
    const json& v = field(object, path, key);
    const std::string where = (path.empty() ? "" : path + ".") + key;
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) fail(fmt::format("field {} has type {}, expected a string", where, v.type_name()));
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) fail(fmt::format("field {} has type {}, expected a boolean", where, v.type_name()));
    } else if constexpr (std::is_integral_v<T>) {
      if (!v.is_number_integer() || (std::is_unsigned_v<T> && !v.is_number_unsigned()))
        fail(fmt::format("field {} is {}, expected an integer", where, v.dump()));
    } else {
      if (!v.is_number()) fail(fmt::format("field {} is {}, expected a number", where, v.dump()));
    }
    return v.get<T>();
  }
  /// A seed: a decimal string (written since issue 25: exact in jq and JavaScript) or, in older
  /// files, a non-negative integer.
  uint64_t seed(const json& object, const std::string& path, const char* key) const {
    const json& v = field(object, path, key);
    const std::optional<uint64_t> s = seed_from_json(v);
    if (!s)
      fail(fmt::format("field {}{} is {}, expected a seed (0 to 18446744073709551615 as a decimal string)",
                       path.empty() ? "" : path + ".", key, v.dump()));
    return *s;
  }
  /// An error or ratio field: a number, or null for +infinity (JSON has no infinity, and nlohmann
  /// writes a non-finite number as null: an error over a zero bound, atol = rtol = 0, is infinite).
  double measure(const json& object, const std::string& path, const char* key) const {
    const json& v = field(object, path, key);
    if (v.is_null()) return std::numeric_limits<double>::infinity();
    return get<double>(object, path, key);
  }

 private:
  std::string m_source;
};

/// The larger of two maxima; the merge of two rows' maxima is the maximum over both.
void raise_to(double& into, double value) { into = std::max(into, value); }

}  // namespace

void verify_report::add(const verify_case_record& record, const check_result& r, const std::string& checked_against) {
  verify_row& row = rows[{record.model, record.implementation}];
  row.checked_against = checked_against;
  switch (r.result) {
    case outcome::passed: ++row.passed; break;
    case outcome::incorrect: ++row.incorrect; break;
    case outcome::failed: ++row.failed; break;
    case outcome::declined: ++row.declined; break;
    default: ++row.not_judged; break;
  }
  if (r.result == outcome::passed || r.result == outcome::incorrect) ++row.by_rule[r.rule];
  row.max_abs = std::max(row.max_abs, r.vs_expected.max_abs);
  row.worst_ratio = std::max(row.worst_ratio, r.vs_expected.worst_ratio);
  row.candidate_vs_fp64 = std::max(row.candidate_vs_fp64, r.candidate_vs_fp64);
  row.reference_vs_fp64 = std::max(row.reference_vs_fp64, r.expected_vs_fp64);
  row.max_conditioning = std::max(row.max_conditioning, r.conditioning);
  row.seconds += record.seconds;
  cases.push_back(record);
}

verify_row verify_report::totals() const {
  verify_row t;
  for (const auto& [key, r] : rows) {
    t.passed += r.passed;
    t.incorrect += r.incorrect;
    t.failed += r.failed;
    t.not_judged += r.not_judged;
    t.declined += r.declined;
    for (const auto& [rule, n] : r.by_rule) t.by_rule[rule] += n;
    t.seconds += r.seconds;
  }
  return t;
}

namespace {

/// One case record as the report's "cases" hold it (the seed a decimal string).
json case_record_to_json(const verify_case_record& c) {
  return {{"model", c.model},
          {"implementation", c.implementation},
          {"index", c.index},
          {"config", c.config},
          {"case_seed", seed_to_json(c.case_seed)},
          {"inputs", c.inputs},
          {"params", c.params},
          {"outcome", std::string(to_string(c.result))},
          {"decided_by", std::string(to_string(c.rule))},
          {"message", c.message},
          {"max_abs_error", c.max_abs},
          {"worst_error_over_bound", c.worst_ratio},
          {"seconds", c.seconds},
          {"repro", c.repro},
          {"bundle", c.bundle}};
}

/// The inverse of case_record_to_json, for a verdict line of the stream and a report's "cases"
/// alike; `p` names the record in error messages.
verify_case_record case_record_from_json(const verify_json_reader& r, const json& j, const std::string& p) {
  verify_case_record c;
  c.model = r.get<std::string>(j, p, "model");
  c.implementation = r.get<std::string>(j, p, "implementation");
  c.index = r.get<int>(j, p, "index");
  c.config = r.field(j, p, "config");
  c.case_seed = r.seed(j, p, "case_seed");
  c.inputs = r.get<std::string>(j, p, "inputs");
  c.params = r.get<std::string>(j, p, "params");
  const std::string o = r.get<std::string>(j, p, "outcome");
  const std::optional<outcome> result = outcome_from_string(o);
  if (!result) r.fail(fmt::format("field {}.outcome is \"{}\", not an outcome", p, o));
  c.result = *result;
  const std::string d = r.get<std::string>(j, p, "decided_by");
  const std::optional<verdict_rule> rule = verdict_rule_from_string(d);
  if (!rule) r.fail(fmt::format("field {}.decided_by is \"{}\", not a verdict rule", p, d));
  c.rule = *rule;
  c.message = r.get<std::string>(j, p, "message");
  c.max_abs = r.measure(j, p, "max_abs_error");
  c.worst_ratio = r.measure(j, p, "worst_error_over_bound");
  c.seconds = r.get<double>(j, p, "seconds");
  c.repro = r.get<std::string>(j, p, "repro");
  c.bundle = r.get<std::string>(j, p, "bundle");
  return c;
}

}  // namespace

json verdict_to_json(const verify_case_record& c, const check_result& r) {
  json line = case_record_to_json(c);
  line["impl_vs_fp64"] = r.candidate_vs_fp64;
  line["reference_fp32_vs_fp64"] = r.expected_vs_fp64;
  line["conditioning"] = r.conditioning;
  return line;
}

std::pair<verify_case_record, check_result> verdict_from_json(const json& j, const std::string& source) {
  const verify_json_reader r(source);
  const std::string p = "verdict";
  verify_case_record c = case_record_from_json(r, j, p);
  check_result check;
  check.result = c.result;
  check.rule = c.rule;
  check.message = c.message;
  check.vs_expected.max_abs = c.max_abs;
  check.vs_expected.worst_ratio = c.worst_ratio;
  check.candidate_vs_fp64 = r.measure(j, p, "impl_vs_fp64");
  check.expected_vs_fp64 = r.measure(j, p, "reference_fp32_vs_fp64");
  check.conditioning = r.measure(j, p, "conditioning");
  return {std::move(c), std::move(check)};
}

namespace {

/// The Markdown table of every column (--wide): what a PR comment or a wide terminal holds.
void print_wide_table(const verify_report& report, std::ostream& out) {
  fmt::print(out,
             "\n| model | implementation | checked against | cases | passed | incorrect | failed | not judged | declined | "
             "by fp32 ref | by fp64 + allowance | by fp64 oracle | worst err/bound | max abs err | impl vs fp64 | "
             "ref fp32 vs fp64 | max conditioning |\n");
  fmt::print(out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& [key, r] : report.rows)
    fmt::print(out, "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3g} | {:.3g} | {:.3g} | {:.3g} | {:.3g} |\n",
               key.first, key.second, r.checked_against, r.cases(), r.passed, r.incorrect, r.failed,
               r.not_judged, r.declined, count(r, verdict_rule::fp32_reference), count(r, verdict_rule::fp64_allowance),
               count(r, verdict_rule::fp64_oracle), r.worst_ratio, r.max_abs, r.candidate_vs_fp64, r.reference_vs_fp64, r.max_conditioning);
}

/// The default table: aligned plain columns that fit a 120-column terminal, and a legend.
void print_narrow_table(const verify_report& report, std::ostream& out) {
  std::size_t model_w = 5, impl_w = 14;
  for (const auto& [key, r] : report.rows) {
    model_w = std::max(model_w, key.first.size());
    impl_w = std::max(impl_w, key.second.size());
  }
  // Ids longer than the table can hold are cut with "~" (--wide shows them whole).
  model_w = std::min<std::size_t>(model_w, 30);
  impl_w = std::min<std::size_t>(impl_w, 26);
  const auto cut = [](const std::string& s, std::size_t w) { return s.size() <= w ? s : s.substr(0, w - 1) + "~"; };
  // The declined column only where a plug-in declined something (it would not fit 120 columns beside long ids).
  bool any_declined = false;
  for (const auto& [key, r] : report.rows) any_declined = any_declined || r.declined > 0;
  const auto declined_cell = [&](const std::string& text) { return any_declined ? fmt::format("  {:>8}", text) : ""; };
  fmt::print(out, "\n{:<{}}  {:<{}}  {:>6}  {:>6}  {:>9}  {:>6}  {:>10}{}  {:>11}  {}\n", "model", model_w,
             "implementation", impl_w, "cases", "passed", "incorrect", "errors", "not judged", declined_cell("declined"),
             "worst e/b", "max abs err");
  for (const auto& [key, r] : report.rows)
    fmt::print(out, "{:<{}}  {:<{}}  {:>6}  {:>6}  {:>9}  {:>6}  {:>10}{}  {:>11.3g}  {:.3g}\n",
               cut(key.first, model_w), model_w, cut(key.second, impl_w), impl_w, r.cases(), r.passed, r.incorrect,
               r.failed, r.not_judged, declined_cell(std::to_string(r.declined)), r.worst_ratio, r.max_abs);
  fmt::print(out,
             "legend: a row is one implementation on the model's cases (reference: libtorch's semantics against the\n"
             "  fp64 loop oracle); worst e/b: the largest |error| / tolerance bound (<= 1 passes); errors: exceptions;\n"
             "  not judged: no verdict, declined: refused by a plug-in's supports() (neither counted as passed);\n"
             "  --wide: every column (rules, fp64 errors, conditioning)\n");
}

}  // namespace

void print_verify_table(const verify_report& report, std::ostream& out, bool wide) {
  if (wide) print_wide_table(report, out);
  else print_narrow_table(report, out);
  for (const std::string& note : report.notes) fmt::print(out, "\nnote: {}", note);
  if (!report.notes.empty()) fmt::print(out, "\n");
  const verify_row t = report.totals();
  // A case is one drawn config with its parameters and inputs; each implementation checked on it
  // (the fused ones, and the reference's semantics) gives it one verdict.
  fmt::print(out,
             "\nverify: {} verdicts on {} cases: {} passed, {} failed ({} incorrect, {} errors), {} not judged{}; verdicts "
             "by rule: {} by the fp32 reference, {} by fp64 with the reference's error as allowance, {} by the fp64 "
             "oracle (the reference's semantics)\n",
             t.cases(), distinct_cases(report), t.passed, t.incorrect + t.failed, t.incorrect, t.failed, t.not_judged,
             t.declined > 0 ? fmt::format(", {} declined by a plug-in (not passed)", t.declined) : std::string(),
             count(t, verdict_rule::fp32_reference), count(t, verdict_rule::fp64_allowance),
             count(t, verdict_rule::fp64_oracle));
}

int64_t distinct_cases(const verify_report& report) {
  std::set<std::pair<std::string, int>> held;
  for (const verify_case_record& c : report.cases) held.emplace(c.model, c.index);
  return static_cast<int64_t>(held.size());
}

int64_t held_cases(const verify_report& report) {
  if (report.scope.mode != "fuzz") return static_cast<int64_t>(report.cases.size());
  return report.shard.size_of(report.scope.cases_per_model) * static_cast<int64_t>(report.scope.models.size());
}

int print_verdict(const verify_report& report, std::ostream& out) {
  const verify_row t = report.totals();
  if (!report.complete) {
    fmt::print(out, "verify: INCOMPLETE: {}\n", report.incomplete_reason);
    return 1;
  }
  if (held_cases(report) == 0) {
    // More shards than cases: this one has nothing to do, which is not a failure of the run.
    fmt::print(out, "verify: shard {} holds none of the {} case indices of this run; nothing to judge\n",
               to_string(report.shard), report.scope.cases_per_model);
    return 0;
  }
  if (t.judged() == 0) {
    fmt::print(out, "verify: nothing was judged\n");
    return 1;
  }
  // A plug-in that declines every case of a model passed nothing: its row fails the run.
  int all_declined = 0;
  for (const auto& [key, r] : report.rows)
    if (r.declined > 0 && r.judged() == 0) {
      fmt::print(out, "verify: {} declined every case of {}: nothing of it was judged\n", key.second, key.first);
      ++all_declined;
    }
  if (all_declined > 0) return 1;
  // A plug-in the run was asked to judge that judged nothing (registered for another device or model
  // only) was skipped, not passed.
  int unjudged_plugins = 0;
  for (const std::string& name : report.plugins) {
    int judged = 0;
    for (const auto& [key, r] : report.rows)
      if (key.second == name) judged += r.judged();
    if (judged == 0) {
      fmt::print(out, "verify: {} judged nothing in this run\n", name);
      ++unjudged_plugins;
    }
  }
  if (unjudged_plugins > 0) return 1;
  return t.incorrect + t.failed == 0 && t.not_judged == 0 ? 0 : 1;
}

json verify_report_to_json(const verify_report& report) {
  json rows = json::array();
  for (const auto& [key, r] : report.rows)
    rows.push_back({{"model", key.first},
                    {"implementation", key.second},
                    {"checked_against", r.checked_against},
                    {"passed", r.passed},
                    {"incorrect", r.incorrect},
                    {"failed", r.failed},
                    {"not_judged", r.not_judged},
                    {"declined", r.declined},
                    {"decided_by", {{"fp32_reference", count(r, verdict_rule::fp32_reference)},
                                    {"fp64_allowance", count(r, verdict_rule::fp64_allowance)},
                                    {"fp64_oracle", count(r, verdict_rule::fp64_oracle)}}},
                    {"worst_error_over_bound", r.worst_ratio},
                    {"max_abs_error", r.max_abs},
                    {"impl_vs_fp64", r.candidate_vs_fp64},
                    {"reference_fp32_vs_fp64", r.reference_vs_fp64},
                    {"max_conditioning", r.max_conditioning},
                    {"seconds", r.seconds}});
  json cases = json::array();
  for (const verify_case_record& c : report.cases) cases.push_back(case_record_to_json(c));
  const verify_row t = report.totals();
  return {{"schema", verify_schema_name},
          {"version", verify_schema_version},
          {"complete", report.complete},
          {"incomplete_reason", report.incomplete_reason},
          {"git_commit", report.git_commit},
          {"source_digest", report.source_digest},
          {"device", report.device},
          {"seed", seed_to_json(report.seed)},
          {"atol", report.atol},
          {"rtol", report.rtol},
          {"fp64_rule", report.fp64_rule},
          {"shard", to_string(report.shard)},
          {"scope", {{"mode", report.scope.mode},
                     {"device", report.scope.device},
                     {"models", report.scope.models},
                     {"cases_per_model", report.scope.cases_per_model},
                     {"inputs", report.scope.inputs},
                     {"params", report.scope.params},
                     {"case_size", report.scope.case_size}}},
          {"totals", {{"cases", t.cases()},
                      {"passed", t.passed},
                      {"incorrect", t.incorrect},
                      {"failed", t.failed},
                      {"declined", t.declined},
                      {"not_judged", t.not_judged}}},
          {"notes", report.notes},
          {"plugins", report.plugins},
          {"rows", rows},
          {"cases", cases}};
}

verify_report verify_report_from_json(const json& doc, const std::string& source) {
  const verify_json_reader r(source);
  if (!doc.is_object() || !doc.contains("schema") || doc.at("schema") != verify_schema_name)
    r.fail(fmt::format("not a {} file (fusebench verify --json writes one)", verify_schema_name));
  if (r.get<int64_t>(doc, "", "version") != verify_schema_version)
    r.fail(fmt::format("version {} is not supported: this fusebench reads version {}", doc.at("version").dump(),
                       verify_schema_version));
  verify_report report;
  report.complete = r.get<bool>(doc, "", "complete");
  report.incomplete_reason = r.get<std::string>(doc, "", "incomplete_reason");
  report.git_commit = r.get<std::string>(doc, "", "git_commit");
  // Optional: reports written before the source digest was recorded.
  if (doc.contains("source_digest")) report.source_digest = r.get<std::string>(doc, "", "source_digest");
  report.device = r.get<std::string>(doc, "", "device");
  report.seed = r.seed(doc, "", "seed");
  report.atol = r.get<double>(doc, "", "atol");
  report.rtol = r.get<double>(doc, "", "rtol");
  report.fp64_rule = r.get<bool>(doc, "", "fp64_rule");
  try {
    report.shard = parse_shard(r.get<std::string>(doc, "", "shard"), "field shard");
  } catch (const std::invalid_argument& e) {
    r.fail(e.what());
  }
  const json& scope = r.field(doc, "", "scope");
  report.scope.mode = r.get<std::string>(scope, "scope", "mode");
  report.scope.device = r.get<std::string>(scope, "scope", "device");
  const json& models = r.field(scope, "scope", "models");
  if (!models.is_array()) r.fail("field scope.models is not an array");
  for (const json& m : models) {
    if (!m.is_string()) r.fail("field scope.models holds a non-string");
    report.scope.models.push_back(m.get<std::string>());
  }
  report.scope.cases_per_model = r.get<int>(scope, "scope", "cases_per_model");
  report.scope.inputs = r.get<std::string>(scope, "scope", "inputs");
  report.scope.params = r.get<std::string>(scope, "scope", "params");
  // Files written before --case-size existed have no field: they used the device's own sizes.
  if (scope.contains("case_size")) report.scope.case_size = r.get<std::string>(scope, "scope", "case_size");
  const json& notes = r.field(doc, "", "notes");
  if (!notes.is_array()) r.fail("field notes is not an array");
  for (const json& n : notes) {
    if (!n.is_string()) r.fail("field notes holds a non-string");
    report.notes.push_back(n.get<std::string>());
  }
  // Files written before issue 40 have no field: no plug-in was recorded.
  if (doc.contains("plugins")) {
    const json& plugins = doc.at("plugins");
    if (!plugins.is_array()) r.fail("field plugins is not an array");
    for (const json& n : plugins) {
      if (!n.is_string()) r.fail("field plugins holds a non-string");
      report.plugins.push_back(n.get<std::string>());
    }
  }

  const json& rows = r.field(doc, "", "rows");
  if (!rows.is_array()) r.fail("field rows is not an array");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& j = rows[i];
    const std::string p = fmt::format("rows[{}]", i);
    const auto key = std::make_pair(r.get<std::string>(j, p, "model"), r.get<std::string>(j, p, "implementation"));
    if (report.rows.count(key) != 0) r.fail(fmt::format("{} repeats the row {}/{}", p, key.first, key.second));
    verify_row& row = report.rows[key];
    row.checked_against = r.get<std::string>(j, p, "checked_against");
    row.passed = r.get<int>(j, p, "passed");
    row.incorrect = r.get<int>(j, p, "incorrect");
    row.failed = r.get<int>(j, p, "failed");
    row.not_judged = r.get<int>(j, p, "not_judged");
    // Files written before plug-ins existed have no field: nothing was declined.
    if (j.contains("declined")) row.declined = r.get<int>(j, p, "declined");
    const json& decided = r.field(j, p, "decided_by");
    for (const verdict_rule rule : counted_rules)
      if (const int n = r.get<int>(decided, p + ".decided_by", std::string(to_string(rule)).c_str()); n != 0)
        row.by_rule[rule] = n;
    row.worst_ratio = r.measure(j, p, "worst_error_over_bound");
    row.max_abs = r.measure(j, p, "max_abs_error");
    row.candidate_vs_fp64 = r.measure(j, p, "impl_vs_fp64");
    row.reference_vs_fp64 = r.measure(j, p, "reference_fp32_vs_fp64");
    row.max_conditioning = r.measure(j, p, "max_conditioning");
    row.seconds = r.get<double>(j, p, "seconds");
  }

  const json& cases = r.field(doc, "", "cases");
  if (!cases.is_array()) r.fail("field cases is not an array");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    report.cases.push_back(case_record_from_json(r, cases[i], fmt::format("cases[{}]", i)));
  }
  return report;
}

namespace {

/// Throws merge_error when `report`'s row counts are not those its cases add up to, or when a
/// complete report holds another number of cases than its shard plans: the file was cut or edited,
/// and a merge that trusted its totals would pass what it never ran (or hide what failed).
void require_counts_match_cases(const std::string& name, const verify_report& report) {
  std::map<std::pair<std::string, std::string>, verify_row> recounted;
  std::set<std::pair<std::string, int>> held;
  for (const verify_case_record& c : report.cases) {
    verify_row& row = recounted[{c.model, c.implementation}];
    switch (c.result) {
      case outcome::passed: ++row.passed; break;
      case outcome::incorrect: ++row.incorrect; break;
      case outcome::failed: ++row.failed; break;
      case outcome::declined: row.declined += 1; break;
      default: row.not_judged += 1; break;  // as verify_report::add counts it
    }
    held.emplace(c.model, c.index);
  }
  // How the cases ended, not only how many there are: a row that says passed where its case says
  // incorrect would otherwise merge green.
  const auto counts = [](const verify_row& r) {
    return std::array{r.passed, r.incorrect, r.failed, r.not_judged, r.declined};
  };
  std::set<std::pair<std::string, std::string>> keys;
  for (const auto& [key, row] : report.rows) keys.insert(key);
  for (const auto& [key, row] : recounted) keys.insert(key);
  for (const auto& key : keys) {
    const auto row = report.rows.find(key);
    const auto cases = recounted.find(key);
    const std::array<int, 5> said = row == report.rows.end() ? std::array<int, 5>{} : counts(row->second);
    const std::array<int, 5> found = cases == recounted.end() ? std::array<int, 5>{} : counts(cases->second);
    if (said != found)
      throw merge_error(fmt::format(
          "{}: the totals of {}/{} (passed, incorrect, failed, not judged, declined: {}) are not those of its cases "
          "({}): the file was cut or edited; rerun that shard",
          name, key.first, key.second, fmt::join(said, ", "), fmt::join(found, ", ")));
  }
  if (report.complete && static_cast<int64_t>(held.size()) != held_cases(report))
    throw merge_error(fmt::format("{} says it is complete but holds {} of the {} cases its shard {} plans: the file "
                                  "was cut or edited; rerun that shard",
                                  name, held.size(), held_cases(report), to_string(report.shard)));
}

}  // namespace

verify_report merge_verify_reports(const std::vector<std::pair<std::string, verify_report>>& parts,
                                   const merge_rules& rules) {
  if (parts.empty()) throw merge_error("nothing to merge");
  std::vector<merge_part> names;
  for (const auto& [name, report] : parts) names.push_back({name, report.shard});
  const verify_report& first = parts.front().second;
  for (const auto& [name, report] : parts) {
    if (report.scope.mode != "fuzz")
      throw merge_error(fmt::format("{}: a verify --{} run is not split into shards; only fuzz runs merge", name,
                                    report.scope.mode));
    if (!(report.scope == first.scope))
      throw merge_error(fmt::format(
          "{}: its cases are not those of {} (models, --cases, --device, --inputs or --params differ): shards of one "
          "run are made with the same options",
          name, parts.front().first));
  }
  const shard_coverage coverage = check_coverage(names, rules);
  const auto values = [&](auto get) {
    std::vector<std::string> out;
    for (const auto& part : parts) out.push_back(fmt::format("{}", get(part.second)));
    return out;
  };
  const char* same_run = "; the shards of one run are made with the same --seed, --atol, --rtol and --strict-fp32";
  (void)agreed_value("seed", values([](const verify_report& r) { return r.seed; }), names, false, same_run);
  (void)agreed_value("atol", values([](const verify_report& r) { return r.atol; }), names, false, same_run);
  (void)agreed_value("rtol", values([](const verify_report& r) { return r.rtol; }), names, false, same_run);
  (void)agreed_value("fp64_rule", values([](const verify_report& r) { return r.fp64_rule; }), names, false, same_run);
  // A shard without a plug-in would merge into a run that seems to have judged it everywhere.
  const auto plugin_set = [](const verify_report& r) { return fmt::format("[{}]", fmt::join(r.plugins, ", ")); };
  (void)agreed_value("plugins", values(plugin_set), names, false,
                     "; the shards of one run load the same plug-ins (--plugin, FUSEBENCH_PLUGINS)");

  verify_report out;
  out.device = agreed_value("device", values([](const verify_report& r) { return r.device; }), names,
                            rules.allow_different_gpu, "; --allow-different-gpu merges them anyway");
  out.git_commit = agreed_value("git_commit", values([](const verify_report& r) { return r.git_commit; }), names,
                                rules.allow_different_commit, "; --allow-different-commit merges them anyway");
  out.source_digest = agreed_value("source_digest", values([](const verify_report& r) { return r.source_digest; }),
                                   names, rules.allow_different_commit, "; --allow-different-commit merges them anyway");
  out.seed = first.seed;
  out.atol = first.atol;
  out.rtol = first.rtol;
  out.fp64_rule = first.fp64_rule;
  out.plugins = first.plugins;
  out.scope = first.scope;
  out.shard = rules.target;

  std::vector<std::string> reasons;
  for (const auto& [name, report] : parts)
    if (!report.complete) {
      if (!rules.allow_incomplete)
        throw merge_error(fmt::format("{} is incomplete ({}); --allow-incomplete merges it anyway", name,
                                      report.incomplete_reason));
      reasons.push_back(fmt::format("shard {}: {}", to_string(report.shard), report.incomplete_reason));
    }
  if (!coverage.missing.empty()) {
    std::vector<std::string> missing;
    for (const int k : coverage.missing) missing.push_back(fmt::format("{}/{}", k, coverage.count));
    reasons.push_back(fmt::format("merged without shard{} {}", missing.size() > 1 ? "s" : "", fmt::join(missing, ", ")));
  }
  out.complete = reasons.empty();
  out.incomplete_reason = fmt::format("{}", fmt::join(reasons, "; "));

  // Each (model, case index) lies in one part; one process would have run the models in scope
  // order, each case's records together, indices ascending.
  std::map<std::pair<std::string, int>, std::vector<const verify_case_record*>> by_case;
  std::set<std::string> seen_notes;
  for (const auto& [name, report] : parts) {
    for (const auto& [key, row] : report.rows) {
      const bool fresh = out.rows.count(key) == 0;
      verify_row& into = out.rows[key];
      if (fresh) into.checked_against = row.checked_against;
      into.passed += row.passed;
      into.incorrect += row.incorrect;
      into.failed += row.failed;
      into.not_judged += row.not_judged;
      into.declined += row.declined;
      for (const auto& [rule, n] : row.by_rule) into.by_rule[rule] += n;
      raise_to(into.max_abs, row.max_abs);
      raise_to(into.worst_ratio, row.worst_ratio);
      raise_to(into.candidate_vs_fp64, row.candidate_vs_fp64);
      raise_to(into.reference_vs_fp64, row.reference_vs_fp64);
      raise_to(into.max_conditioning, row.max_conditioning);
      into.seconds += row.seconds;
    }
    for (const verify_case_record& c : report.cases) {
      if (std::find(first.scope.models.begin(), first.scope.models.end(), c.model) == first.scope.models.end() ||
          c.index < 0 || c.index >= first.scope.cases_per_model || !report.shard.holds(c.index))
        throw merge_error(fmt::format("{}: case {} of {} is not a case of its shard {}", name, c.index, c.model,
                                      to_string(report.shard)));
      by_case[{c.model, c.index}].push_back(&c);
    }
    for (const std::string& note : report.notes)
      if (seen_notes.insert(note).second) out.notes.push_back(note);
    require_counts_match_cases(name, report);  // once its cases are known to be its shard's
  }
  for (const std::string& model : out.scope.models)
    for (int i = 0; i < out.scope.cases_per_model; ++i) {
      const auto it = by_case.find({model, i});
      if (it == by_case.end()) continue;
      for (const verify_case_record* c : it->second) out.cases.push_back(*c);
    }
  return out;
}

namespace {

/// `<property name="..." value="..."/>` on its own line.
void print_property(std::ostream& out, std::string_view indent, std::string_view name, const std::string& value) {
  fmt::print(out, "{}<property name=\"{}\" value=\"{}\"/>\n", indent, name, xml_escaped(value));
}

}  // namespace

void write_junit(const verify_report& report, std::ostream& out) {
  std::map<std::string, std::vector<const verify_case_record*>> by_model;
  for (const verify_case_record& c : report.cases) by_model[c.model].push_back(&c);
  const verify_row t = report.totals();
  const int stopped = report.complete ? 0 : 1;  // an incomplete run is one more error: CI must not read it as green
  fmt::print(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fmt::print(out, "<testsuites name=\"fusebench verify\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
             t.cases() + stopped, t.incorrect, t.failed + stopped, t.not_judged + t.declined, t.seconds);
  if (!report.complete) {
    fmt::print(out, "  <testsuite name=\"fusebench verify: incomplete\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"0\">\n");
    fmt::print(out, "    <properties>\n");
    print_property(out, "      ", "complete", "false");
    print_property(out, "      ", "incomplete_reason", report.incomplete_reason);
    fmt::print(out, "    </properties>\n");
    fmt::print(out, "    <testcase classname=\"fusebench.verify\" name=\"run incomplete\" time=\"0\">\n");
    fmt::print(out, "      <error message=\"INCOMPLETE: {}\">the run holds only its finished cases</error>\n",
               xml_escaped(report.incomplete_reason));
    fmt::print(out, "    </testcase>\n  </testsuite>\n");
  }
  for (const auto& [model, cases] : by_model) {
    int failures = 0, errors = 0, skipped = 0;
    double seconds = 0;
    for (const verify_case_record* c : cases) {
      failures += c->result == outcome::incorrect;
      errors += c->result == outcome::failed;
      skipped += c->result != outcome::passed && c->result != outcome::incorrect && c->result != outcome::failed;
      seconds += c->seconds;
    }
    fmt::print(out, "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
               xml_escaped(model), cases.size(), failures, errors, skipped, seconds);
    // What replays the run, once per suite; a case's own seed and config on the case. Names stay
    // short (model/impl/case N): CI systems list them, and a config's JSON made them unreadable.
    fmt::print(out, "    <properties>\n");
    print_property(out, "      ", "seed", std::to_string(report.seed));
    print_property(out, "      ", "device", report.device);
    print_property(out, "      ", "commit", report.git_commit);
    print_property(out, "      ", "atol", fmt::format("{}", report.atol));
    print_property(out, "      ", "rtol", fmt::format("{}", report.rtol));
    fmt::print(out, "    </properties>\n");
    for (const verify_case_record* c : cases) {
      fmt::print(out, "    <testcase classname=\"{}.{}\" name=\"{}/{}/case {}\" time=\"{:.3f}\">\n",
                 xml_escaped(c->model), xml_escaped(c->implementation), xml_escaped(c->model),
                 xml_escaped(c->implementation), c->index, c->seconds);
      fmt::print(out, "      <properties>\n");
      print_property(out, "        ", "case_seed", std::to_string(c->case_seed));
      print_property(out, "        ", "config", c->config.dump());
      if (!c->inputs.empty()) print_property(out, "        ", "inputs", c->inputs);
      if (!c->params.empty()) print_property(out, "        ", "params", c->params);
      print_property(out, "        ", "seed", std::to_string(report.seed));
      print_property(out, "        ", "device", report.device);
      print_property(out, "        ", "commit", report.git_commit);
      fmt::print(out, "      </properties>\n");
      const std::string body = xml_escaped(c->message + (c->repro.empty() ? "" : "\nrepro: " + c->repro) +
                                          (c->bundle.empty() ? "" : "\nbundle: " + c->bundle));
      switch (c->result) {
        case outcome::passed: break;
        case outcome::incorrect:
          fmt::print(out, "      <failure message=\"{}\">{}</failure>\n", xml_escaped(c->message.substr(0, 200)), body);
          break;
        case outcome::failed:
          fmt::print(out, "      <error message=\"{}\">{}</error>\n", xml_escaped(c->message.substr(0, 200)), body);
          break;
        default:
          fmt::print(out, "      <skipped message=\"{}\"/>\n", xml_escaped(c->message.substr(0, 200)));
      }
      fmt::print(out, "    </testcase>\n");
    }
    fmt::print(out, "  </testsuite>\n");
  }
  fmt::print(out, "</testsuites>\n");
}

}  // namespace fb
