#pragma once
/// The model registry: every model the harness knows, the built-in ones in KernelBench order.
#include <string>
#include <vector>

#include "harness/model/model_entry.h"

namespace fb {

/// Makes one model's entry: harness/models/<id>.cpp defines one per model (the built-in ones are
/// declared in harness/model/built_in_models.h, from the list harness/model/built_in_models.def).
using model_maker = model_entry (*)();

/// The one way a model enters the registry besides the built-in list (harness/model/built_in_models.def):
/// an executable that carries a model of its own (the test-only model of property_tests/sixth_model/)
/// adds it with one line at namespace scope in one of its own source files:
///   static const fb::model_registration registered{make_my_model};
/// Its maker runs after the built-in ones, when the registry is first used, and its entry is checked
/// like theirs (make_registry). REQUIRES: constructed before the first all_models() or find_model()
/// call (a namespace-scope object is); std::terminate()s with a message otherwise, a programming error.
class model_registration {
 public:
  explicit model_registration(model_maker make);
};

/// Builds a registry from `makers`, in order, checking every entry: a non-empty id, an id and a
/// KernelBench number no earlier entry has, a default config that parses. Throws std::logic_error
/// naming the entry otherwise. all_models() is make_registry(built-in makers + registered makers).
[[nodiscard]] std::vector<model_entry> make_registry(const std::vector<model_maker>& makers);

/// All registered models (built once, on first use): the built-in ones, then the registered ones.
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
