#include "harness/verify/equivalence.h"

#include <cmath>
#include <iomanip>
#include <cstring>
#include <limits>
#include <sstream>

#include "harness/device/device.h"

namespace fb {
namespace {

/// The candidate produced an output of the wrong shape or dtype (only adapters can: fused kernels
/// write into harness-allocated outputs).
struct shape_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string coord_string(const std::vector<int64_t>& coord) {
  std::string s = "[";
  for (std::size_t i = 0; i < coord.size(); ++i) s += (i ? "," : "") + std::to_string(coord[i]);
  return s + "]";
}

bool bitwise_equal(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type() || a.device() != b.device()) return false;
  // Compared as bytes on the tensors' device (NaN payloads included; no copy of the output to the host).
  return a.contiguous().reshape(-1).view(at::kByte).equal(b.contiguous().reshape(-1).view(at::kByte));
}

/// RAII: deterministic cuDNN for the reference adapter (its conv_transpose is cuDNN's dgrad, which
/// may pick non-deterministic algorithms otherwise), restored afterwards.
class deterministic_cudnn_guard {
 public:
  deterministic_cudnn_guard()
      : m_prev_deterministic(at::globalContext().deterministicCuDNN()),
        m_prev_benchmark(at::globalContext().benchmarkCuDNN()) {
    at::globalContext().setDeterministicCuDNN(true);
    at::globalContext().setBenchmarkCuDNN(false);
  }
  ~deterministic_cudnn_guard() {
    at::globalContext().setDeterministicCuDNN(m_prev_deterministic);
    at::globalContext().setBenchmarkCuDNN(m_prev_benchmark);
  }

 private:
  bool m_prev_deterministic, m_prev_benchmark;
};

/// RAII: the verification references run libtorch's native CUDA convolution, not cuDNN's.
/// Measured on an H100 (reports/nvidia-h100-80gb-hbm3/NOTES.md): cuDNN's fp32 transposed
/// convolution, TF32 off, missed the 1e-5 gate against fp64 on 10 of 988 in-domain fuzz cases
/// (errors up to 5.3e-5), while libtorch's native path passed all 988, so a cuDNN reference cannot
/// judge a kernel at 1e-5. Same ops, same fp32 semantics; only the algorithm differs. The timed
/// `ref`/`ref_tf32` of `bench` keep cuDNN: that is what users run. Restored afterwards.
class reference_cudnn_guard {
 public:
  reference_cudnn_guard() : m_prev(at::globalContext().userEnabledCuDNN()) {
    at::globalContext().setUserEnabledCuDNN(false);
  }
  ~reference_cudnn_guard() { at::globalContext().setUserEnabledCuDNN(m_prev); }

 private:
  bool m_prev;
};

struct run_output {
  guarded_output out;
  tensor_map buffers;
};

run_output run_once(const model_entry& model, const implementation& impl, const model_case& c,
                    at::IntArrayRef out_shape) {
  const at::Device dev = to_device(impl.device);
  run_output r{make_guarded_output(out_shape, impl.device), {}};
  output_slots slots;
  slots.output = r.out.output;
  for (const std::string& name : model.buffer_names(c.config)) slots.buffers[name] = c.params.at(name).clone();
  const std::size_t ws = impl.workspace_bytes ? impl.workspace_bytes(c.config) : 0;
  slots.workspace = at::empty({static_cast<int64_t>(ws)}, at::TensorOptions().dtype(at::kByte).device(dev));
  impl.run(c, slots);
  synchronize(impl.device);
  r.buffers = slots.buffers;
  return r;
}

std::vector<uint64_t> checksums(const model_case& c) {
  std::vector<uint64_t> sums{checksum(c.input)};
  for (const auto& [name, t] : c.params) sums.push_back(checksum(t));
  return sums;
}

}  // namespace

std::string_view to_string(mismatch m) {
  switch (m) {
    case mismatch::shape: return "shape";
    case mismatch::values: return "values";
    case mismatch::nonfinite: return "nonfinite";
    case mismatch::unwritten: return "unwritten";
    case mismatch::out_of_bounds: return "out_of_bounds";
    case mismatch::buffers: return "buffers";
    case mismatch::input_modified: return "input_modified";
    case mismatch::nondeterministic: return "nondeterministic";
    case mismatch::stale: return "stale";
  }
  return "values";
}

