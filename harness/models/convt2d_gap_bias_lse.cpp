/// Registry entry for KernelBench #42: ConvTranspose2d -> GAP -> + bias -> logsumexp -> sum -> * 10.
#include "fused/convt2d_gap_bias_lse/convt2d_gap_bias_lse.h"
#include "fused/runtime/plan_util.h"
#include "harness/detail/fused_adapter.h"
#include "harness/device/device.h"
#include "harness/model/built_in_models.h"
#include "harness/model/typed_model.h"
#include "harness/models/convt2d_gap_bias_lse_domain.h"
#include "reference/convt2d_gap_bias_lse.h"

namespace fb::models {
namespace {
namespace model = ref::convt2d_gap_bias_lse;
using model::config;

namespace fused = fb::fused::convt2d_gap_bias_lse;

// Configs that cross the kernel's plane chunks: planes of one to four chunks (a chunk is
// k_chunk_elems = 4096 elements of one (b, ci) plane, fused/runtime/plan_util.h).
rc::Gen<config> gen_boundary_config(const fuzz_budget& budget) {
  const domain::convt_domain& rules = convt2d_gap_bias_lse_domain();
  return rc::gen::map(gen::large_plane_geometry(rules, budget, fb::fused::detail::k_chunk_elems, 4),
                      [](const gen::convt_geometry& g) { return gen::config_of<config>(g); });
}

fused::problem to_problem(const config& c) {
  return {c.batch_size, c.in_channels, c.out_channels, c.height, c.width, c.kernel_size};
}

// The fused implementations: input plane sums x tap-summed weights (SPEC §1.3), then a stable
// logsumexp; host executor and CUDA kernels share the math in fused/math/.
typed_implementation<config> fused_implementation(device_kind device) {
  return detail::fused_implementation<config>(
      device, {"conv_transpose.weight", "conv_transpose.bias", "bias"},
      [](const config& c) { return fused::workspace_bytes(to_problem(c)); },
      [](const config& c, const detail::fused_args& a) {
        const auto& p = a.params;
        if (a.device == device_kind::cuda)
          fused::run_cuda(to_problem(c), a.input, p[0], p[1], p[2], a.output, a.workspace, a.stream);
        else
          fused::run_host(to_problem(c), a.input, p[0], p[1], p[2], a.output, a.workspace);
      });
}

}  // namespace

model_entry convt2d_gap_bias_lse() {
  typed_model<config> m{
      "convt2d_gap_bias_lse",
      42,
      "ConvTranspose2d (stride 1) -> mean over (H,W) -> + bias -> logsumexp over C -> sum -> * 10",
      convt2d_gap_bias_lse_domain(),
      config_schema<config>({
          make_field("in_channels", &config::in_channels, "input channels C_in"),
          make_field("out_channels", &config::out_channels, "output channels C_out"),
          make_field("kernel_size", &config::kernel_size, "square kernel size k"),
          make_field("batch_size", &config::batch_size, "batch B"),
          make_field("height", &config::height, "input height H"),
          make_field("width", &config::width, "input width W"),
      })};
  use_reference<config>(m,
                        {model::validate, model::input_shape, model::output_shape, model::conv_output_shape,
                         model::make_parameters, model::forward, model::oracle},
                        2);
  m.gen_boundary_config = gen_boundary_config;
  detail::add_fused_implementations(m, fused_implementation);
  // No normalisation: each output element (a logsumexp over channels of global means) is its own
  // group. The factor: see README "Verdict rules" (measured).
  m.allowance_unit = {{}, 1.0, "per element (no normalisation)"};
  // The floor: x read once (it dominates: 1.07 GB at the default size), parameters read, B floats
  // written; one add per input element plus the (B x C_in) x (C_in x C_out) product.
  m.fused_work = [](const config& c) {
    const double x = elements(c.batch_size, c.in_channels, {c.height, c.width});
    const double w = elements(c.in_channels, c.out_channels, {c.kernel_size, c.kernel_size});
    return work_estimate{4.0 * (x + w + 2.0 * c.out_channels + c.batch_size),
                         x + w + 2.0 * c.batch_size * c.in_channels * c.out_channels};
  };
  m.sweep_variants = [](const config& base) {
    auto v = batch_variants(base, {{"batch x0.125", 2}, {"batch x0.5", 8}, {"batch x2", 32}});
    config small = base;
    small.height = small.width = 256;
    v.emplace_back("spatial x0.25", small);
    return v;
  };
  return erase(std::move(m));
}

}  // namespace fb::models
