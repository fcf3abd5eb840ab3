#include "harness/plugin/plugin_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "fusebench/plugin.h"
#include "harness/device/device.h"
#include "harness/format/shell_quote.h"
#include "harness/model/registry.h"

namespace fb::plugin {
namespace {

std::vector<std::string>& loaded() {
  static std::vector<std::string> paths;
  return paths;
}

/// One implementation as the plug-in registered it, copied (its strings may have been temporaries).
struct registered {
  std::string library;  ///< the path it came from (error messages)
  std::string name;
  fusebench_implementation impl{};
};

/// A tensor descriptor whose shape and strides live as long as it does.
struct tensor_view {
  std::string name;
  std::vector<int64_t> shape, strides;
  fusebench_tensor desc{};
};

fusebench_dtype dtype_of(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kFloat: return FUSEBENCH_FLOAT32;
    case at::kDouble: return FUSEBENCH_FLOAT64;
    case at::kLong: return FUSEBENCH_INT64;
    default: throw std::invalid_argument(fmt::format("tensor of dtype {}: the plug-in ABI has no such dtype",
                                                     c10::toString(t.scalar_type())));
  }
}

void describe(tensor_view& v, const std::string& name, const at::Tensor& t) {
  v.name = name;
  v.shape = t.sizes().vec();
  v.strides = t.strides().vec();
  v.desc.name = v.name.c_str();
  v.desc.data = t.data_ptr();
  v.desc.dtype = dtype_of(t);
  v.desc.ndim = static_cast<int32_t>(t.dim());
  v.desc.shape = v.shape.data();
  v.desc.strides = v.strides.data();
  v.desc.device = t.is_cuda() ? FUSEBENCH_DEVICE_CUDA : FUSEBENCH_DEVICE_CPU;
}

/// A parsed config as the ABI shows it: JSON text and (name, value) rows, alive as long as this is.
struct config_view {
  std::string model, text;
  std::vector<std::string> names;
  std::vector<fusebench_config_field> fields;
  fusebench_config desc{};

  config_view(const config_view&) = delete;  // desc points into this object's own strings
  config_view& operator=(const config_view&) = delete;
  config_view(const std::string& model_id, const parsed_config& config) : model(model_id), text(config.canonical.dump()) {
    for (const auto& [key, value] : config.canonical.items()) {
      if (!value.is_number() && !value.is_boolean()) continue;
      names.push_back(key);
      fields.push_back({nullptr, value.is_boolean() ? (value.get<bool>() ? 1.0 : 0.0) : value.get<double>()});
    }
    for (std::size_t i = 0; i < fields.size(); ++i) fields[i].name = names[i].c_str();
    desc.model = model.c_str();
    desc.json = text.c_str();
    desc.fields = fields.data();
    desc.num_fields = static_cast<int32_t>(fields.size());
  }
};

/// The config view of the last config an implementation saw, kept while its calls repeat it: a timed
/// call then costs the plug-in's run and a few descriptors, no JSON text (the in-tree kernels parse
/// nothing in a timed call either).
class config_cache {
 public:
  const config_view& view(const std::string& model_id, const parsed_config& config) {
    const std::lock_guard<std::mutex> lock(m_mutex);
    if (m_key != config.typed) {
      m_view = std::make_shared<const config_view>(model_id, config);
      m_key = config.typed;  // held: the address cannot be reused by another config meanwhile
    }
    return *m_view;
  }

