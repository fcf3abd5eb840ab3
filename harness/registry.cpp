#include "harness/registry.h"

#include <stdexcept>

#include "harness/models/models.h"

namespace fb {

namespace {

std::vector<model_entry>& registered_models() {
  static std::vector<model_entry> models = {
      models::convt3d_bn_sub(),         // KernelBench #15
      models::convt3d_ln_gelu_scale(),  // KernelBench #34
      models::convt2d_gap_bias_lse(),   // KernelBench #42
      models::convt2d_mul_gap(),        // KernelBench #44
      models::convt3d_scale_bn_gap(),   // KernelBench #77
  };
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
  model_entry& model = const_cast<model_entry&>(find_model(id));  // registered_models() holds it
  for (const implementation& other : model.fused)
    if (other.name == impl.name && other.device == impl.device)
      throw std::invalid_argument("implementation " + impl.name + ": " + model.id + " already has one of that name on " +
                                  std::string(to_string(impl.device)));
  model.fused.push_back(std::move(impl));
}

}  // namespace fb
