/// Linked into the GPU test executables (model_property_tests, fused_cuda_selftest): when ctest runs
/// them with a resource spec (`ctest --resource-spec-file gpus.json`, scripts/gpu-resources), the
/// GPU that ctest allocated to the test becomes the only one it sees, so tests that run at the same
/// time never share a GPU. Without a spec nothing changes.
///
/// Done in a static initializer, before main: CUDA reads CUDA_VISIBLE_DEVICES once, when the first
/// CUDA call initialises the runtime, and neither libtorch nor the self-test makes one before main.
#include <cstdio>
#include <cstdlib>

#include "harness/device/gpu_assignment.h"

namespace {

[[maybe_unused]] const bool g_ctest_gpu_applied = [] {
  const std::optional<std::string> visible = fb::gpus::ctest_visible_devices(
      [](const char* name) -> const char* { return std::getenv(name); });
  if (!visible) return false;
  ::setenv("CUDA_VISIBLE_DEVICES", visible->c_str(), 1);
  std::fprintf(stderr, "ctest resource allocation: this test runs on CUDA_VISIBLE_DEVICES=%s\n", visible->c_str());
  return true;
}();

}  // namespace
