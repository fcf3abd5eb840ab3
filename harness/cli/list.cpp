/// `fusebench list`: the registered models, their defaults, shapes, fuzz domain and implementations.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include "harness/cli/commands.h"
#include "harness/device/device.h"
#include "harness/model/registry.h"

namespace fb::cli {
namespace {

struct list_options {
  bool json_output = false;
};

json range_json(const domain::integer_range& r) { return {{"min", r.lo}, {"max", r.hi}}; }

/// The declared fuzz domain as data (harness/model/fuzz_domain.h), plus its one-line description.
json domain_json(const domain::convt_domain& d) {
  json reals = json::array();
  for (const domain::real_field& r : d.reals)
    reals.push_back({{"name", r.name},
                     {"min", r.lo},
                     {"max", r.hi},
                     {"distribution", r.dist == domain::distribution::log_uniform ? "log_uniform" : "uniform"}});
  json out = {{"description", domain::describe(d)},
              {"spatial_dims", d.dims},
              {"batch_size", range_json(d.batch)},
              {"channels", range_json(d.channels)},
              {"kernel_size", range_json(d.kernel)},
              {"spatial", range_json(d.spatial)},
              {"out_channels_is_last_output_dim", d.last_dim_is_channels},
              {"reals", reals},
              {"flags", d.flags},
              {"input_offset", d.input_offset}};
  if (d.strided) {
    out["stride"] = range_json(d.stride);
    out["padding"] = {{"min", 0},
                      {"max", "kernel_size; one case in " + std::to_string(d.wide_padding_one_in) +
                                  ": the largest with a non-empty output"}};
  }
  if (d.output_padding) out["output_padding"] = {{"min", 0}, {"max", "stride - 1"}};
  return out;
}

int run_list(const list_options& opt) {
  if (opt.json_output) {
    json out = json::array();
    for (const model_entry& m : all_models()) {
      json impls = json::array({"reference"});
      for (const implementation& i : m.fused) impls.push_back(i.name);
      out.push_back({{"id", m.id},
                     {"kernelbench_id", m.kernelbench_id},
                     {"description", m.description},
                     {"default_config", m.default_config},
                     {"output_shape", m.output_shape(m.parse(m.default_config))},
                     {"fuzz_domain", domain_json(m.fuzz_domain)},
                     {"implementations", impls}});
    }
    fmt::print("{}\n", out.dump(2));
    return exit_ok;
  }
  for (const model_entry& m : all_models()) {
    std::vector<std::string> impls{"reference (cpu, cuda)"};
    for (const implementation& i : m.fused) impls.push_back(fmt::format("{} ({})", i.name, to_string(i.device)));
    fmt::print("{}  (KernelBench #{})\n", m.id, m.kernelbench_id);
    fmt::print("  {}\n", m.description);
    fmt::print("  default config : {}\n", m.default_config.dump());
    const parsed_config defaults = m.parse(m.default_config);
    fmt::print("  input shape    : {}\n", m.input_shape(defaults));
    fmt::print("  output shape   : {}\n", m.output_shape(defaults));
    fmt::print("  fuzz domain    : {}\n", domain::describe(m.fuzz_domain));
    fmt::print("  implementations: {}\n\n", fmt::join(impls, ", "));
  }
  fmt::print("devices: cpu{}\n", cuda_available() ? ", cuda (" + device_name(device_kind::cuda) + ")" : "");
  return exit_ok;
}

}  // namespace

void add_list_command(CLI::App& app, command_action& run) {
  auto opt = std::make_shared<list_options>();
  CLI::App* cmd = app.add_subcommand("list", "List the models, their default configs, shapes and implementations");
  cmd->add_flag("--json", opt->json_output, "Print JSON instead of text");
  cmd->footer("Examples:\n  fusebench list\n  fusebench list --json");
  cmd->callback([opt, &run] { run = [opt] { return run_list(*opt); }; });
}

}  // namespace fb::cli
