#pragma once
/// One adapter from the registry's tensors to a torch-free fused API (fused/<model>.h), shared by
/// every model with a fused implementation: the name and device, the workspace size, the checked raw
/// pointers (contiguous float32 on the right device), the workspace, and torch's current stream.
/// A model file only says which parameters the kernel takes and which entry point to call.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fused/runtime/stream.h"
#include "harness/detail/raw_pointers.h"
#include "harness/device/device.h"
#include "harness/model/typed_model.h"

namespace fb::detail {

/// The raw arguments of one fused call.
struct fused_args {
  const float* input = nullptr;
  std::vector<const float*> params;  ///< in the order the adapter was given the names
  /// The in-place buffers (BatchNorm's running_mean, running_var as float, num_batches_tracked as
  /// int64), in the order the adapter was given their names; empty for models without buffers.
  std::vector<void*> buffers;
  float* output = nullptr;
  void* workspace = nullptr;        ///< null when no workspace was asked for
  device_kind device = device_kind::cpu;
  fused::stream_t stream = nullptr;  ///< torch's current stream on CUDA; null on the CPU
};

/// A parameter the fused call reads: its state_dict key; an optional one (a conv bias the config
/// switches off) is passed as a null pointer when the case has no such parameter.
struct param_arg {
  std::string name;
  bool optional = false;
  param_arg(const char* n) : name(n) {}  // NOLINT: a plain key reads as a required parameter
  param_arg(std::string n, bool opt = false) : name(std::move(n)), optional(opt) {}
};

/// An in-place buffer the fused call updates: its state_dict key and dtype.
struct buffer_arg {
  std::string name;
  at::ScalarType dtype = at::kFloat;
};

/// The BatchNorm buffers under `prefix`, in the order fused APIs take them: running_mean,
/// running_var (float) and num_batches_tracked (int64).
[[nodiscard]] inline std::vector<buffer_arg> batch_norm_buffers(const std::string& prefix) {
  return {{prefix + ".running_mean", at::kFloat},
          {prefix + ".running_var", at::kFloat},
          {prefix + ".num_batches_tracked", at::kLong}};
}

/// A typed_implementation named "fused_cuda" or "fused_host" that calls
/// call(config, args) with the pointers of `param_names` (state_dict keys) and of the in-place
/// `buffers`.
template <class Config>
typed_implementation<Config> fused_implementation(device_kind device, std::vector<param_arg> param_names,
                                                  std::function<std::size_t(const Config&)> workspace_bytes,
                                                  std::function<void(const Config&, const fused_args&)> call,
                                                  std::vector<buffer_arg> buffers = {}) {
  typed_implementation<Config> impl;
  impl.name = device == device_kind::cuda ? "fused_cuda" : "fused_host";
  impl.device = device;
  impl.workspace_bytes = std::move(workspace_bytes);
  impl.run = [device, names = std::move(param_names), call = std::move(call), buffers = std::move(buffers)](
                 const Config& c, const model_case& k, output_slots& s) {
    fused_args a;
    a.device = device;
    a.input = float_data(k.input, device, "input");
    for (const param_arg& p : names)
      a.params.push_back(p.optional && k.params.count(p.name) == 0 ? nullptr : param_data(k, p.name, device));
    for (const buffer_arg& b : buffers) a.buffers.push_back(buffer_data(s, b.name, b.dtype, device));
    a.output = mutable_float_data(s.output, device, "output");
    a.workspace = workspace_data(s);
    if (device == device_kind::cuda) a.stream = current_cuda_stream();
    call(c, a);
  };
  return impl;
}

/// Adds a model's fused implementation on every device this build has: the host executor always, the
/// CUDA kernels where the build has nvcc (FUSEBENCH_HAVE_CUDA). `make(device)` returns one of them.
template <class Config, class Make>
void add_fused_implementations(typed_model<Config>& m, Make make) {
  m.fused.push_back(make(device_kind::cpu));
#if FUSEBENCH_HAVE_CUDA
  m.fused.push_back(make(device_kind::cuda));
#endif
}

}  // namespace fb::detail
