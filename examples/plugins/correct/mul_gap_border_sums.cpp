/// A correct plug-in for KernelBench #44 (convt2d_mul_gap): the border-sum algebra of
/// common/mul_gap_plugin.h on the host and, where the plug-in was built with CUDA
/// (EXAMPLE_WITH_CUDA), as a CUDA kernel (mul_gap_border_sums.cu). Registered as "mul_gap_border_sums";
/// fusebench shows it as plugin:mul_gap_border_sums.
///
/// Built with -DEXAMPLE_MAX_KERNEL=N it is "mul_gap_kN" instead, which declines configs with
/// kernel_size > N (supports()): its declined cases are counted and shown, never passed.
#include "../common/mul_gap_plugin.h"

#if EXAMPLE_WITH_CUDA
namespace example {
/// mul_gap_border_sums.cu: enqueues the kernels on `stream`; returns 0 or a CUDA error code.
int run_cuda(const problem& p, const tensors& t, double* tap_sums, void* stream, char* error, size_t error_size);
}  // namespace example
#endif

namespace {

int run(const fusebench_call* call, void*, char* error, size_t error_size) {
  example::problem p{};
  example::tensors t;
  if (!example::read_call(call, &p, &t, error, error_size)) return 1;
  if (call->workspace_bytes < example::tap_sum_bytes(p)) {
    snprintf(error, error_size, "workspace of %zu bytes, %zu needed", call->workspace_bytes, example::tap_sum_bytes(p));
    return 1;
  }
  auto* tap_sums = static_cast<double*>(call->workspace);
#if EXAMPLE_WITH_CUDA
  if (call->device == FUSEBENCH_DEVICE_CUDA) return example::run_cuda(p, t, tap_sums, call->stream, error, error_size);
#endif
  example::run_host(p, t, tap_sums);
  return 0;
}

#ifdef EXAMPLE_MAX_KERNEL
int supports(const fusebench_config* config, fusebench_device, void*, char* reason, size_t reason_size) {
  double k = 0;
  if (fusebench_config_value(config, "kernel_size", &k) && k > EXAMPLE_MAX_KERNEL) {
    snprintf(reason, reason_size, "kernel_size %g > %d, this plug-in's limit", k, EXAMPLE_MAX_KERNEL);
    return 0;
  }
  return 1;
}
#define EXAMPLE_STR2(x) #x
#define EXAMPLE_STR(x) EXAMPLE_STR2(x)
#define EXAMPLE_NAME "mul_gap_k" EXAMPLE_STR(EXAMPLE_MAX_KERNEL)
#else
#define EXAMPLE_NAME "mul_gap_border_sums"
#endif

}  // namespace

FUSEBENCH_PLUGIN_DEFINE_ABI_VERSION()

extern "C" FUSEBENCH_PLUGIN_EXPORT int fusebench_plugin_init(const fusebench_host* host) {
  fusebench_implementation impl{};
  impl.model = "44";  // or "convt2d_mul_gap"
  impl.name = EXAMPLE_NAME;
  impl.devices = FUSEBENCH_DEVICES_CPU;
#if EXAMPLE_WITH_CUDA
  impl.devices |= FUSEBENCH_DEVICES_CUDA;
#endif
  impl.run = run;
  impl.workspace_bytes = example::workspace_bytes;
#ifdef EXAMPLE_MAX_KERNEL
  impl.supports = supports;
#endif
  return host->add_implementation(host, &impl);
}
