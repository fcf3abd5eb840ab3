#pragma once
/// What a `verify` run found, as plain records: one row per (model, implementation) with its counts per
/// outcome and per verdict rule, and one record per case. The terminal table, `--json` and `--junit`
/// (the XML CI systems read) are all written from these records.
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "harness/equivalence.h"

namespace fb {

/// One judged (or not judged) case of one implementation.
struct verify_case_record {
  std::string model;
  std::string implementation;
  int index = 0;             ///< case index within the run
  json config;
  outcome result = outcome::not_run;
  verdict_rule rule = verdict_rule::none;
  std::string message;       ///< empty when passed
  double max_abs = 0;
  double worst_ratio = 0;    ///< worst |error| / bound (<= 1 passes)
  double seconds = 0;        ///< wall time of the check
  std::string repro;         ///< command that replays it
  std::string bundle;        ///< repro bundle directory, when one was saved
};

/// Counts of one (model, implementation) row.
struct verify_row {
  std::string checked_against;
  int passed = 0, incorrect = 0, failed = 0, not_judged = 0;
  std::map<verdict_rule, int> by_rule;  ///< cases that got a verdict, by the rule that decided them
  double max_abs = 0, worst_ratio = 0, candidate_vs_fp64 = 0, reference_vs_fp64 = 0, max_conditioning = 0;
  double seconds = 0;  ///< total check time [seconds]
  [[nodiscard]] int judged() const { return passed + incorrect + failed; }
};

/// The whole run.
struct verify_report {
  std::string device;
  uint64_t seed = 0;
  double atol = 0, rtol = 0;
  std::map<std::pair<std::string, std::string>, verify_row> rows;  ///< keyed by (model, implementation)
  std::vector<verify_case_record> cases;
  std::vector<std::string> notes;  ///< what was not checked and why (printed, and in the JSON)

  /// Adds a case to its row and to `cases`.
  void add(const verify_case_record& record, const check_result& r, const std::string& checked_against);
  /// Sums over every row.
  [[nodiscard]] verify_row totals() const;
};

/// The Markdown table plus the summary lines (what a person at a terminal reads).
void print_verify_table(const verify_report& report, std::ostream& out);
/// `--json FILE`: schema "fusebench-verify", version 1.
[[nodiscard]] json verify_report_to_json(const verify_report& report);
/// `--junit FILE`: one <testsuite> per model, one <testcase> per case and implementation; incorrect
/// cases are <failure>, exceptions <error>, cases not judged <skipped>.
void write_junit(const verify_report& report, std::ostream& out);

}  // namespace fb
