#pragma once
/// One adapter from the registry's tensors to a torch-free fused API (fused/<model>.h), shared by
/// every model with a fused implementation: the name and device, the workspace size, the checked raw
/// pointers (contiguous float32 on the right device), the workspace, and torch's current stream.
/// A model file only says which parameters the kernel takes and which entry point to call.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fused/common/stream.h"
#include "harness/detail/raw_pointers.h"
#include "harness/device.h"
#include "harness/model_entry.h"

namespace fb::detail {

/// The raw arguments of one fused call.
struct fused_args {
  const float* input = nullptr;
  std::vector<const float*> params;  ///< in the order the adapter was given the names
  float* output = nullptr;
  void* workspace = nullptr;        ///< null when no workspace was asked for
  device_kind device = device_kind::cpu;
  fused::stream_t stream = nullptr;  ///< torch's current stream on CUDA; null on the CPU
};

/// A typed_implementation named "fused_cuda" or "fused_host" that calls
/// call(config, args) with the pointers of `param_names` (state_dict keys).
template <class Config>
typed_implementation<Config> fused_implementation(device_kind device, std::vector<std::string> param_names,
                                                  std::function<std::size_t(const Config&)> workspace_bytes,
                                                  std::function<void(const Config&, const fused_args&)> call) {
  typed_implementation<Config> impl;
  impl.name = device == device_kind::cuda ? "fused_cuda" : "fused_host";
  impl.device = device;
  impl.workspace_bytes = std::move(workspace_bytes);
  impl.run = [device, names = std::move(param_names), call = std::move(call)](const Config& c, const model_case& k,
                                                                              output_slots& s) {
    fused_args a;
    a.device = device;
    a.input = float_data(k.input, device, "input");
    for (const std::string& name : names) a.params.push_back(param_data(k, name, device));
    a.output = mutable_float_data(s.output, device, "output");
    a.workspace = workspace_data(s);
    if (device == device_kind::cuda) a.stream = current_cuda_stream();
    call(c, a);
  };
  return impl;
}

}  // namespace fb::detail
