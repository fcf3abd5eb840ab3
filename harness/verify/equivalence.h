#pragma once
/// The equivalence contract (README "The equivalence contract"): is an implementation equivalent to
/// the libtorch reference on a case? Checks shape and dtype, values under the verdict rules, NaN/Inf,
/// BatchNorm side effects, input immutability, full writes (poisoned outputs and guard canaries),
/// determinism, and the absence of caching.
#include <string>
#include <vector>

#include "harness/model/model_entry.h"
#include "harness/results/outcome.h"
#include "harness/verify/tolerance.h"

namespace fb {

/// Why a case is not equivalent. A case can fail several checks; all are reported.
enum class mismatch {
  shape,             ///< output shape or dtype differs
  values,            ///< an element is outside the tolerance of the rule that decides the case
  nonfinite,         ///< NaN or Inf where the expectation is finite
  unwritten,         ///< an output element still holds the poison pattern
  out_of_bounds,     ///< a guard canary around the output was overwritten
  buffers,           ///< BatchNorm running buffers after the call differ from the expectation
  input_modified,    ///< an input or parameter changed (checksum)
  nondeterministic,  ///< two calls on identical inputs differ bitwise
  stale,             ///< a second call with new inputs and parameters returned the first call's output
};
[[nodiscard]] std::string_view to_string(mismatch m);

/// Elementwise error of `got` against an expectation (max abs, max rel, worst index).
struct error_stats {
  double max_abs = 0;
  double max_rel = 0;        ///< max |d| / |ref| over elements with ref != 0 (huge near zero: see worst_ratio)
  double worst_ratio = 0;    ///< max |d| / bound: <= 1 passes; the meaningful figure near zero
  int64_t worst_index = -1;  ///< flat index of worst_ratio
  std::vector<int64_t> worst_coord;
  double got_at_worst = 0;
  double ref_at_worst = 0;
  double bound_at_worst = 0;  ///< the tolerance bound at worst_index (atol + rtol*|ref| [+ allowance])
  int64_t violations = 0;  ///< elements outside tolerance (non-finite included)
  int64_t nonfinite = 0;   ///< NaN/Inf where the expectation is finite
  int64_t elements = 0;    ///< elements compared [count]
  int64_t finite_expected = 0;  ///< elements whose expectation is finite: the only ones whose values were compared
  int64_t nan_both = 0;    ///< elements NaN in both (they match, as in torch.allclose(equal_nan=True); no value compared)
};

/// Tolerances and which checks to run.
struct check_options {
  double atol = default_atol;
  double rtol = default_rtol;
  bool check_determinism = true;
  bool check_fresh_call = true;
  /// false: every case is judged against the fp32 reference alone, never by the fp64 rule (verify
  /// --strict-fp32: with atol = rtol = 0 it asks for bitwise agreement with libtorch's fp32 result).
  bool fp64_rule = true;
};

/// What a candidate is judged against on one call: the libtorch reference in fp32 (TF32 off, libtorch's
/// native convolution on CUDA) and the same ops in fp64, on the same device. Output and buffers.
struct expected_results {
  ref::forward_result fp32;
  ref::forward_result fp64;
  /// model_entry::fp64_rounded_conv's output where the model has one (else undefined).
  at::Tensor fp64_rounded_conv;
};

/// A case ready to judge candidates: the two calls (the first, and a fresh one with new parameters and
/// inputs that probes caching) with their expectations, built once and shared by every candidate.
struct judged_case {
  model_case first;
  model_case fresh;
  expected_results first_expected;
  expected_results fresh_expected;
};

/// The verdict on one case.
struct check_result {
  outcome result = outcome::not_run;
  std::vector<mismatch> mismatches;
  std::string message;              ///< human summary: first failing check and where
  verdict_rule rule = verdict_rule::none;  ///< which rule decided the output's values
  error_stats vs_expected;          ///< candidate against the expectation of `rule`
  double candidate_vs_fp64 = 0;     ///< max abs error of the candidate against fp64
  double expected_vs_fp64 = 0;      ///< max abs error of the fp32 reference against fp64
  double conditioning = 0;          ///< model_entry::conditioning of the case (a diagnostic; 0: none)
  ref::forward_result candidate_output;  ///< what the candidate's first call produced (for repro bundles)
  [[nodiscard]] bool has(mismatch m) const;
};

/// Elementwise comparison with torch.allclose semantics (NaN equal to NaN; Inf must match):
/// |got - ref| <= atol + rtol*|ref| (+ allowance, elementwise, when given).
[[nodiscard]] error_stats compare_values(const at::Tensor& got, const at::Tensor& ref, double atol, double rtol,
                                         const at::Tensor& allowance = at::Tensor());

/// The fp64 rule's allowance of every element: factor * max |ref32_j - ref64_j| over the element's
/// group (`unit`), from the reference alone; fp64, on ref64's device. Throws std::invalid_argument
/// for a group dimension the tensor does not have.
/// `rounded` (optional: model_entry::fp64_rounded_conv's output): each element's allowance is then the
/// larger of that and factor * max |rounded_j - ref64_j| over its group.
[[nodiscard]] at::Tensor fp64_allowance(const at::Tensor& ref32, const at::Tensor& ref64, const fp64_allowance_unit& unit,
                                        const at::Tensor& rounded = at::Tensor());

/// The values of one tensor judged under the verdict rules. When the fp32 reference is within
/// atol/rtol of fp64 everywhere, the candidate is first judged against the fp32 reference
/// (verdict_rule::fp32_reference). Otherwise, or when the candidate misses that window, it is judged
/// against fp64 with the fp32 reference's largest error in the element's group as its allowance
/// (fp64_allowance): |got_i - ref64_i| <= atol + rtol*|ref64_i| + factor * max_{j in group(i)}
/// |ref32_j - ref64_j| (fp64_allowance_unit: a LayerNorm row, a BatchNorm channel, or the element).
/// The allowance comes from the reference alone. So a candidate's error in a group is never more than
/// the tolerance above PyTorch's own worst error in that group (times the declared factor): the fp32
/// window |got - ref32| <= tol already reaches that far from the truth on the side of PyTorch's
/// rounding; the fp64 window makes it symmetric, so a candidate more accurate than PyTorch never
/// fails for rounding the other way.
struct value_judgement {
  verdict_rule rule = verdict_rule::fp32_reference;
  error_stats stats;            ///< against ref32 (fp32_reference) or ref64 with the allowance
  double reference_error = 0;   ///< max |ref32 - ref64| over the whole tensor (a diagnostic; the allowance is per group)
};
/// With fp64_rule false the fp32 reference is the expectation whatever its accuracy. `unit`: the
/// model's (model_entry::allowance_unit); the default, per element with factor 1, is the strictest.
[[nodiscard]] value_judgement judge_values(const at::Tensor& got, const at::Tensor& ref32, const at::Tensor& ref64,
                                           double atol, double rtol, bool fp64_rule = true,
                                           const fp64_allowance_unit& unit = {},
                                           const at::Tensor& rounded = at::Tensor());

/// A call's output judged as verify judges it: judge_values with the model's group
/// (model_entry::allowance_unit) and its rounding floor (expected.fp64_rounded_conv) at checks'
/// tolerances and rule. Every place that judges an output (verify's two calls, bench's check of the
/// timed outputs, the peer column) calls this, so that none judges by a rule of its own.
[[nodiscard]] value_judgement judge_output(const at::Tensor& got, const expected_results& expected,
                                           const model_entry& model, const check_options& checks);

/// A BatchNorm buffer `name` (one value per channel: each its own group, with the model's factor)
/// judged as verify judges it.
[[nodiscard]] value_judgement judge_buffer(const at::Tensor& got, const expected_results& expected,
                                           const std::string& name, const model_entry& model,
                                           const check_options& checks);

/// A 64-bit FNV-1a checksum of a tensor's bytes (any device).
[[nodiscard]] uint64_t checksum(const at::Tensor& t);

/// The expectations of a case on `device`: the libtorch reference in fp32 and in fp64.
[[nodiscard]] expected_results reference_expectations(const model_entry& model, const model_case& c,
                                                      device_kind device);

/// The fp32 reference as an implementation (TF32 off, deterministic algorithms): the base of the planted
/// doubles, and what `bench` times as `ref`.
[[nodiscard]] implementation reference_implementation(const model_entry& model, device_kind device);

/// Runs every check of the contract on `c.first`; `c.fresh` probes caching. An exception from the
/// candidate marks only this case `failed`, with its message.
[[nodiscard]] check_result check_equivalence(const model_entry& model, const implementation& candidate,
                                             const judged_case& c, const check_options& options = {});

/// Tolerance of the reference's semantics check: the libtorch reference run in fp64 against the fp64
/// loop oracle, two fp64 computations of the same definition, agree to ~1e-13; a semantic mistake
/// (a dropped term, eps twice, a per-channel instead of a per-(b,c) mean) moves results by far more.
inline constexpr double fp64_semantics_tolerance = 1e-9;

/// Checks the reference's semantics on a case: the libtorch reference in fp64 on `device` against the
/// fp64 loop oracle (an independent implementation written from the definitions), output and buffers,
/// at fp64_semantics_tolerance: verdict_rule::fp64_oracle.
[[nodiscard]] check_result check_reference_semantics(const model_entry& model, const model_case& c,
                                                     device_kind device);

/// Bit patterns the harness writes: the poison must be overwritten, the canary must survive.
inline constexpr uint32_t poison_bits = 0x7FC0DEADu;  ///< a quiet NaN with a recognisable payload
inline constexpr uint32_t canary_bits = 0xC2F6CAFEu;  ///< a finite float (-123.4) no kernel writes by chance
inline constexpr int64_t canary_elements = 64;        ///< guard floats before and after the output

/// An output buffer with canaries: `output` is a view into `storage` between two guard zones.
struct guarded_output {
  at::Tensor storage;
  at::Tensor output;
  [[nodiscard]] bool canaries_intact() const;
  [[nodiscard]] int64_t unwritten_count() const;
};
/// Allocates a poisoned, guarded float32 output of `shape` on `device`.
[[nodiscard]] guarded_output make_guarded_output(at::IntArrayRef shape, device_kind device);

}  // namespace fb