bool check_result::has(mismatch m) const {
  for (mismatch x : mismatches)
    if (x == m) return true;
  return false;
}

error_stats compare_values(const at::Tensor& got_in, const at::Tensor& ref_in, double atol, double rtol,
                           const at::Tensor& allowance_in) {
  TORCH_CHECK(got_in.numel() == ref_in.numel(), "compare_values: ", got_in.numel(), " vs ", ref_in.numel(), " elements");
  // Elementwise on the expectation's device, in fp64 (outputs of millions of elements on a GPU would
  // cost a device-to-host copy and a host loop per comparison); only scalars come back.
  const at::Device dev = ref_in.device();
  const at::Tensor r = ref_in.detach().reshape(-1).to(at::kDouble);
  const at::Tensor g = got_in.detach().reshape(-1).to(dev, at::kDouble);
  error_stats s;
  if (r.numel() == 0) return s;
  const double inf = std::numeric_limits<double>::infinity();
  const at::Tensor ref_finite = r.isfinite(), got_finite = g.isfinite(), both = ref_finite.logical_and(got_finite);
  const at::Tensor d = at::where(both, (g - r).abs(), at::zeros_like(r));
  at::Tensor bound = atol + rtol * r.abs();
  if (allowance_in.defined()) {
    TORCH_CHECK(allowance_in.numel() == r.numel(), "compare_values: allowance of ", allowance_in.numel(), " elements");
    const at::Tensor a = allowance_in.detach().reshape(-1).to(dev, at::kDouble);
    bound = bound + at::where(a.isfinite(), a, at::zeros_like(a));
  }
  // Per element: the bound uses this element's |ref|, never a tensor-wide scale. torch.allclose's
  // non-finite rules: NaN matches NaN, an infinity matches itself, anything else non-finite violates.
  const at::Tensor finite_ratio = at::where(d == 0, at::zeros_like(d), d / bound);  // bound 0, d > 0: inf
  const at::Tensor nan_ok = r.isnan().logical_and(g.isnan());
  const at::Tensor inf_ok = r.isinf().logical_and(g == r);
  const at::Tensor ratio = at::where(both, finite_ratio,
                                     at::where(nan_ok.logical_or(inf_ok), at::zeros_like(d), at::full_like(d, inf)));
  s.nonfinite = ref_finite.logical_and(got_finite.logical_not()).sum().item<int64_t>();
  s.elements = r.numel();
  s.finite_expected = ref_finite.sum().item<int64_t>();
  s.nan_both = nan_ok.sum().item<int64_t>();
  s.violations = (ratio > 1).sum().item<int64_t>();
  s.max_abs = d.max().item<double>();
  s.max_rel = at::where(both.logical_and(r != 0), d / r.abs(), at::zeros_like(d)).max().item<double>();
  s.worst_index = ratio.argmax().item<int64_t>();
  s.worst_ratio = ratio[s.worst_index].item<double>();
  s.got_at_worst = g[s.worst_index].item<double>();
  s.ref_at_worst = r[s.worst_index].item<double>();
  s.bound_at_worst = bound[s.worst_index].item<double>();
  int64_t rest = s.worst_index;
  s.worst_coord.assign(got_in.dim(), 0);
  for (int64_t k = got_in.dim() - 1; k >= 0; --k) {
    s.worst_coord[k] = rest % got_in.size(k);
    rest /= got_in.size(k);
  }
  return s;
}

namespace {
/// |a - ref64| with non-finite differences as 0 (non-finite elements are judged apart), at each
/// element its group's largest.
at::Tensor group_max_error(const at::Tensor& a, const at::Tensor& r64, const fp64_allowance_unit& unit) {
  at::Tensor error = (a.detach().to(r64.device(), at::kDouble).reshape(r64.sizes()) - r64).abs();
  error = at::where(error.isfinite(), error, at::zeros_like(error));
  if (!unit.group_dims.empty() && error.numel() > 0)
    error = error.amax(unit.group_dims, /*keepdim=*/true).expand(r64.sizes());
  return error;
}
}  // namespace

