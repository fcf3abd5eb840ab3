#pragma once
/// `compare BASE CUR`: per-case verdicts between two results files, judged against noise with a
/// rank test on the samples plus a minimum effect size.
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/results/results.h"

namespace fb::report {

/// Thresholds of a comparison, and which gaps in CUR are accepted. By default everything that keeps a
/// comparison from covering BASE fails it: a gate that passes an empty or interrupted run gates nothing.
struct compare_settings {
  double alpha = 0.01;               ///< Mann-Whitney p-value below which a difference is real [probability]
  double min_effect = 0.05;          ///< smallest change of the median that counts [fraction]
  bool allow_different_gpu = false;  ///< compare runs whose gpu_name differs
  bool allow_missing = false;        ///< cases of BASE missing from CUR are informational, not a failure
  bool allow_undecided = false;      ///< cases with too few samples to decide are informational, not a failure
  bool allow_incomplete = false;     ///< compare a run marked incomplete (interrupted, failed) instead of refusing it
  bool all_impls = false;            ///< gate the references (ref, ref_tf32) too; by default their changes are information
  std::string base_name = "BASE";    ///< how messages name the baseline, e.g. "BASE (base.json)"
  std::string cur_name = "CUR";      ///< how messages name the current run
};

/// The verdict on one (model, config_label, implementation).
enum class verdict {
  faster,  ///< p < alpha and cur/base < 1 - min_effect
  slower,  ///< p < alpha and cur/base > 1 + min_effect: a regression
  same,    ///< no significant change beyond min_effect, or neither side timed
  undecided,  ///< too few samples for the test to reach p < alpha, or timed on one side only
  missing, ///< in BASE, not in CUR
  added,   ///< in CUR, not in BASE (printed "new")
  fail,    ///< did not pass in CUR; a regression when it passed in BASE
  fixed,   ///< did not pass in BASE, passes in CUR
};

/// "faster", "slower", "same", "undecided", "missing", "new", "fail", "fixed".
[[nodiscard]] std::string_view to_string(verdict v);

/// One matched (or unmatched) case.
struct case_comparison {
  std::string model;           ///< registry id
  std::string config_label;    ///< e.g. "default"
  std::string implementation;  ///< e.g. "fused_cuda"
  std::optional<double> base_median;  ///< [seconds]; nullopt when absent, not passed or not timed
  std::optional<double> cur_median;   ///< [seconds]; same rule
  std::optional<double> ratio;        ///< cur_median / base_median
  std::optional<double> p_value;      ///< two-sided Mann-Whitney p-value; nullopt without samples on both sides
  verdict result = verdict::same;     ///< the verdict
  bool regression = false;            ///< slower, or passed in BASE and not in CUR
  bool gated = true;                  ///< an implementation under test (fused, plug-ins), or --all-impls: it can fail
  bool failing = false;               ///< fails the comparison (exit 1): a regression, or missing/undecided unless allowed
  std::string note;                   ///< why, for missing/undecided/fail/same-without-test; empty otherwise
  /// "model/config_label/implementation".
  [[nodiscard]] std::string get_name() const;
};

/// All verdicts of a comparison, BASE order first, then cases new in CUR.
struct comparison {
  std::vector<case_comparison> cases;  ///< one per distinct key
  compare_settings settings;           ///< thresholds used
  /// True when any gated case is a regression (slower, or newly failing).
  [[nodiscard]] bool has_regression() const;
  /// True when any case fails the comparison: a regression, or a missing or undecided case that the
  /// settings do not allow (exit status 1).
  [[nodiscard]] bool has_failure() const;
  /// True when no case can fail the comparison (only references or peers, without --all-impls):
  /// nothing was judged, which is not a pass (exit status 1).
  [[nodiscard]] bool judged_nothing() const;
  /// Number of cases with verdict `v` [count].
  [[nodiscard]] std::size_t count(verdict v) const;
  /// Number of cases with verdict `v` that can fail the comparison (`gated`), or that cannot [count].
  [[nodiscard]] std::size_t count(verdict v, bool gated) const;
};

/// Refusal to compare (different GPUs, an incomplete run, bad thresholds): a usage error, exit status 2.
class compare_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Matches cases by (model, config_label, implementation) and judges each. Throws compare_error when
/// the environments' gpu_name differ and settings.allow_different_gpu is false, when either run is
/// marked incomplete and settings.allow_incomplete is false, or when alpha is not in (0, 1) or
/// min_effect is negative.
[[nodiscard]] comparison compare_results(const results_file& base, const results_file& cur,
                                         const compare_settings& settings = {});

/// Markdown table: case, base median, cur median, ratio, p-value, verdict.
void print_comparison_markdown(std::ostream& out, const comparison& c);

/// The verdict line, e.g. "REGRESSION: 2 slower, 1 newly failing; 3 faster, 10 same, ... of 16 cases under
/// test (alpha 0.01, min effect 5%)", "FAIL: no slower case, but CUR does not cover BASE; ..." or "no
/// regression: ...", counting only the cases that can fail the comparison (gated); then a line counting
/// the others (references, peers) as information, if any; then one line per kind of gap of the gated
/// cases (missing, undecided) naming the first and the flag that accepts them.
[[nodiscard]] std::string comparison_summary(const comparison& c);

}  // namespace fb::report