 private:
  std::mutex m_mutex;
  std::shared_ptr<const void> m_key;
  std::shared_ptr<const config_view> m_view;
};

fusebench_device abi_device(device_kind d) { return d == device_kind::cuda ? FUSEBENCH_DEVICE_CUDA : FUSEBENCH_DEVICE_CPU; }

/// The registry's implementation of one registered plug-in implementation on one device.
implementation make_implementation(const std::string& model_id, std::shared_ptr<const registered> reg,
                                   device_kind device) {
  implementation impl;
  impl.name = name_prefix + reg->name;
  impl.device = device;
  impl.external = true;
  impl.workspace_bytes = [model_id, reg, device](const parsed_config& config) -> std::size_t {
    if (reg->impl.workspace_bytes == nullptr) return 0;
    const config_view view(model_id, config);
    return reg->impl.workspace_bytes(&view.desc, abi_device(device), reg->impl.user_data);
  };
  if (reg->impl.supports != nullptr)
    impl.declines = [model_id, reg, device](const parsed_config& config) -> std::string {
      const config_view view(model_id, config);
      char reason[512] = {0};
      if (reg->impl.supports(&view.desc, abi_device(device), reg->impl.user_data, reason, sizeof reason) != 0)
        return {};
      reason[sizeof reason - 1] = '\0';
      return reason[0] != '\0' ? std::string(reason) : std::string("the plug-in gave no reason");
    };
  impl.run = [model_id, reg, device, cache = std::make_shared<config_cache>()](const model_case& c,
                                                                              output_slots& slots) {
    const config_view& config = cache->view(model_id, c.config);
    tensor_view input, output;
    describe(input, "input", c.input);
    describe(output, "output", slots.output);
    std::vector<tensor_view> params(c.params.size()), buffers(slots.buffers.size());
    std::size_t i = 0;
    for (const auto& [name, t] : c.params) describe(params[i++], name, t);
    i = 0;
    for (const auto& [name, t] : slots.buffers) describe(buffers[i++], name, t);
    std::vector<fusebench_tensor> param_descs, buffer_descs;
    for (const tensor_view& v : params) param_descs.push_back(v.desc);
    for (const tensor_view& v : buffers) buffer_descs.push_back(v.desc);
    fusebench_call call{};
    call.config = config.desc;
    call.device = abi_device(device);
    call.input = &input.desc;
    call.params = param_descs.data();
    call.num_params = static_cast<int32_t>(param_descs.size());
    call.buffers = buffer_descs.data();
    call.num_buffers = static_cast<int32_t>(buffer_descs.size());
    call.output = &output.desc;
    const bool has_workspace = slots.workspace.defined() && slots.workspace.numel() > 0;
    call.workspace = has_workspace ? slots.workspace.data_ptr() : nullptr;
    call.workspace_bytes = has_workspace ? static_cast<std::size_t>(slots.workspace.numel()) : 0;
    call.stream = device == device_kind::cuda ? static_cast<void*>(current_cuda_stream()) : nullptr;
    char error[512] = {0};
    if (reg->impl.run(&call, reg->impl.user_data, error, sizeof error) != 0) {
      error[sizeof error - 1] = '\0';
      throw std::runtime_error(fmt::format("{}{}: run returned an error: {}", name_prefix, reg->name,
                                           error[0] != '\0' ? error : "(no message)"));
    }
  };
  return impl;
}

bool valid_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == '-' || ch == '.';
  });
}

/// What fusebench_plugin_init's calls leave behind: the accepted implementations and the first error.
struct registration {
  std::string library;
  std::vector<std::pair<std::string, implementation>> accepted;  ///< (model id, implementation)
  std::string error;
};

int add_implementation_call(const fusebench_host* host, const fusebench_implementation* impl) {
  auto* reg = static_cast<registration*>(host->context);
  const auto refuse = [reg](const std::string& why) {
    if (reg->error.empty()) reg->error = why;
    return 1;
  };
  if (impl == nullptr) return refuse("add_implementation got a null implementation");
  const std::string name = impl->name != nullptr ? impl->name : "";
  if (!valid_name(name))
    return refuse(fmt::format("implementation name \"{}\": must be letters, digits, '_', '-' or '.'", name));
  if (impl->run == nullptr) return refuse(fmt::format("implementation {}: no run function", name));
  if (impl->devices == 0 || (impl->devices & ~(FUSEBENCH_DEVICES_CPU | FUSEBENCH_DEVICES_CUDA)) != 0)
    return refuse(fmt::format("implementation {}: devices = {:#x}, must be FUSEBENCH_DEVICES_CPU and/or "
                              "FUSEBENCH_DEVICES_CUDA", name, impl->devices));
  const std::string model_arg = impl->model != nullptr ? impl->model : "";
  const model_entry* model = nullptr;
  try {
    model = &find_model(model_arg);
  } catch (const std::invalid_argument& e) {
    return refuse(fmt::format("implementation {}: {}", name, e.what()));
  }
  auto copy = std::make_shared<registered>();
  copy->library = reg->library;
  copy->name = name;
  copy->impl = *impl;
  copy->impl.name = copy->name.c_str();
  copy->impl.model = model->id.c_str();  // the registry's string lives as long as the process
  for (const device_kind d : {device_kind::cpu, device_kind::cuda})
    if ((impl->devices & (1u << static_cast<unsigned>(abi_device(d)))) != 0)
      reg->accepted.emplace_back(model->id, make_implementation(model->id, copy, d));
  return 0;
}