at::Tensor fp64_allowance(const at::Tensor& ref32, const at::Tensor& ref64, const fp64_allowance_unit& unit,
                          const at::Tensor& rounded) {
  const at::Tensor r64 = ref64.detach().to(at::kDouble);
  for (const int64_t d : unit.group_dims)
    if (d < 0 || d >= r64.dim())
      throw std::invalid_argument("fp64 allowance: group dimension " + std::to_string(d) + " of a " +
                                  std::to_string(r64.dim()) + "-D output");
  at::Tensor error = group_max_error(ref32, r64, unit);
  // What one correct rounding of the normalisation's input does in this group (the model's
  // fp64_rounded_conv): the part of PyTorch's error that every fp32 implementation shares.
  if (rounded.defined()) error = at::maximum(error, group_max_error(rounded, r64, unit));
  return unit.factor * error;
}

value_judgement judge_values(const at::Tensor& got, const at::Tensor& ref32, const at::Tensor& ref64, double atol,
                             double rtol, bool fp64_rule, const fp64_allowance_unit& unit, const at::Tensor& rounded) {
  value_judgement j;
  const error_stats reference = compare_values(ref32, ref64, atol, rtol);
  j.reference_error = reference.max_abs;
  if (reference.violations == 0 || !fp64_rule) {
    j.rule = verdict_rule::fp32_reference;
    j.stats = compare_values(got, ref32, atol, rtol);
    if (j.stats.violations == 0 || !fp64_rule) return j;
    // The fp32 window is centred on PyTorch's rounding, not on the truth: a candidate more accurate
    // than PyTorch but on the other side of the fp64 value can leave it (measured: #15 at 4.8e-6 from
    // fp64 failed against a reference 1.4e-5 off). Such a case goes to the fp64 rule below, whose
    // window is centred on the truth and no wider than the fp32 rule's widest point.
  }
  // The allowance is the fp32 reference's largest error in the element's group (the model's unit: a
  // LayerNorm row, a BatchNorm channel): PyTorch's rounding lands on other elements than a kernel's
  // (another summation order), so its error at one element says little about the next, but a
  // normalisation amplifies fp32 rounding per group, so its worst error in a group says how much this
  // group amplifies. Not the whole output's worst: a candidate off by that at every element would pass
  // where PyTorch is that far off in one group only. From the reference alone, never the candidate.
  j.rule = verdict_rule::fp64_allowance;
  const at::Tensor r64 = ref64.detach().to(at::kDouble);
  j.stats = compare_values(got, r64, atol, rtol, fp64_allowance(ref32, r64, unit, rounded));
  return j;
}

value_judgement judge_output(const at::Tensor& got, const expected_results& expected, const model_entry& model,
                             const check_options& checks) {
  return judge_values(got, expected.fp32.output, expected.fp64.output, checks.atol, checks.rtol, checks.fp64_rule,
                      model.allowance_unit, expected.fp64_rounded_conv);
}

value_judgement judge_buffer(const at::Tensor& got, const expected_results& expected, const std::string& name,
                             const model_entry& model, const check_options& checks) {
  fp64_allowance_unit per_channel;  // a buffer holds one value per channel: each is its channel's group
  per_channel.factor = model.allowance_unit.factor;
  return judge_values(got, expected.fp32.buffers.at(name), expected.fp64.buffers.at(name), checks.atol, checks.rtol,
                      checks.fp64_rule, per_channel);
}

uint64_t checksum(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kCPU).contiguous();
  const auto* p = static_cast<const unsigned char*>(c.data_ptr());
  uint64_t h = 1469598103934665603ull;
  for (int64_t i = 0; i < c.numel() * static_cast<int64_t>(c.element_size()); ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

guarded_output make_guarded_output(at::IntArrayRef shape, device_kind device) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  const auto as_int = [](uint32_t bits) {
    int32_t v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  };
  at::Tensor storage = at::full({n + 2 * canary_elements}, as_int(canary_bits), at::kInt);
  storage.narrow(0, canary_elements, n).fill_(as_int(poison_bits));
  storage = storage.to(to_device(device)).view(at::kFloat);
  return {storage, storage.narrow(0, canary_elements, n).view(shape)};
}

