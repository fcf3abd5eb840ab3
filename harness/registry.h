#pragma once
/// The model registry: every model the harness knows, in KernelBench order.
#include <string>
#include <vector>

#include "harness/model_entry.h"

namespace fb {

/// All registered models (built once, on first use).
[[nodiscard]] const std::vector<model_entry>& all_models();
/// The model with this id or KernelBench number ("44" or "#44"); throws std::invalid_argument
/// listing the known ids otherwise.
[[nodiscard]] const model_entry& find_model(const std::string& id);
/// Adds an outside implementation (a plug-in's, harness/plugin/plugin_loader.h) to the model `id`
/// (as find_model reads it), after its fused ones. Throws std::invalid_argument for an unknown model
/// or a name the model already has on that device. REQUIRES: no run has started (nothing holds a
/// reference into the model's implementations yet).
void add_implementation(const std::string& id, implementation impl);

}  // namespace fb
