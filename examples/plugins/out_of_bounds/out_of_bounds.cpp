/// A plug-in for KernelBench #44 whose values are right but which writes one element past its output
/// (an off-by-one `<=` in a "zero the output first" loop): fusebench's guard canaries around the output
/// catch it (mismatch out_of_bounds).
#include "../common/mul_gap_plugin.h"

namespace {

int run(const fusebench_call* call, void*, char* error, size_t error_size) {
  example::problem p{};
  example::tensors t;
  if (!example::read_call(call, &p, &t, error, error_size)) return 1;
  for (int64_t i = 0; i <= p.batch * p.out_channels; ++i) t.out[i] = 0.0f;  // the bug: <= writes out[B*C_out]
  example::run_host(p, t, static_cast<double*>(call->workspace));
  return 0;
}

}  // namespace

FUSEBENCH_PLUGIN_DEFINE_ABI_VERSION()

extern "C" FUSEBENCH_PLUGIN_EXPORT int fusebench_plugin_init(const fusebench_host* host) {
  return example::add_cpu_implementation(host, "44", "mul_gap_past_the_end", run);
}
