#pragma once
/// Repro bundles: a failing case saved so that anyone can replay it, in fusebench or in PyTorch.
/// A bundle directory holds config.json, tensors.pt (libtorch's pickle format, `torch.load`-able:
/// a dict of state_dict keys plus "input", "output" and "expected"), and repro.txt.
#include <string>

#include "harness/equivalence.h"
#include "harness/generators.h"

namespace fb {

/// What to write for one failing case.
struct repro_bundle {
  std::string model_id;
  std::string implementation;
  gen::case_recipe recipe;
  model_case case_data;
  at::Tensor output;    ///< what the candidate produced (may be undefined if it threw)
  at::Tensor expected;  ///< what the expectation produced
  check_result verdict;
  std::string repro_command;
};

/// Writes the bundle into `dir/<model>_<implementation>_<seed>/` and returns that path.
/// Throws std::runtime_error naming the path if it cannot be written.
std::string save_repro_bundle(const repro_bundle& bundle, const std::string& dir);

/// Reads back tensors.pt as written by save_repro_bundle (for tests and tooling).
[[nodiscard]] tensor_map load_bundle_tensors(const std::string& path);

}  // namespace fb
