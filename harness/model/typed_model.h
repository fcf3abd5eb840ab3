#pragma once
/// What a model file fills (harness/models/<id>.cpp): a typed_model over its config struct C, with the
/// reference hooks, fuzz domain, fused implementations and sweep; erase() turns it into the registry's
/// model_entry. Only model files (and the helpers they share) include this header: it brings RapidCheck
/// in, the erased entry does not.
#include <rapidcheck.h>

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/model/generators.h"
#include "harness/model/model_entry.h"

namespace fb {

/// A typed model definition; `erase()` turns it into a model_entry. Model files fill one of these.
template <class C>
struct typed_implementation {
  std::string name;
  device_kind device;
  std::function<std::size_t(const C&)> workspace_bytes;
  std::function<void(const C&, const model_case&, output_slots&)> run;
};

template <class C>
struct typed_model {
  std::string id;
  int kernelbench_id = 0;
  std::string description;
  domain::convt_domain fuzz_domain;  ///< declared once, in harness/models/<id>_domain.h
  config_schema<C> schema;
  std::function<void(const C&)> validate;
  std::function<std::vector<int64_t>(const C&)> input_shape;
  std::function<std::vector<int64_t>(const C&)> output_shape;
  std::function<double(const C&)> conv_output_elements;  ///< elements of the transposed-conv output
  std::function<double(const C&)> conv_macs;             ///< multiply-adds of the transposed conv
  std::function<std::vector<std::string>(const C&)> buffer_names = [](const C&) { return std::vector<std::string>{}; };
  std::function<tensor_map(const C&, ref::param_init, uint64_t)> make_parameters;
  std::function<ref::forward_result(const C&, const tensor_map&, const at::Tensor&)> reference;
  std::function<ref::forward_result(const C&, const tensor_map&, const at::Tensor&)> oracle;
  std::function<double(const C&, const tensor_map&, const at::Tensor&)> conditioning;  ///< optional
  fp64_allowance_unit allowance_unit;  ///< see model_entry::allowance_unit
  std::function<ref::forward_result(const C&, const tensor_map&, const at::Tensor&)> fp64_rounded_conv;  ///< optional
  /// Random valid configs: drawn from fuzz_domain (gen::config_from_domain) unless a model sets its own.
  std::function<rc::Gen<C>(const fuzz_budget&)> gen_config;
  /// See model_entry::gen_boundary_config (optional).
  std::function<rc::Gen<C>(const fuzz_budget&)> gen_boundary_config;
  std::vector<typed_implementation<C>> fused;
  std::function<work_estimate(const C&)> fused_work;
  std::function<std::vector<std::pair<std::string, C>>(const C& base)> sweep_variants;
};

/// The free functions every reference/<model>.h declares for its config C.
template <class C>
struct reference_functions {
  void (*validate)(const C&);
  std::vector<int64_t> (*input_shape)(const C&);
  std::vector<int64_t> (*output_shape)(const C&);
  std::vector<int64_t> (*conv_output_shape)(const C&);
  tensor_map (*make_parameters)(const C&, ref::param_init, uint64_t);
  ref::forward_result (*forward)(const C&, const tensor_map&, const at::Tensor&);
  ref::forward_result (*oracle)(const C&, const tensor_map&, const at::Tensor&);
};

/// Multiply-adds of a transposed convolution: every input element meets C_out * k^dims weights.
[[nodiscard]] inline double conv_transpose_macs(const std::vector<int64_t>& input_shape, int64_t out_channels,
                                                int64_t kernel_size, int dims) {
  double n = static_cast<double>(out_channels);
  for (int64_t s : input_shape) n *= static_cast<double>(s);
  for (int d = 0; d < dims; ++d) n *= static_cast<double>(kernel_size);
  return n;
}

/// Elements of a (B, C_out, spatial...) tensor.
[[nodiscard]] inline double elements(int64_t batch, int64_t channels, const std::vector<int64_t>& spatial) {
  double n = static_cast<double>(batch) * static_cast<double>(channels);
  for (int64_t s : spatial) n *= static_cast<double>(s);
  return n;
}

/// Wires a model's reference functions into its entry, and derives the transposed convolution's
/// output size and multiply-adds from them (every config has batch_size, out_channels and
/// kernel_size; `spatial_dims` is 2 or 3).
template <class C>
void use_reference(typed_model<C>& m, const reference_functions<C>& f, int spatial_dims) {
  m.validate = f.validate;
  m.input_shape = f.input_shape;
  m.output_shape = f.output_shape;
  m.conv_output_elements = [shape = f.conv_output_shape](const C& c) {
    return elements(c.batch_size, c.out_channels, shape(c));
  };
  m.conv_macs = [shape = f.input_shape, spatial_dims](const C& c) {
    return conv_transpose_macs(shape(c), c.out_channels, c.kernel_size, spatial_dims);
  };
  m.make_parameters = f.make_parameters;
  m.reference = f.forward;
  m.oracle = f.oracle;
}

/// Sweep variants of `base` that change only the batch size: one {label, batch} row each.
template <class C>
[[nodiscard]] std::vector<std::pair<std::string, C>> batch_variants(
    const C& base, std::initializer_list<std::pair<const char*, int64_t>> rows) {
  std::vector<std::pair<std::string, C>> variants;
  for (const auto& [label, batch] : rows) {
    C c = base;
    c.batch_size = batch;
    variants.emplace_back(label, c);
  }
  return variants;
}

/// The typed config behind a parsed_config of model C. REQUIRES: `p` was made by C's model_entry::parse.
template <class C>
[[nodiscard]] const C& typed_config(const parsed_config& p) {
  return *static_cast<const C*>(p.typed.get());
}

/// Erases the config type: `parse` is the one place a JSON config becomes a typed, validated C; every
/// other function reads the typed config that the parsed_config hands through.
template <class C>
model_entry erase(typed_model<C> m) {
  auto schema = std::make_shared<config_schema<C>>(m.schema);
  model_entry e;
  e.id = m.id;
  e.kernelbench_id = m.kernelbench_id;
  e.description = m.description;
  e.fuzz_domain = m.fuzz_domain;
  e.schema = schema->describe();
  e.default_config = schema->to_json(C{});
  e.parse = [schema, validate = m.validate](const json& j) {
    C c = schema->from_json(j);
    validate(c);
    auto typed = std::make_shared<const C>(std::move(c));
    return parsed_config{schema->to_json(*typed), typed};
  };
  e.canonicalize = [parse = e.parse](const json& j) { return parse(j).canonical; };
  const auto of = [](const parsed_config& p) -> const C& { return typed_config<C>(p); };
  e.input_shape = [of, f = m.input_shape](const parsed_config& p) { return f(of(p)); };
  e.output_shape = [of, f = m.output_shape](const parsed_config& p) { return f(of(p)); };
  e.problem_size = [of, f = m.conv_output_elements](const parsed_config& p) { return f(of(p)); };
  e.conv_macs = [of, f = m.conv_macs](const parsed_config& p) { return f(of(p)); };
  e.buffer_names = [of, f = m.buffer_names](const parsed_config& p) { return f(of(p)); };
  e.make_parameters = [of, f = m.make_parameters](const parsed_config& p, ref::param_init init, uint64_t seed) {
    return f(of(p), init, seed);
  };
  e.reference = [of, f = m.reference](const parsed_config& p, const tensor_map& t, const at::Tensor& x) {
    return f(of(p), t, x);
  };
  e.oracle = [of, f = m.oracle](const parsed_config& p, const tensor_map& t, const at::Tensor& x) {
    return f(of(p), t, x);
  };
  e.allowance_unit = m.allowance_unit;
  if (m.fp64_rounded_conv)
    e.fp64_rounded_conv = [of, f = m.fp64_rounded_conv](const parsed_config& p, const tensor_map& t,
                                                        const at::Tensor& x) { return f(of(p), t, x); };
  e.conditioning = [of, f = m.conditioning](const parsed_config& p, const tensor_map& t, const at::Tensor& x) {
    return f ? f(of(p), t, x) : 0.0;
  };
  if (!m.gen_config)
    m.gen_config = [schema, d = m.fuzz_domain](const fuzz_budget& b) { return gen::config_from_domain(d, *schema, b); };
  e.gen_config = [schema, g = m.gen_config](const fuzz_budget& b) {
    return rc::gen::map(g(b), [schema](const C& c) { return schema->to_json(c); });
  };
  if (m.gen_boundary_config)
    e.gen_boundary_config = [schema, g = m.gen_boundary_config](const fuzz_budget& b) {
      return rc::gen::map(g(b), [schema](const C& c) { return schema->to_json(c); });
    };
  for (const typed_implementation<C>& impl : m.fused) {
    implementation ie;
    ie.name = impl.name;
    ie.device = impl.device;
    ie.workspace_bytes = [of, f = impl.workspace_bytes](const parsed_config& p) { return f(of(p)); };
    // The case carries its parsed config: no JSON parsing inside a timed call.
    ie.run = [of, f = impl.run](const model_case& c, output_slots& s) { f(of(c.config), c, s); };
    e.fused.push_back(std::move(ie));
  }
  if (m.fused_work) e.fused_work = [of, f = m.fused_work](const parsed_config& p) { return f(of(p)); };
  e.sweep = [schema, f = m.sweep_variants]() {
    std::vector<sweep_point> points{{"default", schema->to_json(C{})}};
    if (f)
      for (auto& [label, c] : f(C{})) points.push_back({label, schema->to_json(c)});
    return points;
  };
  return e;
}

}  // namespace fb
