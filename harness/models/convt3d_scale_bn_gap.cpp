/// Registry entry for KernelBench #77: ConvTranspose3d -> * scale -> BatchNorm3d -> global average pool.
#include <cmath>

#include "fused/convt3d_scale_bn_gap/convt3d_scale_bn_gap.h"
#include "harness/detail/fused_adapter.h"
#include "harness/device/device.h"
#include "harness/model/built_in_models.h"
#include "harness/model/typed_model.h"
#include "harness/models/convt3d_scale_bn_gap_domain.h"
#include "reference/convt3d_scale_bn_gap.h"

namespace fb::models {
namespace {
namespace model = ref::convt3d_scale_bn_gap;
using model::config;

namespace fused = fb::fused::convt3d_scale_bn_gap;

fused::problem to_problem(const config& c) {
  return {c.batch_size, c.in_channels, c.out_channels, c.depth, c.height, c.width, c.kernel_size,
          c.scale_factor, c.eps,         c.momentum,     c.training};
}

// The fused implementations: the same block programs (SPEC §1.5 algebra, the variance by Parseval)
// as a host executor and as CUDA kernels; both write (B, C_out) into the harness's (B, C_out, 1, 1, 1)
// output and update the BatchNorm buffers in place in training mode.
typed_implementation<config> fused_implementation(device_kind device) {
  return detail::fused_implementation<config>(
      device, {"conv_transpose.weight", "conv_transpose.bias", "batch_norm.weight", "batch_norm.bias"},
      [](const config& c) { return fused::workspace_bytes(to_problem(c)); },
      [](const config& c, const detail::fused_args& a) {
        const auto& p = a.params;
        auto* running_mean = static_cast<float*>(a.buffers[0]);
        auto* running_var = static_cast<float*>(a.buffers[1]);
        auto* batches = static_cast<int64_t*>(a.buffers[2]);
        if (a.device == device_kind::cuda)
          fused::run_cuda(to_problem(c), a.input, p[0], p[1], p[2], p[3], running_mean, running_var, batches, a.output,
                          a.workspace, a.stream);
        else
          fused::run_host(to_problem(c), a.input, p[0], p[1], p[2], p[3], running_mean, running_var, batches, a.output,
                          a.workspace);
      },
      detail::batch_norm_buffers("batch_norm"));
}

/// The roofline work of the fused algorithm (fused/convt3d_scale_bn_gap/convt3d_scale_bn_gap.cu), counted as follows.
/// Bytes: x and the weights read once, the input spectrum X (D'*H'*(W'/2+1)*C_in*B complex fp32)
/// written once and read once (2.2x the 50 MB L2 at the default, so it crosses DRAM), the small
/// parameters, buffers and the output. FLOPs: only the useful arithmetic, none of the padding lanes
/// or redundant per-block work (so the real count is higher and the floor stays a lower bound):
///   x's DFT per (b, ci): w-stage D*H*W*Fw real x complex (2 FMA), h-stage D*Fw*H*(H'/2+1) and
///   d-stage H'*Fw*D*(D'/2+1) mirrored pairs (4 FMA);
///   the weights' depth DFT C_in*C_out*k^2*(D'/2+1)*k (2 FMA), their height DFT per row pair
///   C_in*C_out*k*k (4 FMA), their width DFT per (unit, ci, c, batch tile) 4k FMA + 4 adds;
///   the spectral product per (unit, ci, c, b): 2 complex MACs (row and conjugate row, 8 FMA);
/// with units = row pairs * Fw ~ D'*H'*Fw/2. Eval: x and w summed once, nothing else.
work_estimate fused_work(const config& c) {
  const double b = static_cast<double>(c.batch_size), ci = static_cast<double>(c.in_channels),
               co = static_cast<double>(c.out_channels), k = static_cast<double>(c.kernel_size);
  const int64_t nd = c.depth + c.kernel_size - 1, nh = c.height + c.kernel_size - 1,
                nw = c.width + c.kernel_size - 1;
  const double d = static_cast<double>(c.depth), h = static_cast<double>(c.height), w = static_cast<double>(c.width);
  const double fw = static_cast<double>(nw / 2 + 1), ndp = static_cast<double>(nd / 2 + 1),
               nhp = static_cast<double>(nh / 2 + 1);
  const double x_bytes = 4.0 * b * ci * d * h * w;
  const double w_bytes = 4.0 * ci * co * k * k * k;
  const double small_bytes = 4.0 * (5.0 * co + b * co);  // bias, gamma, beta, buffers, out
  if (!c.training) return work_estimate{x_bytes + w_bytes + small_bytes, b * ci * d * h * w + ci * co * k * k * k};
  const int64_t pairs = (nh / 2 + 1) * (nd % 2 == 0 ? 2 : 1) + (nd - 1) / 2 * nh;
  const double units = static_cast<double>(pairs) * fw;
  const double btiles = std::ceil(b / 16.0);
  const double spectrum_bytes = 8.0 * static_cast<double>(nd * nh) * fw * ci * b;
  const double fma_x = b * ci * (2.0 * d * h * w * fw + 4.0 * d * fw * h * nhp + 4.0 * static_cast<double>(nh) * fw * d * ndp);
  const double fma_w = ci * co * (2.0 * k * k * ndp * k + 4.0 * static_cast<double>(pairs) * k * k) +
                       units * ci * co * btiles * (4.0 * k + 2.0);  // 4 adds = 2 FMA-equivalents
  const double fma_gemm = 8.0 * units * ci * co * b;
  return work_estimate{x_bytes + w_bytes + 2.0 * spectrum_bytes + small_bytes, 2.0 * (fma_x + fma_w + fma_gemm)};
}

}  // namespace

model_entry convt3d_scale_bn_gap() {
  typed_model<config> m{
      "convt3d_scale_bn_gap",
      77,
      "ConvTranspose3d (stride 1) -> * scale_factor -> BatchNorm3d (training by default) -> AdaptiveAvgPool3d(1)",
      convt3d_scale_bn_gap_domain(),
      config_schema<config>({
          make_field("in_channels", &config::in_channels, "input channels C_in"),
          make_field("out_channels", &config::out_channels, "output channels C_out"),
          make_field("kernel_size", &config::kernel_size, "cubic kernel size k"),
          make_field("scale_factor", &config::scale_factor, "scale applied to the conv output"),
          make_field("eps", &config::eps, "BatchNorm eps", false),
          make_field("momentum", &config::momentum, "BatchNorm momentum", false),
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
  // BatchNorm's channel statistics, then each (b, c)'s spatial mean: an N C 1 1 1 output whose
  // channel c shares its statistics' rounding.
  m.allowance_unit = {{0, 2, 3, 4}, 1.0, "a BatchNorm channel (dims 0, 2, 3, 4 of N C 1 1 1)"};
  detail::add_fused_implementations(m, fused_implementation);
  m.fused_work = fused_work;
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
