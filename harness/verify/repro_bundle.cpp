#include "harness/verify/repro_bundle.h"

#include <torch/csrc/jit/serialization/pickle.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "harness/format/seed_json.h"
#include "harness/format/shell_quote.h"
#include "harness/plugin/plugin_loader.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace fb {
namespace {

constexpr const char* bundle_marker = "fusebench_bundle";
constexpr int bundle_version = 2;

void write_file(const std::filesystem::path& p, const std::string& data) {
  std::ofstream f(p, std::ios::binary);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

at::Tensor cpu(const at::Tensor& t) { return t.detach().to(at::kCPU).contiguous(); }

void insert_all(c10::Dict<std::string, at::Tensor>& d, const std::string& prefix, const tensor_map& m) {
  for (const auto& [name, t] : m)
    if (t.defined()) d.insert(prefix + name, cpu(t));
}

std::string shape_string(at::IntArrayRef s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

}  // namespace

std::string save_repro_bundle(const repro_bundle& b, const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(dir) / (b.model_id + "_" + b.implementation + "_" + std::to_string(b.recipe.seed));
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw std::runtime_error("cannot create " + root.string() + ": " + ec.message());
  const judged_case& c = *b.case_data;

  json mismatches = json::array();
  for (mismatch m : b.verdict.mismatches) mismatches.push_back(std::string(to_string(m)));
  const bool external = b.implementation.rfind(plugin::name_prefix, 0) == 0;
  const std::string replay = "fusebench verify --config " + format::shell_quoted((root / "config.json").string()) +
                             (external ? plugin::plugin_arguments() : std::string());
  json cfg = {{bundle_marker, bundle_version},
              {"model", b.model_id},
              {"implementation", b.implementation},
              {"device", std::string(to_string(b.device))},
              {"config", c.first.config.canonical},
              {"case_seed", seed_to_json(b.recipe.seed)},
              {"inputs", std::string(to_string(b.recipe.inputs))},
              {"params", std::string(to_string(b.recipe.params))},
              {"atol", b.options.atol},
              {"rtol", b.options.rtol},
              {"fp64_rule", b.options.fp64_rule},
              {"outcome", std::string(to_string(b.verdict.result))},
              {"rule", std::string(to_string(b.verdict.rule))},
              {"mismatches", mismatches},
              {"message", b.verdict.message},
              {"max_abs_error", b.verdict.vs_expected.max_abs},
              {"worst_error_over_bound", b.verdict.vs_expected.worst_ratio},
              {"replay", replay},
              {"fuzz_repro", b.repro_command}};
  write_file(root / "config.json", cfg.dump(2) + "\n");

  // A dict of CPU tensors: the state_dict keys load straight into the PyTorch module with
  // `model.load_state_dict({k: v for k, v in d.items() if k.count(".") == 1 and not k.startswith(("fresh.",
  // "expected", "candidate."))})`; d["input"] is its input.
  c10::Dict<std::string, at::Tensor> tensors;
  insert_all(tensors, "", c.first.params);
  tensors.insert("input", cpu(c.first.input));
  insert_all(tensors, "fresh.", c.fresh.params);
  if (c.fresh.input.defined()) tensors.insert("fresh.input", cpu(c.fresh.input));
  const ref::forward_result& got = b.verdict.candidate_output;
  if (got.output.defined()) tensors.insert("output", cpu(got.output));
  insert_all(tensors, "candidate.", got.buffers);
  tensors.insert("expected", cpu(c.first_expected.fp32.output));
  insert_all(tensors, "expected.", c.first_expected.fp32.buffers);
  tensors.insert("expected_fp64", cpu(c.first_expected.fp64.output));
  insert_all(tensors, "expected_fp64.", c.first_expected.fp64.buffers);
  const std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(tensors));
  write_file(root / "tensors.pt", std::string(bytes.begin(), bytes.end()));

  write_file(root / "repro.txt", replay + "\n");
  return root.string();
}

bool is_repro_bundle(const json& doc) { return doc.is_object() && doc.contains(bundle_marker); }

loaded_bundle load_repro_bundle(const std::string& config_path, const json& doc) {
  namespace fs = std::filesystem;
  const auto bad = [&](const std::string& what) {
    return std::invalid_argument("bundle " + config_path + ": config.json " + what);
  };
  // One rule for every key a replay reads: it must be there (a bundle writes them all); a key of the
  // wrong type is the same error, not a default.
  const auto get = [&](const char* key, auto kind) {
    if (!doc.contains(key)) throw bad(std::string("has no \"") + key + "\"");
    try {
      return doc.at(key).get<decltype(kind)>();
    } catch (const json::exception&) {
      throw bad(std::string("has a malformed \"") + key + "\"");
    }
  };
  // A bundle of another version may hold other keys or mean other things by them: refused, not guessed.
  const json& version = doc.at(bundle_marker);
  if (!version.is_number_integer() || version.get<int64_t>() != bundle_version)
    throw bad(fmt::format("has \"{}\": {}; this fusebench reads version {} (a bundle is replayed by the fusebench "
                          "version that wrote it)",
                          bundle_marker, version.dump(), bundle_version));
  loaded_bundle b;
  bundle_meta& m = b.meta;
  m.model = get("model", std::string());
  m.implementation = get("implementation", std::string());
  m.device = get("device", std::string());
  if (!doc.contains("config")) throw bad("has no \"config\"");
  m.config = doc.at("config");
  if (!doc.contains("case_seed")) throw bad("has no \"case_seed\"");
  const std::optional<uint64_t> case_seed = seed_from_json(doc.at("case_seed"));
  if (!case_seed) throw bad("has a malformed \"case_seed\"");
  m.case_seed = *case_seed;
  m.atol = get("atol", double{});
  m.rtol = get("rtol", double{});
  m.fp64_rule = get("fp64_rule", bool{});
  const std::string inputs = get("inputs", std::string());
  const std::string params = get("params", std::string());
  if (!input_distribution_from_string(inputs)) throw bad("has an unknown \"inputs\": " + inputs);
  if (!param_init_from_string(params)) throw bad("has an unknown \"params\": " + params);
  m.inputs = *input_distribution_from_string(inputs);
  m.params = *param_init_from_string(params);
  m.outcome = doc.value("outcome", std::string("?"));
  m.mismatches = doc.value("mismatches", json::array());
  b.tensors = load_tensor_file((fs::path(config_path).parent_path() / "tensors.pt").string());
  return b;
}

tensor_map load_tensor_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw std::invalid_argument(path + ": is a directory, not a tensor file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::invalid_argument(path + ": cannot read the tensor file");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  c10::IValue v;
  try {
    v = torch::jit::pickle_load(bytes);
  } catch (const std::exception& e) {
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    throw std::invalid_argument(path + ": not a torch.save file of a dict of tensors (" + what + ")");
  }
  if (!v.isGenericDict()) throw std::invalid_argument(path + ": holds a " + v.tagKind() + ", not a dict of tensors");
  tensor_map out;
  for (const auto& item : v.toGenericDict()) {
    if (!item.key().isString()) throw std::invalid_argument(path + ": a key is not a string");
    const std::string key = item.key().toStringRef();
    if (!item.value().isTensor()) throw std::invalid_argument(path + ": \"" + key + "\" is not a tensor");
    out[key] = item.value().toTensor().detach().to(at::kCPU).contiguous();
  }
  return out;
}

void require_only_known_tensors(const model_entry& model, const parsed_config& config, const tensor_map& tensors,
                                const std::string& path) {
  const tensor_map like = model.make_parameters(config, ref::param_init::pytorch_default, 0);
  std::vector<std::string> known{"input"};
  for (const auto& [name, t] : like) known.push_back(name);
  for (const auto& [name, t] : tensors)
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw std::invalid_argument(fmt::format("{}: \"{}\" is not a tensor of {} (it takes \"{}\"): a misspelt key "
                                              "would leave its parameter to the generator",
                                              path, name, model.id, fmt::join(known, "\", \"")));
}

model_case case_from_tensors(const model_entry& model, const parsed_config& config, const tensor_map& tensors,
                             const std::string& prefix) {
  model_case c;
  c.config = config;
  // The shapes and dtypes the model expects come from a parameter set it makes itself for this config.
  const tensor_map like = model.make_parameters(c.config, ref::param_init::pytorch_default, 0);
  for (const auto& [name, want] : like) {
    const auto it = tensors.find(prefix + name);
    if (it == tensors.end()) throw std::invalid_argument("tensors: \"" + prefix + name + "\" is missing");
    const at::Tensor& t = it->second;
    if (t.sizes() != want.sizes())
      throw std::invalid_argument("tensors: \"" + prefix + name + "\" has shape " + shape_string(t.sizes()) +
                                  ", the config needs " + shape_string(want.sizes()));
    if (!t.is_floating_point() && want.is_floating_point())
      throw std::invalid_argument("tensors: \"" + prefix + name + "\" must be a floating-point tensor");
    c.params[name] = t.to(want.scalar_type()).contiguous();
  }
  const auto in = tensors.find(prefix + "input");
  if (in == tensors.end()) throw std::invalid_argument("tensors: \"" + prefix + "input\" is missing");
  const std::vector<int64_t> shape = model.input_shape(c.config);
  if (in->second.sizes() != at::IntArrayRef(shape))
    throw std::invalid_argument("tensors: \"" + prefix + "input\" has shape " + shape_string(in->second.sizes()) +
                                ", the config needs " + shape_string(shape));
  if (!in->second.is_floating_point()) throw std::invalid_argument("tensors: \"" + prefix + "input\" must be floating point");
  c.input = in->second.to(at::kFloat).contiguous();
  return c;
}

}  // namespace fb
