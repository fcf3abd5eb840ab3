#pragma once
/// The plain record every printer formats: a results file regrouped per model and per config, with
/// speedups, intervals and statuses already decided, so printers only format (cf. Google
/// Benchmark's BenchmarkReporter::Run).
#include <optional>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/stats/ratio_interval.h"

namespace fb::report {

/// Implementation names with a fixed role; every other name is a fused implementation.
inline constexpr std::string_view ref_impl = "ref";            ///< libtorch fp32, TF32 off: the exact reference
inline constexpr std::string_view ref_tf32_impl = "ref_tf32";  ///< libtorch with TF32 allowed: informational
/// Config label of the default config, used by the summary, the geomean and the speedup chart. A
/// label "default/<variant>" (e.g. "default/cpu-small", the default scaled down for a CPU run) is the
/// default of its run too: a run holds one default per model, whatever it was scaled to.
inline constexpr std::string_view default_config_label = "default";

/// True for "default" and "default/<variant>".
[[nodiscard]] bool is_default_label(std::string_view label);

/// True for implementations other than ref, ref_tf32 and the peers ("peer:<name>", results.h).
[[nodiscard]] bool is_fused_implementation(std::string_view implementation);

/// One implementation's measurement in one row.
struct impl_cell {
  std::string implementation;           ///< e.g. "ref", "fused_cuda"
  fb::outcome outcome = fb::outcome::not_run;  ///< verification result
  std::string message;                  ///< why it did not pass
  double max_abs_error = 0.0;           ///< against the reference
  double max_rel_error = 0.0;           ///< against the reference
  double tolerance_ratio = 0.0;         ///< max |err| / (atol + rtol*|ref|) at verification; NaN when unknown
  std::optional<verdict_rule> decided_by;  ///< verdict rule of the verification; nullopt when not recorded
  std::optional<timing_stats> stats;    ///< absent when not timed
  std::optional<floor_estimate> floor;  ///< absent when no floor is known
  std::optional<peer_details> peer;     ///< peer rows only: torch's version, share within tolerance, compile time
  /// True when it passed and has a median, i.e. its time may be shown and compared.
  [[nodiscard]] bool is_timed() const { return outcome == fb::outcome::passed && stats.has_value(); }
};

/// What the report says about a fused implementation in one row.
enum class fused_status {
  ok,          ///< passed and timed: speedups shown
  fail,        ///< incorrect or failed: never a speedup
  skipped,     ///< not_run, not_supported, invalid_config or declined: never a speedup
  impossible,  ///< passed, but faster than the roofline floor: the timing or the floor is wrong
  untimed,     ///< passed but has no timing
  missing,     ///< this config has no result for this implementation
};

/// Display word of a status: "ok", "FAIL", "SKIP", "IMPOSSIBLE", "untimed", "missing".
[[nodiscard]] std::string_view to_string(fused_status status);

/// A fused implementation in one row, with its speedups over the references.
struct fused_entry {
  impl_cell cell;                                  ///< its measurement (implementation set even when missing)
  fused_status status = fused_status::missing;     ///< what the report says about it
  std::optional<stats::ratio_estimate> vs_ref;       ///< median(ref) / median(fused); only when status is ok or impossible
  std::optional<stats::ratio_estimate> vs_ref_tf32;  ///< median(ref_tf32) / median(fused); same rule
  /// median(fastest peer within tolerance) / median(fused); same rule, and a peer that passed.
  std::optional<stats::ratio_estimate> vs_fastest_passing_peer;
  /// median(fastest timed peer, within tolerance or not) / median(fused); same rule.
  std::optional<stats::ratio_estimate> vs_fastest_peer;
};

/// One config of one model.
struct sweep_row {
  std::string config_label;              ///< e.g. "default"
  double problem_size = 0.0;             ///< size axis [count]
  nlohmann::json config;                 ///< the config of the row (of its first case)
  std::optional<impl_cell> ref;          ///< the exact reference
  std::optional<impl_cell> ref_tf32;     ///< the TF32 reference
  std::vector<fused_entry> fused;        ///< one per model_report::fused_implementations, same order
  std::vector<impl_cell> peers;          ///< the peer rows ("peer:<name>"), by name
  std::optional<impl_cell> fastest_passing_peer;  ///< the fastest peer within tolerance, if any
  std::optional<impl_cell> fastest_peer;          ///< the fastest timed peer, within tolerance or not
  std::vector<impl_cell> all;            ///< every implementation of the row, in canonical order (ref, ref_tf32, fused...)
};

/// One model: its sweep, ordered by problem size.
struct model_report {
  std::string model;                               ///< registry id
  int kernelbench_id = 0;                          ///< KernelBench level-2 number
  std::vector<std::string> fused_implementations;  ///< sorted names; empty for a reference-only model
  std::vector<std::string> peer_implementations;   ///< sorted peer names ("peer:eager", ...); empty without peers
  std::vector<sweep_row> rows;                     ///< by problem size, then config label
  /// The row whose label is_default_label ("default", "default/cpu-small"), if any.
  [[nodiscard]] const sweep_row* get_default_row() const;
};

/// Geometric mean of the default-config speedups of one fused implementation over the models.
struct geomean_entry {
  std::string implementation;  ///< fused implementation name
  std::optional<double> vs_ref;       ///< geomean of median(ref)/median(fused); nullopt when no model counts
  int models_vs_ref = 0;              ///< models that count (status ok and ref timed) [count]
  std::optional<double> vs_ref_tf32;  ///< same against ref_tf32
  int models_vs_ref_tf32 = 0;         ///< [count]
};

/// How many fused cases one verdict rule decided.
struct rule_count {
  std::optional<verdict_rule> rule;  ///< nullopt: not recorded (results file version 1)
  int cases = 0;                     ///< fused cases [count]
};

/// A chart drawn for the report, for printers that link to it.
struct chart_link {
  std::string title;  ///< e.g. "speedup", "convt2d_mul_gap: time vs size"
  std::string model;  ///< the model it belongs to; empty for the speedup chart
  std::string path;   ///< relative to the report folder, e.g. "charts/speedup.png"
};

/// Everything a printer needs.
struct report_model {
  run_environment environment;          ///< copied from the results file
  run_status status;                    ///< complete, or why not: printers show it prominently
  std::size_t cases = 0;                ///< cases in the results file [count]
  std::vector<model_report> models;     ///< by KernelBench number
  std::vector<geomean_entry> geomeans;  ///< one per fused implementation name
  std::vector<rule_count> rules;        ///< fused cases per verdict rule, in all_verdict_rules order, then unrecorded
  std::vector<chart_link> charts;       ///< charts drawn beside the report; empty when none (filled by `report`)
  /// "INCOMPLETE RUN: interrupted by SIGINT after 3 of 12 cases", or "" for a complete run.
  [[nodiscard]] std::string get_incomplete_note() const;
};

/// Regroups a results file. A file read by load_results holds each (model, config_label,
/// implementation) once; a results_file built in memory with repeats keeps the last one. Speedups use stats::ratio_interval with its default, fixed seed, so
/// the report of a file is always the same.
[[nodiscard]] report_model build_report_model(const results_file& results);

}  // namespace fb::report
