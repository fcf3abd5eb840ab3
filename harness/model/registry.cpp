#include "harness/model/registry.h"

#include <cstdio>
#include <exception>
#include <stdexcept>

#include "harness/model/built_in_models.h"

namespace fb {
namespace {

// The built-in models, in KernelBench order: the lines of harness/model/built_in_models.def.
constexpr model_maker built_in_models[] = {
#define FB_MODEL(id) models::id,
#include "harness/model/built_in_models.def"
#undef FB_MODEL
};

/// The makers model_registration added, and whether the registry has been built from them already.
struct registrations {
  std::vector<model_maker> makers;
  bool built = false;
};

// Constructed on first use: a model_registration in another translation unit may run before any
// namespace-scope object of this one.
registrations& registered() {
  static registrations r;
  return r;
}

}  // namespace

model_registration::model_registration(model_maker make) {
  registrations& r = registered();
  if (r.built || make == nullptr) {
    // A static initialiser cannot report an error any other way.
    std::fputs(r.built ? "fusebench: a model_registration ran after the registry was first used\n"
                       : "fusebench: a model_registration was given no maker\n",
               stderr);
    std::terminate();
  }
  r.makers.push_back(make);
}

std::vector<model_entry> make_registry(const std::vector<model_maker>& makers) {
  std::vector<model_entry> models;
  for (model_maker make : makers) {
    model_entry e = make();
    if (e.id.empty()) throw std::logic_error("model registry: an entry has no id");
    for (const model_entry& before : models) {
      if (before.id == e.id) throw std::logic_error("model registry: id " + e.id + " is registered twice");
      if (before.kernelbench_id == e.kernelbench_id)
        throw std::logic_error("model registry: " + e.id + " and " + before.id + " share KernelBench number " +
                               std::to_string(e.kernelbench_id));
    }
    try {
      (void)e.parse(e.default_config);
    } catch (const std::exception& err) {
      throw std::logic_error("model registry: the default config of " + e.id + " does not parse: " + err.what());
    }
    models.push_back(std::move(e));
  }
  return models;
}

namespace {

/// The registry itself: not const, so that add_implementation may append a plug-in's implementations
/// to an entry before any run starts.
std::vector<model_entry>& registered_models() {
  static std::vector<model_entry> models = [] {
    registrations& r = registered();
    r.built = true;
    std::vector<model_maker> makers(std::begin(built_in_models), std::end(built_in_models));
    makers.insert(makers.end(), r.makers.begin(), r.makers.end());
    return make_registry(makers);
  }();
  return models;
}

}  // namespace

const std::vector<model_entry>& all_models() { return registered_models(); }

const model_entry& find_model(const std::string& id) {
  std::string known;
  for (const model_entry& m : all_models()) {
    if (m.id == id || id == std::to_string(m.kernelbench_id) || id == "#" + std::to_string(m.kernelbench_id)) return m;
    known += (known.empty() ? "" : ", ") + m.id + " (" + std::to_string(m.kernelbench_id) + ")";
  }
  throw std::invalid_argument("model = " + id + ": unknown model (known: " + known + ")");
}

void add_implementation(const std::string& id, implementation impl) {
  model_entry& model = const_cast<model_entry&>(find_model(id));  // registered_models() holds it, not const
  for (const implementation& other : model.fused)
    if (other.name == impl.name && other.device == impl.device)
      throw std::invalid_argument("implementation " + impl.name + ": " + model.id + " already has one of that name on " +
                                  std::string(to_string(impl.device)));
  model.fused.push_back(std::move(impl));
}

}  // namespace fb
