#pragma once
/// Adapting tensors to the torch-free fused API: raw pointers, checked. The fused kernels take raw
/// device pointers; these checks are what makes handing them over safe.
#include <ATen/ATen.h>

#include <string>

#include "harness/model/model_entry.h"

namespace fb::detail {

/// A read-only float32 pointer; throws std::invalid_argument naming `what` unless `t` is a
/// contiguous float32 tensor on `device`.
[[nodiscard]] inline const float* float_data(const at::Tensor& t, device_kind device, const std::string& what) {
  if (!t.defined() || t.scalar_type() != at::kFloat || !t.is_contiguous() || t.device() != to_device(device))
    throw std::invalid_argument(what + ": the fused API needs a contiguous float32 tensor on " +
                                std::string(to_string(device)));
  return t.data_ptr<float>();
}

/// A writable float32 pointer, with the same checks.
[[nodiscard]] inline float* mutable_float_data(at::Tensor& t, device_kind device, const std::string& what) {
  return const_cast<float*>(float_data(t, device, what));
}

/// The parameter `name` of a case as a float32 pointer.
[[nodiscard]] inline const float* param_data(const model_case& c, const std::string& name, device_kind device) {
  return float_data(c.params.at(name), device, name);
}

/// The in-place buffer `name` of the output slots (BatchNorm running statistics, updated by the
/// call): a writable pointer, checked to be contiguous, of `dtype` and on `device`.
[[nodiscard]] inline void* buffer_data(output_slots& s, const std::string& name, at::ScalarType dtype,
                                       device_kind device) {
  const auto it = s.buffers.find(name);
  if (it == s.buffers.end()) throw std::invalid_argument(name + ": no such buffer in the output slots");
  const at::Tensor& t = it->second;
  if (!t.defined() || t.scalar_type() != dtype || !t.is_contiguous() || t.device() != to_device(device))
    throw std::invalid_argument(name + ": the fused API needs a contiguous " + std::string(c10::toString(dtype)) +
                                " tensor on " + std::string(to_string(device)));
  return t.data_ptr();
}

/// The workspace pointer (null when no workspace was asked for).
[[nodiscard]] inline void* workspace_data(output_slots& s) {
  return s.workspace.defined() && s.workspace.numel() > 0 ? s.workspace.data_ptr() : nullptr;
}

}  // namespace fb::detail
