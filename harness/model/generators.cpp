#include "harness/model/generators.h"

#include <algorithm>
#include <cmath>

namespace fb::gen {
namespace {

int64_t out_size(int64_t n, const convt_geometry& g) {
  return ref::conv_transpose_output_size(n, g.kernel_size, g.stride, g.padding, g.output_padding);
}

// Smallest input size whose output is non-empty.
int64_t min_input_size(const convt_geometry& g) {
  int64_t n = 1;
  while (out_size(n, g) < 1) ++n;
  return n;
}

// Largest input size (>= lo, <= most) whose output per dim stays <= cap.
int64_t max_input_size(const convt_geometry& g, int64_t lo, int64_t most, int64_t cap) {
  int64_t n = lo;
  while (n < most && out_size(n + 1, g) <= cap) ++n;
  return n;
}

uint64_t mix(uint64_t a, uint64_t b) {
  // splitmix64 of a combination: well-spread, reproducible derived seeds.
  uint64_t z = a + 0x9E3779B97F4A7C15ull * (b + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

rc::Gen<double> real_in_range(double lo, double hi) {
  return rc::gen::map(rc::gen::inRange<int>(0, 1'000'001),
                      [lo, hi](int i) { return lo + (hi - lo) * (static_cast<double>(i) / 1e6); });
}

rc::Gen<double> log_uniform(double lo, double hi) {
  return rc::gen::map(real_in_range(std::log(lo), std::log(hi)), [lo, hi](double v) {
    return std::clamp(std::exp(v), lo, hi);
  });
}

rc::Gen<double> real_field(const domain::real_field& field) {
  return field.dist == domain::distribution::log_uniform ? log_uniform(field.lo, field.hi)
                                                         : real_in_range(field.lo, field.hi);
}

namespace {
rc::Gen<int64_t> in_range(const domain::integer_range& r) { return rc::gen::inRange<int64_t>(r.lo, r.hi + 1); }
}  // namespace

rc::Gen<convt_geometry> conv_transpose_geometry(const domain::convt_domain& rules, bool batch_norm_training,
                                                const fuzz_budget& budget) {
  return rc::gen::exec([rules, batch_norm_training, budget] {
    convt_geometry g;
    g.kernel_size = *in_range(rules.kernel).as("kernel_size");
    if (rules.strided) {
      g.stride = *in_range(rules.stride).as("stride");
      if (rules.output_padding) g.output_padding = *rc::gen::inRange<int64_t>(0, g.stride).as("output_padding");
      // Mostly paddings up to the kernel size (as in practice); one case in wide_padding_one_in anything
      // PyTorch accepts at some input size of the domain (crops at both borders, padding above k).
      const bool wide = *rc::gen::inRange(0, std::max(1, rules.wide_padding_one_in)).as("wide padding") == 0;
      const int64_t most = wide ? domain::max_padding(rules, g.kernel_size, g.stride, g.output_padding) : g.kernel_size;
      g.padding = *rc::gen::inRange<int64_t>(0, most + 1).as("padding");
    }
    // Per-dim output cap so that B = C_out = 1 fits the budget; channels and batch take the rest.
    const int64_t cap = std::max<int64_t>(
        1, static_cast<int64_t>(std::floor(std::pow(static_cast<double>(budget.max_output_elements), 1.0 / rules.dims))));
    const int64_t lo = std::max(rules.spatial.lo, min_input_size(g));
    for (int d = 0; d < rules.dims; ++d) {
      const bool is_last = d == rules.dims - 1;
      // With LayerNorm(out_channels) the last output dim becomes C_out, which is at most 64.
      const int64_t dim_cap = (is_last && rules.last_dim_is_channels) ? std::min<int64_t>(cap, rules.channels.hi) : cap;
      const int64_t hi = max_input_size(g, lo, rules.spatial.hi, dim_cap);
      g.spatial.push_back(*rc::gen::inRange<int64_t>(lo, hi + 1).as("spatial size"));
      g.spatial_out.push_back(out_size(g.spatial.back(), g));
    }
    double volume_out = 1, volume_in = 1;
    for (int d = 0; d < rules.dims; ++d) {
      volume_out *= static_cast<double>(g.spatial_out[d]);
      volume_in *= static_cast<double>(g.spatial[d]);
    }
    const auto fit = [](double limit, int64_t most) {
      return std::clamp<int64_t>(static_cast<int64_t>(std::floor(limit)), 1, most);
    };
    if (rules.last_dim_is_channels) {
      g.out_channels = g.spatial_out.back();
    } else {
      g.out_channels = *rc::gen::inRange<int64_t>(rules.channels.lo,
                                                   fit(budget.max_output_elements / volume_out, rules.channels.hi) + 1)
                            .as("out_channels");
    }
    const double per_batch = volume_out * static_cast<double>(g.out_channels);
    g.batch = *rc::gen::inRange<int64_t>(rules.batch.lo, fit(budget.max_output_elements / per_batch, rules.batch.hi) + 1)
                   .as("batch_size");
    // Training-mode BatchNorm needs more than one value per channel.
    if (batch_norm_training && g.batch == 1 && volume_out == 1) g.batch = 2;
    const double taps = std::pow(static_cast<double>(g.kernel_size), rules.dims);
    const double macs_per_in_channel = static_cast<double>(g.batch) * volume_in * static_cast<double>(g.out_channels) * taps;
    g.in_channels =
        *rc::gen::inRange<int64_t>(rules.channels.lo,
                                   fit(static_cast<double>(budget.max_macs) / macs_per_in_channel, rules.channels.hi) + 1)
             .as("in_channels");
    return g;
  });
}

rc::Gen<convt_geometry> large_plane_geometry(const domain::convt_domain& rules, const fuzz_budget& budget,
                                             int64_t plane_elements, int64_t max_multiple) {
  return rc::gen::exec([rules, budget, plane_elements, max_multiple] {
    convt_geometry g;
    g.kernel_size = *rc::gen::elementOf(std::vector<int64_t>{1, 2, 3}).as("kernel_size");
    g.stride = 1;
    g.padding = rules.strided ? (g.kernel_size - 1) / 2 : 0;  // output side = input side + (k - 1 - 2p)
    const int64_t grow = g.kernel_size - 1 - 2 * g.padding;
    // The largest output plane the budget allows with B = C_out = 1, and the input plane it comes from.
    const double most_out = static_cast<double>(budget.max_output_elements);
    const int64_t h_lo = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(plane_elements + 1))));
    const auto out_plane = [grow](int64_t h, int64_t w) { return static_cast<double>((h + grow) * (w + grow)); };
    if (out_plane(h_lo, h_lo) > most_out) return *conv_transpose_geometry(rules, false, budget);
    const int64_t h = *rc::gen::inRange<int64_t>(h_lo, h_lo + 2 * h_lo / 3 + 1).as("height");
    const int64_t w_lo = plane_elements / h + 1;
    int64_t w_hi = std::max(w_lo, max_multiple * plane_elements / h);
    while (w_hi > w_lo && out_plane(h, w_hi) > most_out) --w_hi;
    if (out_plane(h, w_lo) > most_out) return *conv_transpose_geometry(rules, false, budget);
    const int64_t w = *rc::gen::inRange<int64_t>(w_lo, w_hi + 1).as("width");
    g.spatial = {h, w};
    g.spatial_out = {h + grow, w + grow};
    const double plane_out = out_plane(h, w);
    const auto fit = [](double limit, int64_t most) {
      return std::clamp<int64_t>(static_cast<int64_t>(std::floor(limit)), 1, most);
    };
    g.out_channels = *rc::gen::inRange<int64_t>(1, fit(most_out / plane_out, 3) + 1).as("out_channels");
    g.batch = *rc::gen::inRange<int64_t>(1, fit(most_out / (plane_out * g.out_channels), 2) + 1).as("batch_size");
    const double macs_per_in_channel = static_cast<double>(g.batch * h * w * g.out_channels * g.kernel_size * g.kernel_size);
    g.in_channels =
        *rc::gen::inRange<int64_t>(1, fit(static_cast<double>(budget.max_macs) / macs_per_in_channel, 3) + 1).as("in_channels");
    return g;
  });
}

namespace {
/// The parameter regime of slot 0..3 of a case: PyTorch's own initialisation (what KernelBench runs)
/// in slot 3, outlier weights in slot 1 where the domain declares split-scheme attacks, else
/// randomised (gamma = 1, beta = 0 and small biases hide bugs).
ref::param_init params_at(const domain::convt_domain& d, int slot) {
  if (slot == 3) return ref::param_init::pytorch_default;
  if (slot == 1 && d.split_scheme_attacks) return ref::param_init::outlier_weights;
  return ref::param_init::randomized;
}
}  // namespace

rc::Gen<case_recipe> fuzz_case(const model_entry& model, const fuzz_budget& budget) {
  return rc::gen::exec([&model, budget] {
    case_recipe r;
    const bool boundary = model.gen_boundary_config && *rc::gen::inRange(0, 4).as("boundary case") == 0;
    r.config = boundary ? *model.gen_boundary_config(budget) : *model.gen_config(budget);
    r.seed = *rc::gen::arbitrary<uint32_t>().as("seed");
    r.inputs = *rc::gen::elementOf(input_distributions_of(model.fuzz_domain));
    r.params = params_at(model.fuzz_domain, *rc::gen::inRange(0, 4));
    RC_TAG(std::string(to_string(r.inputs)), std::string(to_string(r.params)) + " params",
           boundary ? "kernel boundary config" : "general config");
    return r;
  });
}

case_recipe sample_case(const model_entry& model, const fuzz_budget& budget, uint64_t seed, int index) {
  const uint64_t key = mix(seed, static_cast<uint64_t>(index));
  // Size 100 is RapidCheck's nominal full size: sample the whole domain, not the small start of it.
  case_recipe r = fuzz_case(model, budget)(rc::Random(key), 100).value();
  r.seed = mix(key, 0x5eed);
  // Every distribution and every parameter regime in every run of 4 x (distributions) consecutive
  // cases (20 for most models, 28 for those with split-scheme attacks).
  const std::vector<input_distribution> dists = input_distributions_of(model.fuzz_domain);
  const auto i = static_cast<std::size_t>(index);
  r.inputs = dists[i % dists.size()];
  r.params = params_at(model.fuzz_domain, static_cast<int>(i / dists.size() % 4));
  return r;
}

model_case make_case(const model_entry& model, const parsed_config& config, const case_recipe& r) {
  model_case c;
  c.config = config;
  c.params = model.make_parameters(config, r.params, r.seed);
  c.input = make_input(model.input_shape(config), r.inputs, mix(r.seed, 1), model.fuzz_domain.input_offset);
  return c;
}

model_case make_case(const model_entry& model, const case_recipe& r) {
  return make_case(model, model.parse(r.config), r);
}

model_case make_fresh_case(const model_entry& model, const parsed_config& config, const case_recipe& r) {
  case_recipe fresh = r;
  fresh.seed = mix(r.seed, 0xF2E5);
  fresh.params = ref::param_init::randomized;
  return make_case(model, config, fresh);
}

std::string repro_command(const model_entry& model, const case_recipe& r, device_kind device) {
  std::string cfg = r.config.dump();
  return "fusebench verify --model " + model.id + " --device " + std::string(to_string(device)) + " --config '" + cfg +
         "' --case-seed " + std::to_string(r.seed) + " --inputs " + std::string(to_string(r.inputs)) + " --params " +
         std::string(to_string(r.params));
}

}  // namespace fb::gen
