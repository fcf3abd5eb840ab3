#pragma once
/// RapidCheck generators shared by the models (SPEC §2 fuzz domain). Each model's own generator,
/// beside its registry entry in harness/models/<id>.cpp, draws a geometry here and adds its scalars.
#include <rapidcheck.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "harness/inputs.h"
#include "harness/model_entry.h"

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

/// Which parts of the geometry a model takes.
struct geometry_rules {
  int dims = 2;                    ///< 2 or 3 spatial dims
  bool strided = true;             ///< false: stride 1, padding 0 (the model has no such keys)
  bool output_padding = false;     ///< the model takes output_padding
  bool last_dim_is_channels = false;  ///< LayerNorm(out_channels) on the last dim: C_out := W'
  bool batch_norm_training = false;   ///< needs B * D'H'W' > 1
};

/// A valid geometry within `budget`: kernel 1..7, stride 1..4, padding 0..kernel, op < stride,
/// spatial sizes 1..40 (odd and non-square come naturally), channels 1..64 drawn independently
/// (so C_in != C_out is common), batch 1..8, then cut to the output and MAC budget.
[[nodiscard]] rc::Gen<convt_geometry> conv_transpose_geometry(const geometry_rules& rules, const fuzz_budget& budget);

/// A 2-D geometry whose input planes hold more than `plane_elements` elements (up to `max_multiple`
/// times as many), the kind of case that crosses a kernel's split of a plane into work items or chunks
/// and that the general generator (sides up to 40) never builds. Stride 1 with the padding that keeps
/// the output plane the input's size where the model takes padding (else padding 0); channels and
/// batch small, so the case fits `budget`. When not even one such plane fits the budget, it is the
/// general geometry instead (so the generator works for every budget, the oracle's too).
[[nodiscard]] rc::Gen<convt_geometry> large_plane_geometry(const geometry_rules& rules, const fuzz_budget& budget,
                                                           int64_t plane_elements, int64_t max_multiple);

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

/// Everything a fuzz case needs besides the config: how to draw parameters and inputs.
struct case_recipe {
  json config;
  uint64_t seed = 0;
  input_distribution inputs = input_distribution::uniform;
  ref::param_init params = ref::param_init::randomized;
};

/// A fuzz case for `model`: a config from its generator (a quarter from its kernel-boundary generator,
/// where it declares one), a seed, an input distribution, and the parameter regime (randomised for
/// three cases in four, PyTorch's default initialisation for the rest). Tags all three for
/// RapidCheck's coverage report.
[[nodiscard]] rc::Gen<case_recipe> fuzz_case(const model_entry& model, const fuzz_budget& budget);

/// Draws the `index`-th case of a verify run deterministically from `seed` (same seed, same cases);
/// every 20 consecutive indices cover every input distribution in both parameter regimes.
[[nodiscard]] case_recipe sample_case(const model_entry& model, const fuzz_budget& budget, uint64_t seed,
                                      int index);

/// Materialises a recipe: parameters from `seed`, input from a seed derived from it.
[[nodiscard]] model_case make_case(const model_entry& model, const case_recipe& recipe);

/// Same config, fresh parameters and inputs: the "no caching" probe of SPEC §2.6.
[[nodiscard]] model_case make_fresh_case(const model_entry& model, const case_recipe& recipe);

/// The one-line command that replays a case: `fusebench verify --model M --config '...' ...`.
[[nodiscard]] std::string repro_command(const model_entry& model, const case_recipe& recipe, device_kind device);

}  // namespace fb::gen
