/// The `run` shim that turns the KernelBench candidate model_new.py into a fusebench plug-in: it
/// launches the candidate's own kernels (kernel.cuh, extracted from its cuda_source by extract_cuda.py)
/// exactly as the candidate's torch wrapper does, with fusebench's tensors instead of torch's:
///   x.data_ptr<float>()                 -> call->input->data
///   weight / bias                       -> the state_dict keys conv_transpose.weight / .bias
///   torch::empty(tap sums)              -> the workspace (workspace_bytes below)
///   torch::empty(out) and return        -> call->output (preallocated by fusebench)
///   at::cuda::getCurrentCUDAStream()    -> call->stream
/// The config's constructor arguments come from call->config (the candidate took them as arguments).
#include <cstdio>

#include <fusebench/plugin.h>

#include "kernel.cuh"

namespace {

struct sizes {
  int B, C_in, C_out, H, W, K, stride, padding, output_padding;
  double multiplier;
};

bool read_sizes(const fusebench_config* c, sizes* s) {
  double v[10];
  const char* names[10] = {"batch_size", "in_channels", "out_channels", "height", "width",
                           "kernel_size", "stride", "padding", "output_padding", "multiplier"};
  for (int i = 0; i < 10; ++i)
    if (!fusebench_config_value(c, names[i], &v[i])) return false;
  *s = {int(v[0]), int(v[1]), int(v[2]), int(v[3]), int(v[4]), int(v[5]), int(v[6]), int(v[7]), int(v[8]), v[9]};
  return true;
}

size_t workspace_bytes(const fusebench_config* c, fusebench_device, void*) {
  sizes s{};
  return read_sizes(c, &s) ? sizeof(double) * size_t(s.B) * s.C_in * s.K * s.K : 0;
}

int run(const fusebench_call* call, void*, char* error, size_t error_size) {
  sizes s{};
  const fusebench_tensor* w = fusebench_find_tensor(call->params, call->num_params, "conv_transpose.weight");
  const fusebench_tensor* b = fusebench_find_tensor(call->params, call->num_params, "conv_transpose.bias");
  if (!read_sizes(&call->config, &s) || w == nullptr || b == nullptr) {
    std::snprintf(error, error_size, "not a KernelBench #44 call (config fields or parameters missing)");
    return 1;
  }
  const int H_out = (s.H - 1) * s.stride - 2 * s.padding + s.K + s.output_padding;
  const int W_out = (s.W - 1) * s.stride - 2 * s.padding + s.K + s.output_padding;
  auto* tap_sums = static_cast<double*>(call->workspace);
  const auto stream = static_cast<cudaStream_t>(call->stream);
  plane_tap_sums_kernel<<<s.B * s.C_in, 256, 256 * sizeof(double), stream>>>(
      static_cast<const float*>(call->input->data), tap_sums, s.H, s.W, s.K, s.stride, s.padding, H_out, W_out);
  combine_kernel<<<(s.B * s.C_out + 255) / 256, 256, 0, stream>>>(
      tap_sums, static_cast<const float*>(w->data), static_cast<const float*>(b->data),
      static_cast<float*>(call->output->data), s.B, s.C_in, s.C_out, s.K, 1.0 / (double(H_out) * W_out), s.multiplier);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    std::snprintf(error, error_size, "kernel launch: %s", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}

}  // namespace

FUSEBENCH_PLUGIN_DEFINE_ABI_VERSION()

extern "C" FUSEBENCH_PLUGIN_EXPORT int fusebench_plugin_init(const fusebench_host* host) {
  fusebench_implementation impl{};
  impl.model = "44";
  impl.name = "kernelbench_44";
  impl.devices = FUSEBENCH_DEVICES_CUDA;  // the candidate's kernels run on the GPU only
  impl.run = run;
  impl.workspace_bytes = workspace_bytes;
  return host->add_implementation(host, &impl);
}
