#pragma once
/// The makers of the built-in models, one per line of harness/model/built_in_models.def: each
/// harness/models/<id>.cpp defines its own, fb::models::<id>().
#include "harness/model/model_entry.h"

namespace fb::models {
#define FB_MODEL(id) [[nodiscard]] model_entry id();
#include "harness/model/built_in_models.def"
#undef FB_MODEL
}  // namespace fb::models
