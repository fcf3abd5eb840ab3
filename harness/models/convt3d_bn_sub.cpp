/// Registry entry for KernelBench #15: ConvTranspose3d -> BatchNorm3d -> subtract the spatial mean.
#include "fused/convt3d_bn_sub/convt3d_bn_sub.h"
#include "harness/detail/fused_adapter.h"
#include "harness/device/device.h"
#include "harness/model/built_in_models.h"
#include "harness/model/typed_model.h"
#include "harness/models/convt3d_bn_sub_domain.h"
#include "harness/models/convt3d_floor.h"
#include "reference/convt3d_bn_sub.h"

namespace fb::models {
namespace {
namespace model = ref::convt3d_bn_sub;
using model::config;

namespace fused = fb::fused::convt3d_bn_sub;

fused::problem to_problem(const config& c) {
  return {c.batch_size, c.in_channels, c.out_channels, c.depth,    c.height,
          c.width,      c.kernel_size, c.stride,       c.padding,  c.training,
          model::batch_norm_eps,        model::batch_norm_momentum};
}

// The fused implementations (SPEC 1.1 identities: exact per-(b, c) means from input box sums, a
// statistics pass and a writing pass over the convolution): a host executor running the kernels'
// own block programs, and the CUDA kernels. The conv bias is optional (null when the config has
// none); the BatchNorm buffers are updated in place in training mode.
typed_implementation<config> fused_implementation(device_kind device) {
  return detail::fused_implementation<config>(
      device, {"conv_transpose.weight", {"conv_transpose.bias", true}, "batch_norm.weight", "batch_norm.bias"},
      [](const config& c) { return fused::workspace_bytes(to_problem(c)); },
      [](const config& c, const detail::fused_args& a) {
        const auto& p = a.params;
        auto* running_mean = static_cast<float*>(a.buffers[0]);
        auto* running_var = static_cast<float*>(a.buffers[1]);
        auto* tracked = static_cast<int64_t*>(a.buffers[2]);
        if (a.device == device_kind::cuda)
          fused::run_cuda(to_problem(c), a.input, p[0], p[1], p[2], p[3], running_mean, running_var, tracked,
                          a.output, a.workspace, a.stream);
        else
          fused::run_host(to_problem(c), a.input, p[0], p[1], p[2], p[3], running_mean, running_var, tracked,
                          a.output, a.workspace);
      },
      detail::batch_norm_buffers("batch_norm"));
}

}  // namespace

model_entry convt3d_bn_sub() {
  typed_model<config> m{
      "convt3d_bn_sub",
      15,
      "ConvTranspose3d -> BatchNorm3d (training by default) -> x - mean(x over D,H,W)",
      convt3d_bn_sub_domain(),
      config_schema<config>({
          make_field("in_channels", &config::in_channels, "input channels C_in"),
          make_field("out_channels", &config::out_channels, "output channels C_out"),
          make_field("kernel_size", &config::kernel_size, "cubic kernel size k"),
          make_field("stride", &config::stride, "stride s"),
          make_field("padding", &config::padding, "padding p"),
          make_field("bias", &config::bias, "conv bias", false),
          make_field("batch_size", &config::batch_size, "batch B"),
          make_field("depth", &config::depth, "input depth D"),
          make_field("height", &config::height, "input height H"),
          make_field("width", &config::width, "input width W"),
          make_field("training", &config::training, "BatchNorm mode (KernelBench never calls .eval())", false),
      })};
  use_reference<config>(m,
                        {model::validate, model::input_shape, model::output_shape, model::conv_output_shape,
                         model::make_parameters, model::forward, model::oracle},
                        3);
  m.buffer_names = [](const config&) { return ref::batch_norm_buffer_names("batch_norm"); };
  m.conditioning = model::conditioning;
  // BatchNorm normalises each channel with statistics over batch and space (then each (b, c) loses
  // its spatial mean): the rounding its statistics amplify is the channel's.
  m.allowance_unit = {{0, 2, 3, 4}, 1.0, "a BatchNorm channel (dims 0, 2, 3, 4 of N C D H W)"};
  detail::add_fused_implementations(m, fused_implementation);
  // The floor of the fused algorithm (fused/convt3d_bn_sub/convt3d_bn_sub.cu). Bytes: x read, x - c written and
  // read once, weights and the per-channel parameters read, the output written; in training also
  // y - ybar (the output's size) written and read once (it is materialised, not recomputed).
  // FLOPs: 2 per valid-tap MAC (B*C_in*C_out times the valid (input, tap) pairs of each dimension),
  // one pass over the convolution in both modes.
  m.fused_work = [](const config& c) {
    const convt3d_floor_sizes s = convt3d_floor(c, model::conv_output_shape(c));
    const double out_moves = c.training ? 3.0 : 1.0;
    return work_estimate{4.0 * (3.0 * s.x + s.w + 5.0 * c.out_channels + out_moves * s.out), 2.0 * s.macs};
  };
  m.sweep_variants = [](const config& base) {
    auto v = batch_variants(base, {{"batch x0.125", 2}, {"batch x0.5", 8}, {"batch x2", 32}});
    config small = base;
    small.depth = 8;
    small.height = small.width = 16;
    v.emplace_back("spatial x0.125", small);
    return v;
  };
  return erase(std::move(m));
}

}  // namespace fb::models
