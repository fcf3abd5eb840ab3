#pragma once
/// One registry entry per model: id, KernelBench number, schema, default config, generators,
/// reference, oracle and fused implementations. Everything is type-erased over the JSON config
/// so that no code outside harness/models/<id>.cpp names a model.
#include <ATen/ATen.h>
#include <rapidcheck.h>

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/arithmetic_unit.h"
#include "harness/config_schema.h"
#include "harness/inputs.h"
#include "reference/common.h"

namespace fb {

using ref::tensor_map;

/// Where an implementation runs.
enum class device_kind { cpu, cuda };
[[nodiscard]] std::string_view to_string(device_kind d);
[[nodiscard]] at::Device to_device(device_kind d);

/// Case-size limits of the fuzz domain (SPEC §2): ~64K output elements on a CPU, ~4M on a GPU.
struct fuzz_budget {
  int64_t max_output_elements;  ///< elements of the model's largest intermediate (the conv output)
  int64_t max_macs;             ///< multiply-adds of the transposed convolution
  /// CPU property tests and CPU verify.
  static fuzz_budget cpu() { return {64 * 1024, 40'000'000}; }
  /// Cases checked against the fp64 loop oracle: smaller still, the oracle is a plain loop nest.
  static fuzz_budget oracle() { return {16 * 1024, 4'000'000}; }
  /// GPU fuzzing.
  static fuzz_budget cuda() { return {4 * 1024 * 1024, 2'000'000'000}; }
};

/// A config parsed once: its canonical JSON and the model's typed config behind it (opaque here; only
/// the model's own erased functions read it).
struct parsed_config {
  json canonical;
  std::shared_ptr<const void> typed;
};

/// One call's inputs: canonical config, parameters and buffers (state_dict keys), input tensor.
/// `typed_config` is the parsed config (gen::make_case fills it): implementations read it instead of
/// parsing the JSON again, so no parsing happens inside a timed call.
struct model_case {
  json config;
  tensor_map params;
  at::Tensor input;
  std::shared_ptr<const void> typed_config;
};

/// Where an implementation writes. The harness allocates all of it (so it can poison outputs and
/// guard them with canaries); the implementation only fills it.
struct output_slots {
  at::Tensor output;     ///< preallocated with the reference's shape, poisoned with NaN
  tensor_map buffers;    ///< BatchNorm buffers (copies of the case's), updated in place in training mode
  at::Tensor workspace;  ///< uint8 scratch of workspace_bytes(config) bytes (may be empty)
};

/// A way of computing a model: the reference adapter, a host executor, a CUDA kernel.
struct implementation {
  std::string name;    ///< "reference", "fused_host", "fused_cuda"
  device_kind device;  ///< tensors in model_case and output_slots live here
  std::function<std::size_t(const json& config)> workspace_bytes;
  /// REQUIRES: every tensor of `c` and `slots` is on `device`, float32, contiguous.
  std::function<void(const model_case& c, output_slots& slots)> run;
};

/// The minimal traffic and arithmetic of the fused algorithm: the roofline floor (SPEC §3).
struct work_estimate {
  double bytes = 0;  ///< bytes that must cross device memory [bytes]
  double flops = 0;  ///< floating-point operations [FLOP]
  arithmetic_unit unit = arithmetic_unit::fp32_fma;  ///< what the flops run on
};

/// A named config of a timing sweep.
struct sweep_point {
  std::string label;  ///< "default", "batch x0.5", ...
  json config;
};

/// The registry entry.
struct model_entry {
  std::string id;
  int kernelbench_id = 0;
  std::string description;
  std::string fuzz_domain;  ///< one line for `list`
  /// Centre of the `offset` input distribution. 100 (SPEC §2) unless the fp32 reference itself
  /// cannot meet the gate there against fp64: the domain is only valid where the reference is.
  double input_offset = 100.0;
  std::vector<field_info> schema;
  json default_config;
  /// Parses, fills defaults, validates; throws ref::config_error naming the field.
  std::function<parsed_config(const json&)> parse;
  /// parse(j).canonical.
  std::function<json(const json&)> canonicalize;
  std::function<std::vector<int64_t>(const json&)> input_shape;
  std::function<std::vector<int64_t>(const json&)> output_shape;
  /// Elements of the transposed-convolution output (the problem-size axis of reports).
  std::function<double(const json&)> problem_size;
  /// Buffers that forward updates (training-mode BatchNorm); empty otherwise.
  std::function<std::vector<std::string>(const json&)> buffer_names;
  std::function<tensor_map(const json&, ref::param_init, uint64_t seed)> make_parameters;
  /// libtorch reference; device and dtype follow the input.
  std::function<ref::forward_result(const json&, const tensor_map&, const at::Tensor&)> reference;
  /// fp64 loop oracle on the CPU.
  std::function<ref::forward_result(const json&, const tensor_map&, const at::Tensor&)> oracle;
  /// fp32 rounding amplification of the reference on a case (ref::normalisation_conditioning);
  /// 0 for models without a normalisation. Computed on the tensors' device.
  std::function<double(const json&, const tensor_map&, const at::Tensor&)> conditioning;
  /// MACs of the transposed convolution (decides whether the oracle is affordable).
  std::function<double(const json&)> conv_macs;
  /// Random valid configs within a budget (RapidCheck; shrinks to small configs).
  std::function<rc::Gen<json>(const fuzz_budget&)> gen_config;
  /// Configs that cross the fused kernels' internal boundaries (work items, chunks, tiles), which
  /// random sizes of the general generator rarely reach; declared beside the fused implementations.
  /// Empty when the model declares none. The fuzz draws from it for a quarter of its cases.
  std::function<rc::Gen<json>(const fuzz_budget&)> gen_boundary_config;
  std::vector<implementation> fused;
  std::function<work_estimate(const json&)> fused_work;
  /// The `standard` sweep: the default plus scaled variants.
  std::function<std::vector<sweep_point>()> sweep;
};

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
  std::string fuzz_domain;
  config_schema<C> schema;
  double input_offset = 100.0;
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

/// Erases the config type: every function parses the JSON config through the schema.
template <class C>
model_entry erase(typed_model<C> m) {
  auto schema = std::make_shared<config_schema<C>>(m.schema);
  auto parse = [schema, validate = m.validate](const json& j) {
    C c = schema->from_json(j);
    validate(c);
    return c;
  };
  model_entry e;
  e.id = m.id;
  e.kernelbench_id = m.kernelbench_id;
  e.description = m.description;
  e.fuzz_domain = m.fuzz_domain;
  e.input_offset = m.input_offset;
  e.schema = schema->describe();
  e.default_config = schema->to_json(C{});
  e.parse = [parse, schema](const json& j) {
    auto typed = std::make_shared<const C>(parse(j));
    return parsed_config{schema->to_json(*typed), typed};
  };
  e.canonicalize = [parse, schema](const json& j) { return schema->to_json(parse(j)); };
  e.input_shape = [parse, f = m.input_shape](const json& j) { return f(parse(j)); };
  e.output_shape = [parse, f = m.output_shape](const json& j) { return f(parse(j)); };
  e.problem_size = [parse, f = m.conv_output_elements](const json& j) { return f(parse(j)); };
  e.conv_macs = [parse, f = m.conv_macs](const json& j) { return f(parse(j)); };
  e.buffer_names = [parse, f = m.buffer_names](const json& j) { return f(parse(j)); };
  e.make_parameters = [parse, f = m.make_parameters](const json& j, ref::param_init init, uint64_t seed) {
    return f(parse(j), init, seed);
  };
  e.reference = [parse, f = m.reference](const json& j, const tensor_map& p, const at::Tensor& x) {
    return f(parse(j), p, x);
  };
  e.oracle = [parse, f = m.oracle](const json& j, const tensor_map& p, const at::Tensor& x) {
    return f(parse(j), p, x);
  };
  e.conditioning = [parse, f = m.conditioning](const json& j, const tensor_map& p, const at::Tensor& x) {
    return f ? f(parse(j), p, x) : 0.0;
  };
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
    ie.workspace_bytes = [parse, f = impl.workspace_bytes](const json& j) { return f(parse(j)); };
    // The case carries its parsed config (gen::make_case): no JSON parsing inside a timed call. A case
    // built by hand without one is parsed here.
    ie.run = [parse, f = impl.run](const model_case& c, output_slots& s) {
      if (c.typed_config) {
        f(*static_cast<const C*>(c.typed_config.get()), c, s);
      } else {
        f(parse(c.config), c, s);
      }
    };
    e.fused.push_back(std::move(ie));
  }
  if (m.fused_work) e.fused_work = [parse, f = m.fused_work](const json& j) { return f(parse(j)); };
  e.sweep = [schema, f = m.sweep_variants]() {
    std::vector<sweep_point> points{{"default", schema->to_json(C{})}};
    if (f)
      for (auto& [label, c] : f(C{})) points.push_back({label, schema->to_json(c)});
    return points;
  };
  return e;
}

}  // namespace fb
