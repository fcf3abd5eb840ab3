#pragma once
/// Outside implementations (`--plugin LIB.so`, FUSEBENCH_PLUGINS): shared libraries written against
/// include/fusebench/plugin.h whose implementations join the registry as `plugin:<name>`, judged and
/// timed like the in-tree fused ones.
#include <string>
#include <vector>

namespace fb::plugin {

/// What an outside implementation is called everywhere (verify, bench, report, compare).
inline constexpr const char* name_prefix = "plugin:";

/// The plug-in paths of a run: `given` (each --plugin) then FUSEBENCH_PLUGINS (':'-separated), in that
/// order, each once.
[[nodiscard]] std::vector<std::string> plugin_paths(const std::vector<std::string>& given);

/// Loads each library (dlopen), checks fusebench_plugin_abi_version() against
/// FUSEBENCH_PLUGIN_ABI_VERSION, calls fusebench_plugin_init, and adds every implementation it registers
/// to the registry (add_implementation), once per device it names. A path loaded before is skipped.
/// Throws std::invalid_argument, one line naming the library: it cannot be opened, a symbol is
/// missing, its ABI version differs, its init fails, or it registers an unknown model, a bad name or
/// devices, no run function, or a name twice.
void load_plugins(const std::vector<std::string>& paths);

/// The libraries loaded so far, as given (a repro line or a child process loads them again).
[[nodiscard]] const std::vector<std::string>& loaded_plugins();

/// The plug-ins' implementations in the registry ("plugin:<name>", sorted, each once whatever its
/// devices and models): the plug-in set a results file records, so that merge joins only shards that
/// loaded the same plug-ins.
[[nodiscard]] std::vector<std::string> registered_implementations();

/// `--plugin P` for each loaded library: what a repro line of a plug-in's case needs.
[[nodiscard]] std::string plugin_arguments();

}  // namespace fb::plugin