bool guarded_output::canaries_intact() const {
  // Only the two guard zones come to the host, not the output between them.
  const at::Tensor bits = storage.view(at::kInt);
  const int64_t n = bits.numel();
  const at::Tensor guards = at::cat({bits.narrow(0, 0, canary_elements), bits.narrow(0, n - canary_elements, canary_elements)})
                                .to(at::kCPU);
  const int32_t* p = guards.data_ptr<int32_t>();
  int32_t canary;
  std::memcpy(&canary, &canary_bits, sizeof canary);
  for (int64_t i = 0; i < guards.numel(); ++i)
    if (p[i] != canary) return false;
  return true;
}

int64_t guarded_output::unwritten_count() const {
  int32_t poison;
  std::memcpy(&poison, &poison_bits, sizeof poison);
  return output.contiguous().view(at::kInt).eq(poison).sum().item<int64_t>();
}

expected_results reference_expectations(const model_entry& model, const model_case& c, device_kind device) {
  const reference_cudnn_guard cudnn;
  const model_case d = on_device(c, device);
  expected_results e;
  {
    const ref::tf32_guard strict(false);
    e.fp32 = model.reference(d.config, d.params, d.input);
  }
  e.fp64 = model.reference(d.config, d.params, d.input.to(at::kDouble));
  if (model.fp64_rounded_conv) e.fp64_rounded_conv = model.fp64_rounded_conv(d.config, d.params, d.input.to(at::kDouble)).output;
  return e;
}

implementation reference_implementation(const model_entry& model, device_kind device) {
  implementation impl;
  impl.name = "reference";
  impl.device = device;
  impl.workspace_bytes = [](const parsed_config&) { return std::size_t{0}; };
  impl.run = [&model](const model_case& c, output_slots& slots) {
    const ref::tf32_guard strict(false);
    const deterministic_cudnn_guard deterministic;
    const reference_cudnn_guard cudnn;
    ref::forward_result r = model.reference(c.config, c.params, c.input);
    if (r.output.sizes() != slots.output.sizes() || r.output.scalar_type() != at::kFloat) {
      std::ostringstream os;
      os << std::setprecision(9);  // 9 digits tell any two floats apart (6 printed equal values)
      os << "reference output is " << r.output.sizes() << " " << r.output.scalar_type() << ", expected "
         << slots.output.sizes() << " Float";
      throw shape_error(os.str());
    }
    slots.output.copy_(r.output);
    for (auto& [name, t] : slots.buffers) t.copy_(r.buffers.at(name));
  };
  return impl;
}

namespace {

/// Describes the worst element of a values violation under its rule.
std::string describe_violation(const value_judgement& j, const check_options& opt) {
  std::ostringstream os;
  os << std::setprecision(9);
  const error_stats& s = j.stats;
  os << s.violations << " elements outside atol " << opt.atol << " + rtol " << opt.rtol;
  if (j.rule == verdict_rule::fp64_allowance) os << " + the reference's largest |ref32 - ref64| in the element's group";
  os << " (rule " << to_string(j.rule) << "); worst at " << coord_string(s.worst_coord) << ": got " << s.got_at_worst
     << ", " << (j.rule == verdict_rule::fp64_allowance ? "fp64 " : "fp32 ") << "reference " << s.ref_at_worst
     << ", |error| " << std::abs(s.got_at_worst - s.ref_at_worst) << " > bound " << s.bound_at_worst
     << " (max abs " << s.max_abs << ", worst error/bound " << s.worst_ratio << ")";
  return os.str();
}

}  // namespace

