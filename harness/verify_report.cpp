#include "harness/verify_report.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <ostream>

namespace fb {
namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 allows no control characters but tab, newline and carriage return.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') out += ' ';
        else out += ch;
    }
  }
  return out;
}

int count(const verify_row& r, verdict_rule rule) {
  const auto it = r.by_rule.find(rule);
  return it == r.by_rule.end() ? 0 : it->second;
}

}  // namespace

void verify_report::add(const verify_case_record& record, const check_result& r, const std::string& checked_against) {
  verify_row& row = rows[{record.model, record.implementation}];
  row.checked_against = checked_against;
  switch (r.result) {
    case outcome::passed: ++row.passed; break;
    case outcome::incorrect: ++row.incorrect; break;
    case outcome::failed: ++row.failed; break;
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
    for (const auto& [rule, n] : r.by_rule) t.by_rule[rule] += n;
    t.seconds += r.seconds;
  }
  return t;
}

void print_verify_table(const verify_report& report, std::ostream& out) {
  fmt::print(out,
             "\n| model | implementation | checked against | cases | passed | incorrect | failed | not judged | "
             "by fp32 ref | by fp64 + allowance | by fp64 oracle | worst err/bound | max abs err | impl vs fp64 | "
             "ref fp32 vs fp64 | max conditioning |\n");
  fmt::print(out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& [key, r] : report.rows)
    fmt::print(out, "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3g} | {:.3g} | {:.3g} | {:.3g} | {:.3g} |\n",
               key.first, key.second, r.checked_against, r.judged() + r.not_judged, r.passed, r.incorrect, r.failed,
               r.not_judged, count(r, verdict_rule::fp32_reference), count(r, verdict_rule::fp64_allowance),
               count(r, verdict_rule::fp64_oracle), r.worst_ratio, r.max_abs, r.candidate_vs_fp64, r.reference_vs_fp64, r.max_conditioning);
  for (const std::string& note : report.notes) fmt::print(out, "\nnote: {}", note);
  if (!report.notes.empty()) fmt::print(out, "\n");
  const verify_row t = report.totals();
  fmt::print(out,
             "\nverify: {} cases: {} passed, {} failed ({} incorrect, {} errors), {} not judged; verdicts by rule: {} by "
             "the fp32 reference, {} by fp64 with the reference's error as allowance, {} by the fp64 oracle (the "
             "reference's semantics)\n",
             t.judged() + t.not_judged, t.passed, t.incorrect + t.failed, t.incorrect, t.failed, t.not_judged,
             count(t, verdict_rule::fp32_reference), count(t, verdict_rule::fp64_allowance),
             count(t, verdict_rule::fp64_oracle));
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
  for (const verify_case_record& c : report.cases)
    cases.push_back({{"model", c.model},
                     {"implementation", c.implementation},
                     {"index", c.index},
                     {"config", c.config},
                     {"outcome", std::string(to_string(c.result))},
                     {"decided_by", std::string(to_string(c.rule))},
                     {"message", c.message},
                     {"max_abs_error", c.max_abs},
                     {"worst_error_over_bound", c.worst_ratio},
                     {"seconds", c.seconds},
                     {"repro", c.repro},
                     {"bundle", c.bundle}});
  const verify_row t = report.totals();
  return {{"schema", "fusebench-verify"},
          {"version", 1},
          {"device", report.device},
          {"seed", report.seed},
          {"atol", report.atol},
          {"rtol", report.rtol},
          {"totals", {{"cases", t.judged() + t.not_judged},
                      {"passed", t.passed},
                      {"incorrect", t.incorrect},
                      {"failed", t.failed},
                      {"not_judged", t.not_judged}}},
          {"notes", report.notes},
          {"rows", rows},
          {"cases", cases}};
}

void write_junit(const verify_report& report, std::ostream& out) {
  std::map<std::string, std::vector<const verify_case_record*>> by_model;
  for (const verify_case_record& c : report.cases) by_model[c.model].push_back(&c);
  const verify_row t = report.totals();
  fmt::print(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fmt::print(out, "<testsuites name=\"fusebench verify\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
             t.judged() + t.not_judged, t.incorrect, t.failed, t.not_judged, t.seconds);
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
               xml_escape(model), cases.size(), failures, errors, skipped, seconds);
    for (const verify_case_record* c : cases) {
      fmt::print(out, "    <testcase classname=\"{}.{}\" name=\"case {} {}\" time=\"{:.3f}\"",
                 xml_escape(c->model), xml_escape(c->implementation), c->index, xml_escape(c->config.dump()), c->seconds);
      const std::string body = xml_escape(c->message + (c->repro.empty() ? "" : "\nrepro: " + c->repro) +
                                          (c->bundle.empty() ? "" : "\nbundle: " + c->bundle));
      switch (c->result) {
        case outcome::passed: fmt::print(out, "/>\n"); break;
        case outcome::incorrect:
          fmt::print(out, ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                     xml_escape(c->message.substr(0, 200)), body);
          break;
        case outcome::failed:
          fmt::print(out, ">\n      <error message=\"{}\">{}</error>\n    </testcase>\n", xml_escape(c->message.substr(0, 200)),
                     body);
          break;
        default:
          fmt::print(out, ">\n      <skipped message=\"{}\"/>\n    </testcase>\n", xml_escape(c->message.substr(0, 200)));
      }
    }
    fmt::print(out, "  </testsuite>\n");
  }
  fmt::print(out, "</testsuites>\n");
}

}  // namespace fb
