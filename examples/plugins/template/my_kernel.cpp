// A fusebench plug-in in one file: KernelBench #44 (ConvTranspose2d -> * multiplier -> mean over
// (H', W'), twice), written the plain way on the CPU: every output element of the transposed
// convolution, summed. Replace run() with your kernel (a CUDA one: add FUSEBENCH_DEVICES_CUDA and
// enqueue on call->stream); fusebench judges it with `fusebench verify --plugin build/libmy_kernel.so`.
#include <fusebench/plugin.h>

#include <cstdio>
#include <vector>

namespace {

int run(const fusebench_call* call, void*, char* error, size_t error_size) {
  const fusebench_config* c = &call->config;
  double B, Ci, Co, H, W, K, S, P, OP, mult;
  if (!fusebench_config_value(c, "batch_size", &B) || !fusebench_config_value(c, "in_channels", &Ci) ||
      !fusebench_config_value(c, "out_channels", &Co) || !fusebench_config_value(c, "height", &H) ||
      !fusebench_config_value(c, "width", &W) || !fusebench_config_value(c, "kernel_size", &K) ||
      !fusebench_config_value(c, "stride", &S) || !fusebench_config_value(c, "padding", &P) ||
      !fusebench_config_value(c, "output_padding", &OP) || !fusebench_config_value(c, "multiplier", &mult)) {
    std::snprintf(error, error_size, "not a config of model 44");
    return 1;
  }
  const fusebench_tensor* w = fusebench_find_tensor(call->params, call->num_params, "conv_transpose.weight");
  const fusebench_tensor* b = fusebench_find_tensor(call->params, call->num_params, "conv_transpose.bias");
  const auto* x = static_cast<const float*>(call->input->data);
  const auto* weight = static_cast<const float*>(w->data);
  const auto* bias = static_cast<const float*>(b->data);
  auto* out = static_cast<float*>(call->output->data);
  const long batch = long(B), cin = long(Ci), cout = long(Co), h_in = long(H), w_in = long(W), k = long(K),
             s = long(S), p = long(P);
  const long h_out = (h_in - 1) * s - 2 * p + k + long(OP), w_out = (w_in - 1) * s - 2 * p + k + long(OP);
  std::vector<double> plane(static_cast<size_t>(h_out * w_out));
  for (long n = 0; n < batch; ++n)
    for (long co = 0; co < cout; ++co) {
      // The transposed convolution's (n, co) plane, then its mean.
      for (double& v : plane) v = bias[co];
      for (long ci = 0; ci < cin; ++ci)
        for (long i = 0; i < h_in; ++i)
          for (long j = 0; j < w_in; ++j)
            for (long kh = 0; kh < k; ++kh)
              for (long kw = 0; kw < k; ++kw) {
                const long oh = i * s - p + kh, ow = j * s - p + kw;
                if (oh < 0 || oh >= h_out || ow < 0 || ow >= w_out) continue;
                plane[oh * w_out + ow] += double(x[((n * cin + ci) * h_in + i) * w_in + j]) *
                                          double(weight[((ci * cout + co) * k + kh) * k + kw]);
              }
      double sum = 0;
      for (const double v : plane) sum += v;
      out[n * cout + co] = float(mult * sum / double(h_out * w_out));
    }
  return 0;
}

}  // namespace

FUSEBENCH_PLUGIN_DEFINE_ABI_VERSION()

extern "C" FUSEBENCH_PLUGIN_EXPORT int fusebench_plugin_init(const fusebench_host* host) {
  fusebench_implementation impl{};
  impl.model = "44";
  impl.name = "my_kernel";
  impl.devices = FUSEBENCH_DEVICES_CPU;
  impl.run = run;
  return host->add_implementation(host, &impl);
}
