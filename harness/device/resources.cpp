#include "harness/device/resources.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#if FUSEBENCH_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace fb {
namespace {

double product(const std::vector<int64_t>& shape) {
  double n = 1.0;
  for (int64_t s : shape) n *= static_cast<double>(s);
  return n;
}

/// MemAvailable of /proc/meminfo [bytes]: what the kernel can hand out without swapping, page cache
/// included (MemFree would understate it). 0 where the file or the line is missing.
double host_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    std::istringstream fields(line);
    std::string key;
    double kib = 0.0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024.0;
  }
  return 0.0;
}

}  // namespace

double case_bytes_estimate(const model_entry& model, const parsed_config& c, int input_sets, bool with_fp64) {
  const double in = product(model.input_shape(c));
  const double out = product(model.output_shape(c));
  const double conv = model.problem_size(c);
  double workspace = 0.0;
  for (const implementation& impl : model.fused)
    if (impl.workspace_bytes) workspace = std::max(workspace, static_cast<double>(impl.workspace_bytes(c)));
  const double sets = static_cast<double>(std::max(1, input_sets));
  // Weight elements: every input element meets C_out * k^dims of them (conv_macs), so the weight holds
  // conv_macs / (input elements / C_in); one copy per set, fp64 copies beside them when verifying.
  const double c_in = c.canonical.contains("in_channels") ? c.canonical.at("in_channels").get<double>() : 1.0;
  const double weights = in > 0 ? model.conv_macs(c) / in * c_in : 0.0;
  const double reference_fp32 = 4.0 * (in + out + 3.0 * conv);
  const double reference_fp64 = with_fp64 ? 2.0 * reference_fp32 : 0.0;
  return 4.0 * sets * (in + out + weights) + (with_fp64 ? 8.0 * weights : 0.0) + reference_fp32 + reference_fp64 +
         workspace;
}

double available_bytes(device_kind device) {
  if (device == device_kind::cpu) return host_available_bytes();
#if FUSEBENCH_TORCH_CUDA
  c10::cuda::CUDACachingAllocator::emptyCache();
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return 0.0;
  return static_cast<double>(free_bytes);
#else
  return 0.0;
#endif
}

}  // namespace fb
