#pragma once
/// FB_CUDA_CHECK(call): throws std::runtime_error naming the call, the CUDA error and file:line.
/// Used after every runtime call and every launch (cudaGetLastError) so that no failure is silent.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace fb::fused::detail {
[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": CUDA call '" + call +
                           "' failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}
}  // namespace fb::fused::detail

#define FB_CUDA_CHECK(call)                                                              \
  do {                                                                                   \
    const cudaError_t fb_cuda_check_err_ = (call);                                       \
    if (fb_cuda_check_err_ != cudaSuccess)                                               \
      ::fb::fused::detail::throw_cuda_error(fb_cuda_check_err_, #call, __FILE__, __LINE__); \
  } while (0)
