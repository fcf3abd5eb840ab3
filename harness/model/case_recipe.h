#pragma once
/// A fuzz case by recipe: which config, seed, input distribution and parameter regime; the case a
/// verify run draws at an index, a recipe made into tensors, and the command that replays it.
/// RapidCheck-free (the drawing happens in generators.cpp), so the verify and bench flows include
/// this instead of the generators.
#include <cstdint>
#include <string>

#include "harness/model/inputs.h"
#include "harness/model/model_entry.h"

namespace fb::gen {

/// Everything a fuzz case needs besides the config: how to draw parameters and inputs.
struct case_recipe {
  json config;
  uint64_t seed = 0;
  input_distribution inputs = input_distribution::uniform;
  ref::param_init params = ref::param_init::randomized;
};

/// Draws the `index`-th case of a verify run deterministically from `seed` (same seed, same cases);
/// every 20 consecutive indices cover every input distribution in both parameter regimes.
[[nodiscard]] case_recipe sample_case(const model_entry& model, const fuzz_budget& budget, uint64_t seed,
                                      int index);

/// Materialises a recipe whose config is already parsed (`config` = model.parse(recipe.config)):
/// parameters from `seed`, input from a seed derived from it.
[[nodiscard]] model_case make_case(const model_entry& model, const parsed_config& config, const case_recipe& recipe);
/// The same, parsing the recipe's config (once).
[[nodiscard]] model_case make_case(const model_entry& model, const case_recipe& recipe);

/// Same config, fresh parameters and inputs: the "no caching" probe of SPEC §2.6.
[[nodiscard]] model_case make_fresh_case(const model_entry& model, const parsed_config& config,
                                         const case_recipe& recipe);

/// The one-line command that replays a case: `fusebench verify --model M --config '...' ...`.
[[nodiscard]] std::string repro_command(const model_entry& model, const case_recipe& recipe, device_kind device);

}  // namespace fb::gen
