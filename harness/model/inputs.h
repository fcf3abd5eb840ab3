#pragma once
/// Input distributions of the fuzz domain (SPEC §2): KernelBench's uniform [0,1) plus the ones that
/// expose bugs: normal, a large offset (cancellation), border-only (dropped border terms), sparse; and,
/// for models that declare split_scheme_attacks, the ones that attack split-precision products: wide
/// exponents and near-constant values.
#include <ATen/ATen.h>

#include <array>
#include <optional>
#include <string_view>
#include <vector>

#include "harness/model/fuzz_domain.h"
#include "reference/common.h"

namespace fb {

/// How the input tensor's values are drawn.
enum class input_distribution { uniform, normal, offset, border, sparse, wide, near_constant };

/// Every distribution (the names `--inputs` accepts).
inline constexpr std::array<input_distribution, 7> all_input_distributions = {
    input_distribution::uniform, input_distribution::normal,        input_distribution::offset,
    input_distribution::border,  input_distribution::sparse,        input_distribution::wide,
    input_distribution::near_constant};

/// The distributions a model's fuzz cases draw from: the first five for every model, wide and
/// near_constant too where the domain declares split_scheme_attacks.
[[nodiscard]] std::vector<input_distribution> input_distributions_of(const domain::convt_domain& d);

/// The parameter regimes a model's fuzz cases draw from: randomized and PyTorch's default, and
/// outlier_weights where the domain declares split_scheme_attacks.
[[nodiscard]] std::vector<ref::param_init> param_regimes_of(const domain::convt_domain& d);

/// "uniform", "normal", "offset", "border", "sparse", "wide", "near_constant".
[[nodiscard]] std::string_view to_string(input_distribution d);
/// Inverse of to_string; nullopt for an unknown name.
[[nodiscard]] std::optional<input_distribution> input_distribution_from_string(std::string_view s);

/// The parameter regimes by name, the one table of `--params`, repro lines, bundles and reports:
/// "random" (every parameter and buffer randomised), "default" (PyTorch's own initialisation) and
/// "outliers" (randomised, then a few conv weights 2^10 times larger).
[[nodiscard]] std::string_view to_string(ref::param_init p);
/// Inverse of to_string; nullopt for an unknown name.
[[nodiscard]] std::optional<ref::param_init> param_init_from_string(std::string_view s);

/// A float32 CPU tensor of `shape` drawn from `dist` with `seed`:
/// uniform U[0,1); normal N(0,1); offset `offset` + U[-1,1) (100 by default, see domain::convt_domain::input_offset); border: U[0,1) on the first/last row and
/// column of the last two dims, zero inside; sparse: N(0,1) on ~5% of the elements, zero elsewhere;
/// wide: N(0,1) * 2^e with the integer e uniform in [-52, 8) per element (60 binades in every patch;
/// below 2^10 so that libtorch's own fp64 LayerNorm, y * rstd - mean * rstd, stays within the oracle
/// check's 1e-9 on a row whose variance vanishes, e.g. W' = 1);
/// near_constant: 1 + 1e-3 N(0,1) (a normalisation's mean subtraction cancels ~3 digits).
[[nodiscard]] at::Tensor make_input(at::IntArrayRef shape, input_distribution dist, uint64_t seed,
                                    double offset = 100.0);

}  // namespace fb
