#include "harness/device/device.h"

#include <stdexcept>

#if FUSEBENCH_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace fb {

std::string_view to_string(device_kind d) { return d == device_kind::cuda ? "cuda" : "cpu"; }

at::Device to_device(device_kind d) { return d == device_kind::cuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU); }

bool cuda_available() { return at::hasCUDA(); }

device_kind best_device() { return cuda_available() ? device_kind::cuda : device_kind::cpu; }

device_kind device_from_string(const std::string& s) {
  if (s == "cpu") return device_kind::cpu;
  if (s == "cuda") return device_kind::cuda;
  throw std::invalid_argument("device = " + s + ": must be cpu or cuda");
}

fused::stream_t current_cuda_stream() {
#if FUSEBENCH_TORCH_CUDA
  return reinterpret_cast<fused::stream_t>(c10::cuda::getCurrentCUDAStream().stream());
#else
  throw std::runtime_error("this fusebench build uses a CPU-only libtorch: no CUDA stream");
#endif
}

void synchronize(device_kind device) {
  if (device != device_kind::cuda) return;
#if FUSEBENCH_TORCH_CUDA
  c10::cuda::device_synchronize();
#endif
}

void release_cached_device_memory() {
#if FUSEBENCH_TORCH_CUDA
  if (cuda_available()) c10::cuda::CUDACachingAllocator::emptyCache();
#endif
}

std::string device_name(device_kind device) {
  if (device == device_kind::cpu) return "cpu";
#if FUSEBENCH_TORCH_CUDA
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) return prop.name;
#endif
  return "cuda (unknown)";
}

int cuda_device_count() {
#if FUSEBENCH_TORCH_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess) return count;
#endif
  return 0;
}

std::string cuda_device_name(int index) {
#if FUSEBENCH_TORCH_CUDA
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) == cudaSuccess) return prop.name;
#endif
  (void)index;
  return {};
}

model_case on_device(const model_case& c, device_kind device) {
  const at::Device dev = to_device(device);
  model_case out;
  out.config = c.config;
  out.input = c.input.to(dev).contiguous();
  for (const auto& [name, t] : c.params) out.params[name] = t.to(dev).contiguous();
  return out;
}

}  // namespace fb
