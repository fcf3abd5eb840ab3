#pragma once
/// The equivalence contract of SPEC §2: is an implementation equivalent to its expectation on a case?
/// Checks shape and dtype, values (allclose), NaN/Inf, BatchNorm side effects, input immutability,
/// full writes (poisoned outputs and guard canaries), determinism, and the absence of caching.
#include <functional>
#include <string>
#include <vector>

#include "harness/model_entry.h"
#include "harness/outcome.h"

namespace fb {

/// Why a case is not equivalent. A case can fail several checks; all are reported.
enum class mismatch {
  shape,             ///< output shape or dtype differs
  values,            ///< |got - ref| > atol + rtol*|ref| somewhere
  nonfinite,         ///< NaN or Inf where the reference is finite
  unwritten,         ///< an output element still holds the poison pattern
  out_of_bounds,     ///< a guard canary around the output was overwritten
  buffers,           ///< BatchNorm running buffers after the call differ from the reference's
  input_modified,    ///< an input or parameter changed (checksum)
  nondeterministic,  ///< two calls on identical inputs differ bitwise
  stale,             ///< a second call with new inputs and parameters is wrong (cached state)
};
[[nodiscard]] std::string_view to_string(mismatch m);

/// Elementwise error of `got` against `ref` (SPEC §2: max abs, max rel, worst index).
struct error_stats {
  double max_abs = 0;
  double max_rel = 0;
  int64_t worst_index = -1;  ///< flat index of the largest violation ratio |d| / (atol + rtol|ref|)
  std::vector<int64_t> worst_coord;
  double got_at_worst = 0;
  double ref_at_worst = 0;
  int64_t violations = 0;  ///< elements outside tolerance (non-finite included)
  int64_t nonfinite = 0;   ///< NaN/Inf where the reference is finite
};

/// Tolerances and which checks to run.
struct check_options {
  double atol = 1e-5;
  double rtol = 1e-5;
  bool check_determinism = true;
  bool check_fresh_call = true;
};

/// What the candidate is compared with: an fp32 expectation (the gate) and an fp64 one (statistics).
struct expectation {
  std::string name;  ///< "reference" or "oracle"
  std::function<ref::forward_result(const model_case&)> fp32;
  std::function<ref::forward_result(const model_case&)> fp64;
};

/// The verdict on one case.
struct check_result {
  outcome result = outcome::not_run;
  std::vector<mismatch> mismatches;
  std::string message;         ///< human summary: first failing check and where
  verdict_rule rule = verdict_rule::none;  ///< which rule decided the output's values
  error_stats vs_expected;     ///< candidate vs the fp32 expectation (the gate)
  double candidate_vs_fp64 = 0;  ///< max abs error of the candidate against fp64
  double expected_vs_fp64 = 0;   ///< max abs error of the fp32 expectation against fp64
  double conditioning = 0;       ///< model_entry::conditioning of the case (0: no normalisation)
  [[nodiscard]] bool has(mismatch m) const;
};

/// Elementwise comparison with torch.allclose semantics (NaN equal to NaN; Inf must match).
[[nodiscard]] error_stats compare_values(const at::Tensor& got, const at::Tensor& ref, double atol, double rtol);

/// A 64-bit FNV-1a checksum of a tensor's bytes (any device).
[[nodiscard]] uint64_t checksum(const at::Tensor& t);

/// The expectation used for fused implementations: the libtorch reference in fp32 with TF32 off
/// on `device`, and the libtorch reference in fp64 on the same device.
[[nodiscard]] expectation reference_expectation(const model_entry& model, device_kind device);
/// The libtorch reference in fp64 on `device`, as the expectation of the fp32 reference on shapes
/// too large for the loop oracle ("the fp32 reference against the fp64 reference", SPEC §2).
[[nodiscard]] expectation fp64_reference_expectation(const model_entry& model, device_kind device);
/// The expectation used to validate the reference itself: the fp64 loop oracle (CPU).
[[nodiscard]] expectation oracle_expectation(const model_entry& model);
/// The reference in fp32 as an implementation (to be checked against the oracle or fp64).
[[nodiscard]] implementation reference_implementation(const model_entry& model, device_kind device);

/// Runs every check of SPEC §2 on `first`; `fresh` (same config, new parameters and inputs) probes
/// caching. An exception from the candidate marks only this case `failed`, with its message.
[[nodiscard]] check_result check_equivalence(const model_entry& model, const implementation& candidate,
                                             const model_case& first, const model_case& fresh,
                                             const expectation& expected, const check_options& options = {});

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