check_result check_equivalence(const model_entry& model, const implementation& candidate, const judged_case& c,
                               const check_options& opt) {
  check_result r;
  std::ostringstream msg;
  const auto fail = [&](mismatch m, const std::string& what) {
    if (!r.has(m)) r.mismatches.push_back(m);
    if (msg.tellp() > 0) msg << "; ";
    msg << to_string(m) << ": " << what;
  };
  try {
    if (candidate.declines) {
      if (std::string why = candidate.declines(c.first.config); !why.empty()) {
        r.result = outcome::declined;
        r.message = "declined by the plug-in: " + why;
        return r;
      }
    }
    const model_case c1 = on_device(c.first, candidate.device);
    const std::vector<uint64_t> before = checksums(c1);
    const expected_results& exp1 = c.first_expected;
    const at::IntArrayRef out_shape = exp1.fp32.output.sizes();
    const std::vector<int64_t> inferred = model.output_shape(c.first.config);
    if (out_shape != at::IntArrayRef(inferred)) {
      std::ostringstream os;
      os << std::setprecision(9);
      os << "shape inference says " << at::IntArrayRef(inferred) << ", the reference gives " << out_shape;
      fail(mismatch::shape, os.str());
    }

    const run_output out1 = run_once(model, candidate, c1, out_shape);
    r.candidate_output = {out1.out.output, out1.buffers};
    if (!out1.out.canaries_intact()) fail(mismatch::out_of_bounds, "a guard canary around the output was overwritten");
    if (const int64_t n = out1.out.unwritten_count(); n > 0)
      fail(mismatch::unwritten, std::to_string(n) + " of " + std::to_string(out1.out.output.numel()) +
                                    " output elements were never written");
    if (checksums(c1) != before) fail(mismatch::input_modified, "an input or parameter changed during the call");

    const value_judgement values = judge_output(out1.out.output, exp1, model, opt);
    r.rule = values.rule;
    r.vs_expected = values.stats;
    r.expected_vs_fp64 = values.reference_error;
    r.candidate_vs_fp64 = compare_values(out1.out.output, exp1.fp64.output, opt.atol, opt.rtol).max_abs;
    if (r.vs_expected.nonfinite > 0 && !r.has(mismatch::unwritten))
      fail(mismatch::nonfinite, std::to_string(r.vs_expected.nonfinite) + " NaN/Inf where the reference is finite");
    if (r.vs_expected.violations > 0 && !r.has(mismatch::unwritten)) fail(mismatch::values, describe_violation(values, opt));
    for (const std::string& name : model.buffer_names(c.first.config)) {
      const value_judgement b = judge_buffer(out1.buffers.at(name), exp1, name, model, opt);
      if (b.stats.violations > 0) {
        std::ostringstream os;
        os << std::setprecision(9);
        os << name << " differs (rule " << to_string(b.rule) << "): got " << b.stats.got_at_worst << ", reference "
           << b.stats.ref_at_worst << " at " << coord_string(b.stats.worst_coord);
        fail(mismatch::buffers, os.str());
      }
    }

    if (opt.check_determinism) {
      const run_output out2 = run_once(model, candidate, c1, out_shape);
      bool same = bitwise_equal(out1.out.output, out2.out.output);
      for (const auto& [name, t] : out1.buffers) same = same && bitwise_equal(t, out2.buffers.at(name));
      if (!same) fail(mismatch::nondeterministic, "two calls on identical inputs gave different bits");
    }
    // A second call with new inputs and parameters probes caching; it says something only when the first
    // call's values were right (a plain tolerance failure fails the second call too, and is no cache).
    if (opt.check_fresh_call && !r.has(mismatch::values) && !r.has(mismatch::buffers) && !r.has(mismatch::unwritten)) {
      const model_case c2 = on_device(c.fresh, candidate.device);
      const expected_results& exp2 = c.fresh_expected;
      const run_output out3 = run_once(model, candidate, c2, exp2.fp32.output.sizes());
      const value_judgement v2 = judge_output(out3.out.output, exp2, model, opt);
      std::string buffer_errors;
      for (const std::string& name : model.buffer_names(c.fresh.config))
        if (judge_buffer(out3.buffers.at(name), exp2, name, model, opt).stats.violations > 0)
          buffer_errors += (buffer_errors.empty() ? "" : ", ") + name;
      const int64_t unwritten = out3.out.unwritten_count();
      if (v2.stats.violations > 0 || unwritten > 0 || !buffer_errors.empty()) {
        // Stale: the second call returned the first call's answer. Anything else is an error on the
        // second case's own data, reported as such.
        const bool repeated = bitwise_equal(out3.out.output, out1.out.output);
        std::ostringstream os;
        os << std::setprecision(9);
        os << "second call (new inputs and parameters): " << v2.stats.violations << " elements off under rule "
           << to_string(v2.rule) << ", worst at " << coord_string(v2.stats.worst_coord) << ": got "
           << v2.stats.got_at_worst << ", reference " << v2.stats.ref_at_worst << " (max abs " << v2.stats.max_abs
           << ")" << (unwritten > 0 ? ", " + std::to_string(unwritten) + " unwritten" : std::string())
           << (buffer_errors.empty() ? std::string() : ", buffers differ: " + buffer_errors);
        if (repeated) {
          fail(mismatch::stale, "the second call returned the first call's output bit for bit: state kept from the "
                                "first call; " + os.str());
        } else if (v2.stats.violations > 0 || unwritten > 0) {
          fail(v2.stats.violations > 0 ? mismatch::values : mismatch::unwritten, os.str());
        } else {
          fail(mismatch::buffers, os.str());
        }
      }
    }
    r.result = r.mismatches.empty() ? outcome::passed : outcome::incorrect;
  } catch (const shape_error& e) {
    fail(mismatch::shape, e.what());
    r.result = outcome::incorrect;
  } catch (const std::exception& e) {
    r.result = outcome::failed;
    msg << (msg.tellp() > 0 ? "; " : "") << "exception: " << e.what();
  }
  r.message = msg.str();
  return r;
}

