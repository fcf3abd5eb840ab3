#pragma once
/// Input distributions of the fuzz domain (SPEC §2): KernelBench's uniform [0,1) plus the ones that
/// expose bugs: normal, a large offset (cancellation), border-only (dropped border terms), sparse.
#include <ATen/ATen.h>

#include <array>
#include <optional>
#include <string_view>

#include "reference/common.h"

namespace fb {

/// How the input tensor's values are drawn.
enum class input_distribution { uniform, normal, offset, border, sparse };

inline constexpr std::array<input_distribution, 5> all_input_distributions = {
    input_distribution::uniform, input_distribution::normal, input_distribution::offset, input_distribution::border,
    input_distribution::sparse};

/// "uniform", "normal", "offset", "border", "sparse".
[[nodiscard]] std::string_view to_string(input_distribution d);
/// Inverse of to_string; nullopt for an unknown name.
[[nodiscard]] std::optional<input_distribution> input_distribution_from_string(std::string_view s);

/// The parameter regimes by name, the one table of `--params`, repro lines, bundles and reports:
/// "random" (every parameter and buffer randomised) and "default" (PyTorch's own initialisation).
[[nodiscard]] std::string_view to_string(ref::param_init p);
/// Inverse of to_string; nullopt for an unknown name.
[[nodiscard]] std::optional<ref::param_init> param_init_from_string(std::string_view s);

/// A float32 CPU tensor of `shape` drawn from `dist` with `seed`:
/// uniform U[0,1); normal N(0,1); offset `offset` + U[-1,1) (100 by default, see domain::convt_domain::input_offset); border: U[0,1) on the first/last row and
/// column of the last two dims, zero inside; sparse: N(0,1) on ~5% of the elements, zero elsewhere.
[[nodiscard]] at::Tensor make_input(at::IntArrayRef shape, input_distribution dist, uint64_t seed,
                                    double offset = 100.0);

}  // namespace fb
