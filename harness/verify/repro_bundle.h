#pragma once
/// Repro bundles: a failing case saved so that anyone can replay it, in fusebench or in PyTorch.
/// A bundle directory holds
///   config.json  the model, implementation, device, config, case seed, input distribution, parameter
///                regime, atol/rtol, the verdict (outcome, rule, message, errors) and the repro command;
///   tensors.pt   libtorch's pickle (zip) format, `torch.load`-able: a dict of the first call's state_dict
///                keys plus "input"; "output" and "candidate.<buffer>" (what the candidate produced),
///                "expected" / "expected.<buffer>" (the fp32 reference), "expected_fp64" /
///                "expected_fp64.<buffer>" (the fp64 reference), and the fresh call's tensors under
///                "fresh.input" and "fresh.<state_dict key>";
///   repro.txt    the one-line command that replays it: `fusebench verify --config DIR/config.json`.
/// Replays read the inputs and parameters from tensors.pt (not regenerated from the seed), so a bundle
/// made on one machine replays on another.
#include <string>

#include "harness/model/case_recipe.h"
#include "harness/verify/equivalence.h"

namespace fb {

/// What to write for one failing case.
struct repro_bundle {
  std::string model_id;
  std::string implementation;
  device_kind device = device_kind::cpu;
  gen::case_recipe recipe;
  check_options options;
  const judged_case* case_data = nullptr;  ///< REQUIRES: non-null
  check_result verdict;                    ///< candidate_output holds what the candidate produced
  std::string repro_command;               ///< the fuzz repro line (config + seed)
};

/// Writes the bundle into `dir/<model>_<implementation>_<seed>/` and returns that path.
/// Throws std::runtime_error naming the path if it cannot be written.
std::string save_repro_bundle(const repro_bundle& bundle, const std::string& dir);

/// What a replay reads of a bundle's config.json, parsed once (load_repro_bundle).
struct bundle_meta {
  std::string model;
  std::string implementation;
  std::string device;  ///< "cpu" or "cuda": where it failed
  json config;
  uint64_t case_seed = 0;
  input_distribution inputs = input_distribution::uniform;
  ref::param_init params = ref::param_init::randomized;
  double atol = default_atol;
  double rtol = default_rtol;
  bool fp64_rule = true;
  std::string outcome;  ///< the recorded verdict, for the replay's message
  json mismatches;      ///< the recorded mismatches (an array), for the replay's message
};

/// A bundle read back: its config.json and its tensors.
struct loaded_bundle {
  bundle_meta meta;     ///< config.json
  tensor_map tensors;   ///< tensors.pt
};

/// True when `doc` is a bundle's config.json (it carries the "fusebench_bundle" marker).
[[nodiscard]] bool is_repro_bundle(const json& doc);

/// Reads the bundle whose config.json, at `config_path`, holds `doc` (read once by the caller), and its
/// tensors.pt beside it. Every key a replay reads must be present and of its type (a bundle writes them
/// all): one rule, no defaults. Throws std::invalid_argument naming the file and the key otherwise.
[[nodiscard]] loaded_bundle load_repro_bundle(const std::string& config_path, const json& doc);

/// Reads a tensor file: a dict of name -> tensor written by `torch.save` in Python (a dict or an
/// OrderedDict such as a state_dict) or by save_repro_bundle. Tensors come back contiguous, on the CPU.
/// Throws std::invalid_argument naming the file when it is unreadable or not such a dict.
[[nodiscard]] tensor_map load_tensor_file(const std::string& path);

/// The first call of a case from a tensor dict (state_dict keys plus "input", optionally prefixed):
/// checks that every parameter the model makes for `config` is present with its shape and dtype, and
/// that the input has the model's input shape; throws std::invalid_argument naming the key otherwise.
[[nodiscard]] model_case case_from_tensors(const model_entry& model, const parsed_config& config, const tensor_map& tensors,
                                           const std::string& prefix = "");

/// A user's --tensors file holds only the model's parameter names for `config` and "input": an unknown
/// key (a misspelling, another model's tensor) is refused, std::invalid_argument naming `path` and the key.
void require_only_known_tensors(const model_entry& model, const parsed_config& config, const tensor_map& tensors,
                                const std::string& path);

}  // namespace fb
