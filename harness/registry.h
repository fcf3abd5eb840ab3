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

}  // namespace fb
