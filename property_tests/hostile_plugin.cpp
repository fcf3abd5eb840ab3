/// Hostile plug-ins for KernelBench #44 (issue 40): what a plug-in can do to the process that loads it
/// besides crashing (examples/plugins/crashing). One source, one behaviour per build (property_tests/
/// plugins.cmake builds each into <build>/hostile_plugins/; plugins_hostile_test.sh runs them):
///   HOSTILE_EXIT=N        exits with status N (0, 1, 3) on the configs with in_channels > 4, right elsewhere
///   HOSTILE_HANG          sleeps forever on the configs with in_channels > 4, right elsewhere
///   HOSTILE_CRASH_ALWAYS  raises SIGSEGV on every call: a shard's last case crashes too
///   HOSTILE_CUDA_ONLY     registers for CUDA only
///   HOSTILE_INIT_THROWS   throws a C++ exception out of fusebench_plugin_init
///   HOSTILE_INIT_SIGINT   raises SIGINT in fusebench_plugin_init: a Ctrl-C before the first case
///   HOSTILE_SIGINTS=N     raises SIGINT N times in its first call, then computes right: a Ctrl-C
///                         pressed N times while the run finishes the case in progress
/// The correct math is the example's (examples/plugins/common/mul_gap_plugin.h).
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <stdexcept>

#include "examples/plugins/common/mul_gap_plugin.h"

namespace {

/// What the "unchecked assumption" of each behaviour selects: the configs past 4 input channels.
bool hostile_config(const example::problem& p) { return p.in_channels > 4; }

int run(const fusebench_call* call, void*, char* error, size_t error_size) {
  example::problem p{};
  example::tensors t;
  if (!example::read_call(call, &p, &t, error, error_size)) return 1;
#if defined(HOSTILE_EXIT)
  if (hostile_config(p)) exit(HOSTILE_EXIT);
#elif defined(HOSTILE_HANG)
  if (hostile_config(p))
    for (;;) pause();
#elif defined(HOSTILE_CRASH_ALWAYS)
  raise(SIGSEGV);
#elif defined(HOSTILE_SIGINTS)
  static bool interrupted = false;  // the first call only: a stopping run still finishes its case
  if (!interrupted) {
    interrupted = true;
    for (int i = 0; i < HOSTILE_SIGINTS; ++i) raise(SIGINT);
  }
#endif
  (void)hostile_config;
  example::run_host(p, t, static_cast<double*>(call->workspace));
  return 0;
}

}  // namespace

FUSEBENCH_PLUGIN_DEFINE_ABI_VERSION()

extern "C" FUSEBENCH_PLUGIN_EXPORT int fusebench_plugin_init(const fusebench_host* host) {
#if defined(HOSTILE_INIT_THROWS)
  throw std::runtime_error("hostile_init_throws: a table the plug-in needs is missing");
#elif defined(HOSTILE_INIT_SIGINT)
  raise(SIGINT);
  return example::add_cpu_implementation(host, "44", HOSTILE_NAME, run);
#elif defined(HOSTILE_CUDA_ONLY)
  fusebench_implementation impl{};
  impl.model = "44";
  impl.name = HOSTILE_NAME;
  impl.devices = FUSEBENCH_DEVICES_CUDA;
  impl.run = run;
  impl.workspace_bytes = example::workspace_bytes;
  return host->add_implementation(host, &impl);
#else
  return example::add_cpu_implementation(host, "44", HOSTILE_NAME, run);
#endif
}