void set_error_call(const fusebench_host* host, const char* message) {
  auto* reg = static_cast<registration*>(host->context);
  if (reg->error.empty() && message != nullptr) reg->error = message;
}

void load_one(const std::string& path) {
  const auto fail = [&path](const std::string& why) {
    throw std::invalid_argument(fmt::format("--plugin {}: {}", path, why));
  };
  // A path without a '/' would be searched for on the library path: a plug-in is always a file.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    fail(fmt::format("cannot load the library: {}", e != nullptr ? e : "unknown error"));
  }
  // Never dlclose'd: its functions are called until the process ends.
  const auto version = reinterpret_cast<fusebench_plugin_abi_version_fn>(dlsym(handle, "fusebench_plugin_abi_version"));
  if (version == nullptr)
    fail("no symbol fusebench_plugin_abi_version (define it with FUSEBENCH_PLUGIN_DEFINE_ABI_VERSION())");
  if (const int32_t v = version(); v != FUSEBENCH_PLUGIN_ABI_VERSION)
    fail(fmt::format("built against plug-in ABI version {}, this fusebench loads version {} (rebuild it against "
                     "this fusebench's include/fusebench/plugin.h)", v, FUSEBENCH_PLUGIN_ABI_VERSION));
  const auto init = reinterpret_cast<fusebench_plugin_init_fn>(dlsym(handle, "fusebench_plugin_init"));
  if (init == nullptr) fail("no symbol fusebench_plugin_init");
  registration reg;
  reg.library = path;
  fusebench_host host{FUSEBENCH_PLUGIN_ABI_VERSION, &reg, add_implementation_call, set_error_call};
  // A C++ exception out of the plug-in's init is the library's failure to load, said with its name
  // (it would otherwise reach the command as an anonymous error).
  int status = 0;
  try {
    status = init(&host);
  } catch (const std::exception& e) {
    fail(fmt::format("fusebench_plugin_init threw an exception: {}", e.what()));
  } catch (...) {
    fail("fusebench_plugin_init threw an exception that is not a std::exception");
  }
  if (status != 0)
    fail(fmt::format("fusebench_plugin_init returned {}{}", status, reg.error.empty() ? "" : ": " + reg.error));
  if (!reg.error.empty()) fail(reg.error);
  if (reg.accepted.empty()) fail("fusebench_plugin_init registered no implementation");
  for (auto& [model, impl] : reg.accepted) {
    try {
      add_implementation(model, std::move(impl));
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
  }
}

}  // namespace

std::vector<std::string> plugin_paths(const std::vector<std::string>& given) {
  std::vector<std::string> paths;
  const auto add = [&paths](const std::string& p) {
    if (!p.empty() && std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
  };
  for (const std::string& p : given) add(p);
  if (const char* env = std::getenv("FUSEBENCH_PLUGINS")) {
    const std::string list = env;
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t end = std::min(list.find(':', start), list.size());
      add(list.substr(start, end - start));
      start = end + 1;
    }
  }
  return paths;
}

void load_plugins(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    if (std::find(loaded().begin(), loaded().end(), path) != loaded().end()) continue;
    load_one(path);
    loaded().push_back(path);
  }
}

const std::vector<std::string>& loaded_plugins() { return loaded(); }

std::vector<std::string> registered_implementations() {
  std::vector<std::string> names;
  for (const model_entry& m : all_models())
    for (const implementation& impl : m.fused)
      if (impl.external) names.push_back(impl.name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string plugin_arguments() {
  std::string args;
  for (const std::string& p : loaded()) args += " --plugin " + format::shell_quoted(p);
  return args;
}

}  // namespace fb::plugin
