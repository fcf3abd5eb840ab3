#pragma once
/// One registry entry per model: id, KernelBench number, schema, default config, fuzz domain,
/// generators, reference, oracle and fused implementations. Everything is type-erased over the parsed
/// config so that no code outside harness/models/<id>.cpp names a model; a model file fills a
/// typed_model (harness/model/typed_model.h) and erases it into one of these.
#include <ATen/ATen.h>

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/model/arithmetic_unit.h"
#include "harness/model/config_schema.h"
#include "harness/model/fuzz_domain.h"
#include "harness/model/inputs.h"
#include "reference/common.h"

// The generators' type, declared here so that the registry entry does not pull RapidCheck into every
// harness file; generators.h and typed_model.h include it where a generator is made or drawn from.
namespace rc {
template <typename T>
class Gen;
}  // namespace rc

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

/// A config parsed once (model_entry::parse): its canonical JSON and the model's typed, validated config
/// behind it (opaque here; only the model's own erased functions read it). Every per-config function of
/// a model_entry takes one of these, so a config is parsed and validated once, where it enters.
struct parsed_config {
  json canonical;
  std::shared_ptr<const void> typed;  ///< never null: only model_entry::parse makes one
};

/// One call's inputs: the parsed config, parameters and buffers (state_dict keys), input tensor.
struct model_case {
  parsed_config config;
  tensor_map params;
  at::Tensor input;
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
  std::function<std::size_t(const parsed_config& config)> workspace_bytes;
  /// REQUIRES: every tensor of `c` and `slots` is on `device`, float32, contiguous.
  std::function<void(const model_case& c, output_slots& slots)> run;
  /// Why the implementation declines a config ("" when it takes it); unset: it takes every valid
  /// config. Only outside plug-ins decline (their own limits); a declined case is never passed.
  std::function<std::string(const parsed_config& config)> declines;
  /// Loaded from a plug-in library (--plugin): its cases run in a child process under --isolate.
  bool external = false;
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
/// The fp64 rule's unit (README "Verdict rules"): which output elements share one allowance. Where a
/// normalisation amplifies fp32 rounding, it does so per group (a LayerNorm row, a BatchNorm channel):
/// PyTorch's largest |ref32 - ref64| within an element's group, times `factor`, is that element's
/// allowance. A group is never the whole output unless the model's normalisation spans it: a
/// candidate off by PyTorch's worst error everywhere must fail where PyTorch is that far off in one
/// group only.
struct fp64_allowance_unit {
  /// Output dimensions a group spans: an element's group is every element that agrees with it on
  /// the other dimensions. {4}: a row of the last dimension of an N C D H W output (LayerNorm over
  /// W); {0, 2, 3, 4}: a channel (BatchNorm); empty: each element is a group of its own.
  std::vector<int64_t> group_dims;
  /// Multiplies the group's largest reference error; above 1 only with a measured reason in `why`.
  double factor = 1.0;
  std::string why;  ///< the normalisation that makes the group, or the measurement behind the factor
};

struct model_entry {
  std::string id;
  int kernelbench_id = 0;
  std::string description;
  /// The fuzz domain, declared once (harness/model/fuzz_domain.h): its generator, `list` and the self-test
  /// read it. Its input_offset is the centre of the `offset` input distribution: 100 (SPEC §2) unless
  /// the fp32 reference itself cannot meet the gate there against fp64 (the domain is only valid
  /// where the reference is).
  domain::convt_domain fuzz_domain;
  std::vector<field_info> schema;
  json default_config;
  /// Parses, fills defaults, validates; throws ref::config_error naming the field.
  std::function<parsed_config(const json&)> parse;
  /// parse(j).canonical.
  std::function<json(const json&)> canonicalize;
  std::function<std::vector<int64_t>(const parsed_config&)> input_shape;
  std::function<std::vector<int64_t>(const parsed_config&)> output_shape;
  /// Elements of the transposed-convolution output (the problem-size axis of reports).
  std::function<double(const parsed_config&)> problem_size;
  /// Buffers that forward updates (training-mode BatchNorm); empty otherwise.
  std::function<std::vector<std::string>(const parsed_config&)> buffer_names;
  std::function<tensor_map(const parsed_config&, ref::param_init, uint64_t seed)> make_parameters;
  /// libtorch reference; device and dtype follow the input.
  std::function<ref::forward_result(const parsed_config&, const tensor_map&, const at::Tensor&)> reference;
  /// fp64 loop oracle on the CPU.
  std::function<ref::forward_result(const parsed_config&, const tensor_map&, const at::Tensor&)> oracle;
  /// fp32 rounding amplification of the reference on a case (ref::normalisation_conditioning);
  /// 0 for models without a normalisation. Computed on the tensors' device.
  std::function<double(const parsed_config&, const tensor_map&, const at::Tensor&)> conditioning;
  /// The fp64 rule's unit for the output (the BatchNorm buffers, one value per channel, are judged per
  /// element with the same factor). Default: per element, factor 1.
  fp64_allowance_unit allowance_unit;
  /// Optional: the forward in fp64 with the normalisation's input (the convolution's output) rounded
  /// once to fp32, as the fp32 module rounds it. |this - fp64| is what that one rounding does to
  /// each output; its largest value in an element's group joins the allowance (README "Verdict
  /// rules"): a kernel that rounds the convolution once, correctly, lands there, whatever PyTorch's
  /// luck on a small group. Null for models whose normalisation groups are large.
  std::function<ref::forward_result(const parsed_config&, const tensor_map&, const at::Tensor&)> fp64_rounded_conv;
  /// MACs of the transposed convolution (decides whether the oracle is affordable).
  std::function<double(const parsed_config&)> conv_macs;
  /// Random valid configs within a budget (RapidCheck; shrinks to small configs).
  std::function<rc::Gen<json>(const fuzz_budget&)> gen_config;
  /// Configs that cross the fused kernels' internal boundaries (work items, chunks, tiles), which
  /// random sizes of the general generator rarely reach; declared beside the fused implementations.
  /// Empty when the model declares none. The fuzz draws from it for a quarter of its cases.
  std::function<rc::Gen<json>(const fuzz_budget&)> gen_boundary_config;
  std::vector<implementation> fused;
  std::function<work_estimate(const parsed_config&)> fused_work;
  /// The `standard` sweep: the default plus scaled variants.
  std::function<std::vector<sweep_point>()> sweep;
};

}  // namespace fb
