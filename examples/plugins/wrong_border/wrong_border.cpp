/// A plausible wrong plug-in for KernelBench #44: the "GAP of a transposed convolution is the sum of
/// the input times the sum of the weights" shortcut, which drops the border term (with padding > 0 the
/// outer taps of the border inputs fall outside the cropped output). Right whenever padding is 0, so a
/// test on the default config alone (padding 0... or a lucky shape) can pass it; fusebench's fuzz
/// draws padded configs and rejects it under the values rule.
#include "../common/mul_gap_plugin.h"

namespace {

int run(const fusebench_call* call, void*, char* error, size_t error_size) {
  example::problem p{};
  example::tensors t;
  if (!example::read_call(call, &p, &t, error, error_size)) return 1;
  example::run_host(p, t, static_cast<double*>(call->workspace), /*drop_border=*/true);
  return 0;
}

}  // namespace

FUSEBENCH_PLUGIN_DEFINE_ABI_VERSION()

extern "C" FUSEBENCH_PLUGIN_EXPORT int fusebench_plugin_init(const fusebench_host* host) {
  return example::add_cpu_implementation(host, "convt2d_mul_gap", "mul_gap_no_border", run);
}
