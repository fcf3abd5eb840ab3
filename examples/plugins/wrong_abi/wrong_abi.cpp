/// Plug-ins fusebench must refuse to load, one line and exit status 2 each, built from this one file:
///   -DEXAMPLE_ABI_VERSION=999     built against another ABI version (a future header): refused before
///                                 anything else is called;
///   (no definition)               no fusebench_plugin_abi_version symbol at all;
///   -DEXAMPLE_UNKNOWN_MODEL       the right version, but it registers a model the registry lacks ("99").
#include <fusebench/plugin.h>

#if defined(EXAMPLE_UNKNOWN_MODEL)
FUSEBENCH_PLUGIN_DEFINE_ABI_VERSION()

namespace {
int run(const fusebench_call*, void*, char*, size_t) { return 0; }
}  // namespace

extern "C" FUSEBENCH_PLUGIN_EXPORT int fusebench_plugin_init(const fusebench_host* host) {
  fusebench_implementation impl{};
  impl.model = "99";
  impl.name = "no_such_model";
  impl.devices = FUSEBENCH_DEVICES_CPU;
  impl.run = run;
  return host->add_implementation(host, &impl);
}
#else
#ifdef EXAMPLE_ABI_VERSION
extern "C" FUSEBENCH_PLUGIN_EXPORT int32_t fusebench_plugin_abi_version(void) { return EXAMPLE_ABI_VERSION; }
#endif

extern "C" FUSEBENCH_PLUGIN_EXPORT int fusebench_plugin_init(const fusebench_host* host) {
  // Never reached: the version is checked first.
  host->set_error(host, "init was called although the ABI version was not checked");
  return 1;
}
#endif
