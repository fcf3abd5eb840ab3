#include "harness/repro_bundle.h"

#include <torch/csrc/jit/serialization/pickle.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace fb {
namespace {
void write_file(const std::filesystem::path& p, const std::string& data) {
  std::ofstream f(p, std::ios::binary);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!f) throw std::runtime_error("cannot write " + p.string());
}
}  // namespace

std::string save_repro_bundle(const repro_bundle& b, const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(dir) / (b.model_id + "_" + b.implementation + "_" + std::to_string(b.recipe.seed));
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw std::runtime_error("cannot create " + root.string() + ": " + ec.message());

  json cfg = {{"model", b.model_id},
              {"implementation", b.implementation},
              {"config", b.case_data.config},
              {"case_seed", b.recipe.seed},
              {"inputs", std::string(to_string(b.recipe.inputs))},
              {"params", b.recipe.params == ref::param_init::randomized ? "random" : "default"},
              {"outcome", std::string(to_string(b.verdict.result))},
              {"message", b.verdict.message},
              {"max_abs_error", b.verdict.vs_expected.max_abs},
              {"max_rel_error", b.verdict.vs_expected.max_rel}};
  write_file(root / "config.json", cfg.dump(2) + "\n");

  // A dict of CPU tensors: state_dict keys load straight into the PyTorch module with
  // `model.load_state_dict({k: v for k, v in d.items() if "." in k or k == "bias"}, strict=False)`.
  c10::Dict<std::string, at::Tensor> tensors;
  for (const auto& [name, t] : b.case_data.params) tensors.insert(name, t.detach().to(at::kCPU).contiguous());
  tensors.insert("input", b.case_data.input.detach().to(at::kCPU).contiguous());
  if (b.output.defined()) tensors.insert("output", b.output.detach().to(at::kCPU).contiguous());
  if (b.expected.defined()) tensors.insert("expected", b.expected.detach().to(at::kCPU).contiguous());
  const std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(tensors));
  write_file(root / "tensors.pt", std::string(bytes.begin(), bytes.end()));

  write_file(root / "repro.txt", b.repro_command + "\n");
  return root.string();
}

tensor_map load_bundle_tensors(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const c10::IValue v = torch::jit::pickle_load(bytes);
  tensor_map out;
  for (const auto& item : v.toGenericDict()) out[item.key().toStringRef()] = item.value().toTensor();
  return out;
}

}  // namespace fb
