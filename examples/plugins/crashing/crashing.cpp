/// A plug-in for KernelBench #44 that crashes on some configs: it indexes a fixed-size table by
/// in_channels (a "max 4 channels" assumption nobody checked), and reads through a null pointer past
/// it. Right on the configs it survives. Under --isolate (the default with plug-ins) fusebench records
/// each crashing case as failed, "crashed (signal 11, SIGSEGV)", with its repro line, and goes on.
#include <signal.h>

#include "../common/mul_gap_plugin.h"

namespace {

int run(const fusebench_call* call, void*, char* error, size_t error_size) {
  example::problem p{};
  example::tensors t;
  if (!example::read_call(call, &p, &t, error, error_size)) return 1;
  // The unchecked assumption, made deterministic: past 4 channels the "table" is a null pointer, and
  // the read faults. raise() stands for the fault so that no compiler can reason it away.
  if (p.in_channels > 4) raise(SIGSEGV);
  example::run_host(p, t, static_cast<double*>(call->workspace));
  return 0;
}

}  // namespace

FUSEBENCH_PLUGIN_DEFINE_ABI_VERSION()

extern "C" FUSEBENCH_PLUGIN_EXPORT int fusebench_plugin_init(const fusebench_host* host) {
  return example::add_cpu_implementation(host, "44", "mul_gap_crashy", run);
}
