/// Registry entry for KernelBench #44: ConvTranspose2d -> * multiplier -> global average pool (x2).
#include "fused/convt2d_mul_gap/convt2d_mul_gap.h"
#include "fused/convt2d_mul_gap/plan.h"
#include "harness/detail/fused_adapter.h"
#include "harness/device/device.h"
#include "harness/model/built_in_models.h"
#include "harness/model/typed_model.h"
#include "harness/models/convt2d_mul_gap_domain.h"
#include "reference/convt2d_mul_gap.h"

namespace fb::models {
namespace {
namespace model = ref::convt2d_mul_gap;
using model::config;

namespace fused = fb::fused::convt2d_mul_gap;

// Configs that cross the kernel's work items: planes of one to three items (an item is up to
// k_item_elems = 32768 elements of one (b, ci) plane, fused/convt2d_mul_gap/plan.h).
rc::Gen<config> gen_boundary_config(const fuzz_budget& budget) {
  const domain::convt_domain& rules = convt2d_mul_gap_domain();
  return rc::gen::exec([rules, budget] {
    config c = gen::config_of<config>(
        *gen::large_plane_geometry(rules, budget, fused::detail::k_item_elems, 3));
    c.multiplier = *gen::real_field(rules.reals.at(0)).as("multiplier");  // the domain's multiplier
    return c;
  });
}

fused::problem to_problem(const config& c) {
  return {c.batch_size, c.in_channels,    c.out_channels, c.height, c.width, c.kernel_size,
          c.stride,     c.padding,        c.output_padding, static_cast<float>(c.multiplier)};
}

// The fused implementations: the same algebra (SPEC §1.4 border sums) as a host executor and as
// CUDA kernels; both write (B, C_out) into the harness's (B, C_out, 1, 1) output.
typed_implementation<config> fused_implementation(device_kind device) {
  return detail::fused_implementation<config>(
      device, {"conv_transpose.weight", "conv_transpose.bias"},
      [](const config& c) { return fused::workspace_bytes(to_problem(c)); },
      [](const config& c, const detail::fused_args& a) {
        const auto& p = a.params;
        if (a.device == device_kind::cuda)
          fused::run_cuda(to_problem(c), a.input, p[0], p[1], a.output, a.workspace, a.stream);
        else
          fused::run_host(to_problem(c), a.input, p[0], p[1], a.output, a.workspace);
      });
}

}  // namespace

model_entry convt2d_mul_gap() {
  typed_model<config> m{
      "convt2d_mul_gap",
      44,
      "ConvTranspose2d -> * multiplier -> mean over (H,W) -> mean over (H,W)",
      convt2d_mul_gap_domain(),
      config_schema<config>({
          make_field("in_channels", &config::in_channels, "input channels C_in"),
          make_field("out_channels", &config::out_channels, "output channels C_out"),
          make_field("kernel_size", &config::kernel_size, "square kernel size k"),
          make_field("stride", &config::stride, "stride s"),
          make_field("padding", &config::padding, "padding p"),
          make_field("output_padding", &config::output_padding, "output padding op (< stride)"),
          make_field("multiplier", &config::multiplier, "scalar multiplier"),
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
  // No normalisation: each output element (a global mean of one (b, c)) is its own group. The factor: see README "Verdict rules" (measured).
  m.allowance_unit = {{}, 1.0, "per element (no normalisation)"};
  // The floor of the fused algorithm: x read once, weights and bias read, (B, C_out) written; the
  // arithmetic is one add per input element plus the small tap GEMM.
  m.fused_work = [](const config& c) {
    const double x = elements(c.batch_size, c.in_channels, {c.height, c.width});
    const double w = elements(c.in_channels, c.out_channels, {c.kernel_size, c.kernel_size});
    const double out = elements(c.batch_size, c.out_channels, {});
    return work_estimate{4.0 * (x + w + c.out_channels + out),
                         x + 2.0 * c.batch_size * w};
  };
  m.sweep_variants = [](const config& base) {
    auto v = batch_variants(base, {{"batch x0.125", 2}, {"batch x0.5", 8}, {"batch x2", 32}});
    for (auto [label, side] : {std::pair{"spatial x0.25", 64}, {"spatial x2", 181}}) {
      config c = base;
      c.height = c.width = side;
      v.emplace_back(label, c);
    }
    return v;
  };
  return erase(std::move(m));
}

}  // namespace fb::models