check_result check_reference_semantics(const model_entry& model, const model_case& c, device_kind device) {
  check_result r;
  std::ostringstream msg;
  const auto fail = [&](mismatch m, const std::string& what) {
    if (!r.has(m)) r.mismatches.push_back(m);
    if (msg.tellp() > 0) msg << "; ";
    msg << to_string(m) << ": " << what;
  };
  try {
    const double tol = fp64_semantics_tolerance;
    const ref::forward_result oracle = model.oracle(c.config, c.params, c.input);
    const reference_cudnn_guard cudnn;
    const model_case d = on_device(c, device);
    const ref::forward_result got = model.reference(d.config, d.params, d.input.to(at::kDouble));
    r.rule = verdict_rule::fp64_oracle;
    if (got.output.sizes() != oracle.output.sizes()) {
      std::ostringstream os;
      os << std::setprecision(9);
      os << "the reference gives " << got.output.sizes() << ", the oracle " << oracle.output.sizes();
      fail(mismatch::shape, os.str());
    } else {
      r.vs_expected = compare_values(got.output, oracle.output, tol, tol);
      r.candidate_vs_fp64 = r.vs_expected.max_abs;
      if (r.vs_expected.violations > 0) {
        std::ostringstream os;
        os << std::setprecision(9);
        os << r.vs_expected.violations << " elements of the fp64 reference outside " << tol << " of the fp64 oracle; worst at "
           << coord_string(r.vs_expected.worst_coord) << ": reference " << r.vs_expected.got_at_worst << ", oracle "
           << r.vs_expected.ref_at_worst;
        fail(mismatch::values, os.str());
      }
    }
    for (const std::string& name : model.buffer_names(c.config)) {
      const error_stats b = compare_values(got.buffers.at(name), oracle.buffers.at(name), tol, tol);
      if (b.violations > 0) {
        std::ostringstream os;
        os << std::setprecision(9);
        os << name << ": reference " << b.got_at_worst << ", oracle " << b.ref_at_worst << " at " << coord_string(b.worst_coord);
        fail(mismatch::buffers, os.str());
      }
    }
    r.result = r.mismatches.empty() ? outcome::passed : outcome::incorrect;
  } catch (const std::exception& e) {
    r.result = outcome::failed;
    msg << (msg.tellp() > 0 ? "; " : "") << "exception: " << e.what();
  }
  r.message = msg.str();
  return r;
}

}  // namespace fb
