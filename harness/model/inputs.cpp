#include "harness/model/inputs.h"

#include <utility>

namespace fb {

std::string_view to_string(input_distribution d) {
  switch (d) {
    case input_distribution::uniform: return "uniform";
    case input_distribution::normal: return "normal";
    case input_distribution::offset: return "offset";
    case input_distribution::border: return "border";
    case input_distribution::sparse: return "sparse";
    case input_distribution::wide: return "wide";
    case input_distribution::near_constant: return "near_constant";
  }
  return "uniform";
}

std::vector<input_distribution> input_distributions_of(const domain::convt_domain& d) {
  const std::size_t n = d.split_scheme_attacks ? all_input_distributions.size() : 5;
  return {all_input_distributions.begin(), all_input_distributions.begin() + static_cast<std::ptrdiff_t>(n)};
}

std::vector<ref::param_init> param_regimes_of(const domain::convt_domain& d) {
  if (d.split_scheme_attacks)
    return {ref::param_init::randomized, ref::param_init::pytorch_default, ref::param_init::outlier_weights};
  return {ref::param_init::randomized, ref::param_init::pytorch_default};
}

std::optional<input_distribution> input_distribution_from_string(std::string_view s) {
  for (input_distribution d : all_input_distributions)
    if (to_string(d) == s) return d;
  return std::nullopt;
}

namespace {
constexpr std::pair<ref::param_init, std::string_view> param_init_names[] = {
    {ref::param_init::randomized, "random"},
    {ref::param_init::pytorch_default, "default"},
    {ref::param_init::outlier_weights, "outliers"}};
}  // namespace

std::string_view to_string(ref::param_init p) {
  for (const auto& [value, name] : param_init_names)
    if (value == p) return name;
  return "random";
}

std::optional<ref::param_init> param_init_from_string(std::string_view s) {
  for (const auto& [value, name] : param_init_names)
    if (name == s) return value;
  return std::nullopt;
}

at::Tensor make_input(at::IntArrayRef shape, input_distribution dist, uint64_t seed, double offset) {
  at::Generator gen = ref::make_generator(seed);
  switch (dist) {
    case input_distribution::uniform: return ref::uniform(shape, 0.0, 1.0, gen);
    case input_distribution::normal: return ref::normal(shape, 0.0, 1.0, gen);
    case input_distribution::offset: return ref::uniform(shape, offset - 1.0, offset + 1.0, gen);
    case input_distribution::border: {
      at::Tensor x = ref::uniform(shape, 0.0, 1.0, gen);
      const int64_t d = x.dim();
      const int64_t h = x.size(d - 2), w = x.size(d - 1);
      // Zero the interior: rows 1..h-2 and columns 1..w-2 of the last two dims.
      if (h > 2 && w > 2) x.narrow(d - 2, 1, h - 2).narrow(d - 1, 1, w - 2).zero_();
      return x;
    }
    case input_distribution::sparse: {
      at::Tensor values = ref::normal(shape, 0.0, 1.0, gen);
      at::Tensor keep = ref::uniform(shape, 0.0, 1.0, gen).lt(0.05);
      return values * keep.to(at::kFloat);
    }
    case input_distribution::wide: {
      // Integer binades e in [-30, 30): floor of U[-30, 30), exact powers of two.
      at::Tensor binade = ref::uniform(shape, -52.0, 8.0, gen).floor();
      return ref::normal(shape, 0.0, 1.0, gen) * at::pow(2.0, binade);
    }
    case input_distribution::near_constant: return 1.0 + 1e-3 * ref::normal(shape, 0.0, 1.0, gen);
  }
  return ref::uniform(shape, 0.0, 1.0, gen);
}

}  // namespace fb
