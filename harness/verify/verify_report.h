#pragma once
/// What a `verify` run found, as plain records: one row per (model, implementation) with its counts per
/// outcome and per verdict rule, and one record per case. The terminal table, `--json` and `--junit`
/// (the XML CI systems read) are all written from these records.
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "harness/results/shard.h"
#include "harness/verify/equivalence.h"

namespace fb {

/// One judged (or not judged) case of one implementation.
struct verify_case_record {
  std::string model;
  std::string implementation;
  int index = 0;             ///< case index within the run
  json config;
  uint64_t case_seed = 0;    ///< parameters and inputs (--case-seed replays them)
  std::string inputs;        ///< input distribution, e.g. "uniform"
  std::string params;        ///< "random" or "default" (PyTorch's initialisation)
  outcome result = outcome::not_run;
  verdict_rule rule = verdict_rule::none;
  std::string message;       ///< empty when passed
  double max_abs = 0;
  double worst_ratio = 0;    ///< worst |error| / bound (<= 1 passes)
  double seconds = 0;        ///< wall time of the check (a fused row's: the case's preparation included)
  std::string repro;         ///< command that replays it
  std::string bundle;        ///< repro bundle directory, when one was saved
};

/// Counts of one (model, implementation) row.
struct verify_row {
  std::string checked_against;
  int passed = 0, incorrect = 0, failed = 0, not_judged = 0;
  int declined = 0;  ///< an outside plug-in declined the case (its own limits): shown, never passed
  std::map<verdict_rule, int> by_rule;  ///< cases that got a verdict, by the rule that decided them
  double max_abs = 0, worst_ratio = 0, candidate_vs_fp64 = 0, reference_vs_fp64 = 0, max_conditioning = 0;
  double seconds = 0;  ///< total check time [seconds]
  [[nodiscard]] int judged() const { return passed + incorrect + failed; }
  /// Every case of the row, judged or not.
  [[nodiscard]] int cases() const { return judged() + not_judged + declined; }
};

/// What a run covers. A fuzz run's cases are a pure function of its scope and seed, so two runs of
/// one scope and seed draw the same cases, whichever shard of them each runs.
struct verify_scope {
  std::string mode = "fuzz";        ///< "fuzz" (--cases per model), "config" (--config), "bundle" (a repro bundle)
  std::string device;               ///< "cpu" or "cuda": the fuzz budget, and so the cases, depend on it
  std::vector<std::string> models;  ///< in run order
  int cases_per_model = 0;          ///< --cases
  std::string inputs;               ///< --inputs: every case draws only this distribution; "" all
  std::string params;               ///< --params: only this regime; "" both
  std::string case_size;            ///< --case-size: "" the device's own sizes, else cpu or oracle
  friend bool operator==(const verify_scope& a, const verify_scope& b) {
    return a.mode == b.mode && a.device == b.device && a.models == b.models &&
           a.cases_per_model == b.cases_per_model && a.inputs == b.inputs && a.params == b.params &&
           a.case_size == b.case_size;
  }
};

/// The whole run.
struct verify_report {
  std::string device;      ///< "cpu" or the GPU's name
  std::string git_commit;  ///< of the fusebench that ran it
  std::string source_digest;  ///< of the sources it was built from (harness/process/provenance.h); "" in older reports
  uint64_t seed = 0;
  double atol = 0, rtol = 0;
  bool fp64_rule = true;   ///< false under --strict-fp32: judged against the fp32 reference alone
  verify_scope scope;
  shard_spec shard;        ///< the part of the scope's cases this report holds (1/1: all)
  bool complete = true;    ///< false only for a merge that was allowed to miss parts
  std::string incomplete_reason;
  std::map<std::pair<std::string, std::string>, verify_row> rows;  ///< keyed by (model, implementation)
  std::vector<verify_case_record> cases;
  std::vector<std::string> notes;  ///< what was not checked and why (printed, and in the JSON)
  /// The plug-ins' implementations the run was asked to judge ("plugin:<name>", sorted, each once):
  /// shards of one run load the same ones, and a run where one of them judged nothing fails.
  std::vector<std::string> plugins;

  /// Adds a case to its row and to `cases`.
  void add(const verify_case_record& record, const check_result& r, const std::string& checked_against);
  /// Sums over every row.
  [[nodiscard]] verify_row totals() const;
};

/// One verdict as a JSON line (verify --case-stream, the isolated plug-in child's output): the case
/// record plus what its row keeps of the check.
[[nodiscard]] json verdict_to_json(const verify_case_record& record, const check_result& r);
/// Reads verdict_to_json's line back; throws std::invalid_argument naming `source` and the field.
[[nodiscard]] std::pair<verify_case_record, check_result> verdict_from_json(const json& line, const std::string& source);

/// The table plus the summary lines (what a person at a terminal reads): aligned columns that fit 120
/// characters with a legend, or with `wide` the Markdown table of every column.
void print_verify_table(const verify_report& report, std::ostream& out, bool wide = false);
/// The distinct (model, case index) pairs the report holds [count]: a case with two implementations
/// checked on it is one case and two verdicts.
[[nodiscard]] int64_t distinct_cases(const verify_report& report);
/// The cases of the report's scope that its shard holds [count] (fuzz runs; other modes: its cases).
[[nodiscard]] int64_t held_cases(const verify_report& report);
/// The closing verdict line where the table's summary does not say it all, and the exit status of a
/// run that produced this report: 0 every case passed (or its shard holds no case at all), 1 a case
/// failed or was not judged, nothing was judged, a plug-in of `plugins` judged nothing, or the report is
/// incomplete.
[[nodiscard]] int print_verdict(const verify_report& report, std::ostream& out);
/// `--json FILE`: schema "fusebench-verify", version 2 (version 1 had no git_commit, fp64_rule, scope,
/// shard, complete, incomplete_reason, nor the cases' case_seed, inputs and params).
[[nodiscard]] json verify_report_to_json(const verify_report& report);
/// Reads what verify_report_to_json wrote (version 2). Throws std::invalid_argument naming `source`
/// and the field for another schema or version, or a missing or mistyped field.
[[nodiscard]] verify_report verify_report_from_json(const json& doc, const std::string& source);
/// One report of parts of one fuzz run, holding rules.target: rows summed (counts, seconds) and
/// maximised (errors, conditioning), cases in the order one process would have run them. Throws
/// merge_error for parts that are not of one run (scope, seed, tolerances, fp64 rule; GPU and commit unless
/// allowed), overlapping, missing or incomplete parts (unless allowed), and a case outside its part.
[[nodiscard]] verify_report merge_verify_reports(const std::vector<std::pair<std::string, verify_report>>& parts,
                                                 const merge_rules& rules);
/// `--junit FILE`: one <testsuite> per model, one <testcase> per case and implementation; incorrect
/// cases are <failure>, exceptions <error>, cases not judged <skipped>.
void write_junit(const verify_report& report, std::ostream& out);

}  // namespace fb
