/// Registry entry for KernelBench #34: ConvTranspose3d -> LayerNorm(C_out) over W' -> GELU -> * scale.
#include "fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale.h"
#include "harness/detail/fused_adapter.h"
#include "harness/device/device.h"
#include "harness/model/built_in_models.h"
#include "harness/model/typed_model.h"
#include "harness/models/convt3d_floor.h"
#include "harness/models/convt3d_ln_gelu_scale_domain.h"
#include "reference/convt3d_ln_gelu_scale.h"

namespace fb::models {
namespace {
namespace model = ref::convt3d_ln_gelu_scale;
using model::config;

namespace fused = fb::fused::convt3d_ln_gelu_scale;

fused::problem to_problem(const config& c) {
  return {c.batch_size, c.in_channels, c.out_channels, c.depth,   c.height,        c.width,
          c.kernel_size, c.stride,     c.padding,      c.eps,     c.scaling_factor};
}

// The fused implementations (the convolution tile with the LayerNorm/GELU/scale epilogue on chip): a
// host executor running the kernels' own block programs, and the CUDA kernels. The conv bias is
// optional (null when the config has none; it cancels in the LayerNorm).
typed_implementation<config> fused_implementation(device_kind device) {
  return detail::fused_implementation<config>(
      device, {"conv_transpose.weight", {"conv_transpose.bias", true}, "layer_norm.weight", "layer_norm.bias"},
      [](const config& c) { return fused::workspace_bytes(to_problem(c)); },
      [](const config& c, const detail::fused_args& a) {
        const auto& p = a.params;
        if (a.device == device_kind::cuda)
          fused::run_cuda(to_problem(c), a.input, p[0], p[1], p[2], p[3], a.output, a.workspace, a.stream);
        else
          fused::run_host(to_problem(c), a.input, p[0], p[1], p[2], p[3], a.output, a.workspace);
      });
}

}  // namespace

model_entry convt3d_ln_gelu_scale() {
  typed_model<config> m{
      "convt3d_ln_gelu_scale",
      34,
      "ConvTranspose3d -> LayerNorm(C_out) over the last dim W' -> exact GELU -> * scaling_factor",
      convt3d_ln_gelu_scale_domain(),
      config_schema<config>({
          make_field("in_channels", &config::in_channels, "input channels C_in"),
          make_field("out_channels", &config::out_channels, "output channels C_out (must equal W')"),
          make_field("kernel_size", &config::kernel_size, "cubic kernel size k"),
          make_field("stride", &config::stride, "stride s"),
          make_field("padding", &config::padding, "padding p"),
          make_field("bias", &config::bias, "conv bias", false),
          make_field("eps", &config::eps, "LayerNorm eps", false),
          make_field("scaling_factor", &config::scaling_factor, "scale after GELU", false),
          make_field("batch_size", &config::batch_size, "batch B"),
          make_field("depth", &config::depth, "input depth D"),
          make_field("height", &config::height, "input height H"),
          make_field("width", &config::width, "input width W (W' must equal out_channels)"),
      })};
  use_reference<config>(m,
                        {model::validate, model::input_shape, model::output_shape, model::conv_output_shape,
                         model::make_parameters, model::forward, model::oracle},
                        3);
  m.conditioning = model::conditioning;
  // Rows are W' values (as few as 1): PyTorch's largest error in a row is luck at small W'; one
  // correct rounding of the convolution's output is what every fp32 implementation pays.
  m.fp64_rounded_conv = model::forward_rounded_conv;
  // LayerNorm over the last dimension W' (= C_out values): a row shares its mean and variance.
  m.allowance_unit = {{4}, 1.0, "a LayerNorm row (the last dim W' of N C D H W')"};
  detail::add_fused_implementations(m, fused_implementation);
  // The floor of the fused algorithm. Bytes: x read once, weights and gamma, beta read, the output
  // written once (nothing else of output size moves). FLOPs: 2 per valid-tap MAC (B*C_in*C_out
  // times the valid (input, tap) pairs of each dimension), one pass over the convolution, on the
  // fp64 tensor cores (fused/conv3d/mma_fp64_tile.cuh): divided by their measured peak.
  m.fused_work = [](const config& c) {
    const convt3d_floor_sizes s = convt3d_floor(c, model::conv_output_shape(c));
    return work_estimate{4.0 * (s.x + s.w + 3.0 * c.out_channels + s.out), 2.0 * s.macs, arithmetic_unit::fp64_mma};
  };
  m.sweep_variants = [](const config& base) {
    // batch x2: a 2.1 GB output, so output byte offsets pass 2^31 (issue 11 asks for it).
    auto v = batch_variants(base, {{"batch x0.125", 4}, {"batch x0.25", 8}, {"batch x0.5", 16},
                                   {"batch x2", 2 * base.batch_size}});
    // W is pinned by W' == C_out; scale depth and height instead.
    config small = base;
    small.depth = 8;
    small.height = 16;
    v.emplace_back("spatial x0.25", small);
    return v;
  };
  return erase(std::move(m));
}

}  // namespace fb::models
