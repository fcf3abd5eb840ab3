#pragma once
/// RapidCheck generators of the fuzz domain (SPEC §2), drawn from each model's declared domain
/// (harness/model/fuzz_domain.h, harness/models/<id>_domain.h): config_from_domain is every model's general
/// generator; the kernel-boundary generators beside the models draw large_plane_geometry.
#include <rapidcheck.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "harness/model/case_recipe.h"
#include "harness/model/config_schema.h"
#include "harness/model/fuzz_domain.h"
#include "harness/model/inputs.h"
#include "harness/model/model_entry.h"

namespace fb::gen {

/// The sizes every transposed-convolution model draws.
struct convt_geometry {
  int64_t batch = 1;
  int64_t in_channels = 1;
  int64_t out_channels = 1;
  int64_t kernel_size = 1;
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t output_padding = 0;
  std::vector<int64_t> spatial;      ///< input sizes: (D, H, W) or (H, W)
  std::vector<int64_t> spatial_out;  ///< transposed-conv output sizes
};

/// A valid geometry of `domain` within `budget`: kernel, stride, padding (0..kernel, one case in
/// domain.wide_padding_one_in up to PyTorch's bound), output padding over [0, stride), spatial sizes
/// (odd and non-square come naturally), channels drawn independently (so C_in != C_out is common) and
/// batch from the domain's ranges, then cut to the output and MAC budget. `batch_norm_training`: the
/// case runs training-mode BatchNorm, which needs B * D'H'W' > 1.
[[nodiscard]] rc::Gen<convt_geometry> conv_transpose_geometry(const domain::convt_domain& domain,
                                                              bool batch_norm_training, const fuzz_budget& budget);

/// A 2-D geometry whose input planes hold more than `plane_elements` elements (up to `max_multiple`
/// times as many), the kind of case that crosses a kernel's split of a plane into work items or chunks
/// and that the general generator (sides up to 40) never builds. Stride 1 with the padding that keeps
/// the output plane the input's size where the model takes padding (else padding 0); channels and
/// batch small, so the case fits `budget`. When not even one such plane fits the budget, it is the
/// general geometry instead (so the generator works for every budget, the oracle's too).
[[nodiscard]] rc::Gen<convt_geometry> large_plane_geometry(const domain::convt_domain& domain,
                                                           const fuzz_budget& budget, int64_t plane_elements,
                                                           int64_t max_multiple);

namespace detail {
template <class C, class = void>
struct has_stride : std::false_type {};
template <class C>
struct has_stride<C, std::void_t<decltype(&C::stride)>> : std::true_type {};
template <class C, class = void>
struct has_output_padding : std::false_type {};
template <class C>
struct has_output_padding<C, std::void_t<decltype(&C::output_padding)>> : std::true_type {};
template <class C, class = void>
struct has_depth : std::false_type {};
template <class C>
struct has_depth<C, std::void_t<decltype(&C::depth)>> : std::true_type {};
}  // namespace detail

/// A config of the geometry `g`: the sizes every model has (channels, kernel, batch, spatial), and
/// stride, padding, output_padding and depth where the config has those keys. The model's own
/// scalars (eps, multiplier, ...) stay at their defaults for the generator to draw.
template <class C>
[[nodiscard]] C config_of(const convt_geometry& g) {
  C c;
  c.in_channels = g.in_channels;
  c.out_channels = g.out_channels;
  c.kernel_size = g.kernel_size;
  c.batch_size = g.batch;
  if constexpr (detail::has_stride<C>::value) {
    c.stride = g.stride;
    c.padding = g.padding;
  }
  if constexpr (detail::has_output_padding<C>::value) c.output_padding = g.output_padding;
  if constexpr (detail::has_depth<C>::value) {
    c.depth = g.spatial.at(0);
    c.height = g.spatial.at(1);
    c.width = g.spatial.at(2);
  } else {
    c.height = g.spatial.at(0);
    c.width = g.spatial.at(1);
  }
  return c;
}

/// A double uniform on [lo, hi] (1e6 steps; shrinks towards lo).
[[nodiscard]] rc::Gen<double> real_in_range(double lo, double hi);
/// A double log-uniform on [lo, hi] (for eps).
[[nodiscard]] rc::Gen<double> log_uniform(double lo, double hi);
/// A real field of a domain, drawn from its range and distribution.
[[nodiscard]] rc::Gen<double> real_field(const domain::real_field& field);

/// A config of `domain`: its flags drawn both ways (the training flag first: it decides the geometry's
/// BatchNorm rule), a geometry (conv_transpose_geometry), then its real fields; set through the schema
/// by name, so the domain's names are the config's keys.
template <class C>
[[nodiscard]] rc::Gen<C> config_from_domain(const domain::convt_domain& domain, const config_schema<C>& schema,
                                            const fuzz_budget& budget) {
  return rc::gen::exec([domain, schema, budget] {
    json flags = json::object();
    for (const char* flag : domain.flags) flags[flag] = *rc::gen::arbitrary<bool>().as(flag);
    const std::string training = domain.batch_norm_training_flag;
    const bool batch_norm_training = !training.empty() && flags.value(training, false);
    json j = schema.to_json(config_of<C>(*conv_transpose_geometry(domain, batch_norm_training, budget)));
    j.update(flags);
    for (const domain::real_field& r : domain.reals) j[r.name] = *real_field(r).as(r.name);
    return schema.from_json(j);
  });
}

/// A fuzz case for `model`: a config from its generator (a quarter from its kernel-boundary generator,
/// where it declares one), a seed, an input distribution, and the parameter regime (randomised for
/// three cases in four, PyTorch's default initialisation for the rest). Tags all three for
/// RapidCheck's coverage report.
[[nodiscard]] rc::Gen<case_recipe> fuzz_case(const model_entry& model, const fuzz_budget& budget);

}  // namespace fb::gen
