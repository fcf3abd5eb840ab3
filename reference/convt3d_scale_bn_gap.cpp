#include "reference/convt3d_scale_bn_gap.h"

#include "reference/convt3d_common.h"
#include "reference/oracle.h"

#include <cmath>

namespace fb::ref::convt3d_scale_bn_gap {
namespace {
constexpr bool conv_bias = true;
convt3d::cubic_conv conv_of(const config& c) { return {c.kernel_size, conv_stride, conv_padding}; }
}  // namespace

void validate(const config& c) {
  convt3d::validate_conv_bn(c.batch_size, c.in_channels, c.out_channels, conv_of(c), c.depth, c.height, c.width,
                            c.training);
  require(std::isfinite(c.scale_factor), "scale_factor", c.scale_factor, "must be finite");
  // Written as "must hold" tests (x > 0, not !(x <= 0)) so that NaN fails them too.
  require(c.eps > 0 && std::isfinite(c.eps), "eps", c.eps, "must be > 0 and finite (it is added inside the root)");
  require(c.momentum > 0 && c.momentum <= 1, "momentum", c.momentum,
          "must be in (0, 1] (running = (1-momentum)*running + momentum*batch; PyTorch's default is 0.1)");
}

std::vector<int64_t> input_shape(const config& c) {
  return {c.batch_size, c.in_channels, c.depth, c.height, c.width};
}

std::vector<int64_t> output_shape(const config& c) { return {c.batch_size, c.out_channels, 1, 1, 1}; }

std::vector<int64_t> conv_output_shape(const config& c) {
  return convt3d::output_size(conv_of(c), c.depth, c.height, c.width);
}

tensor_map make_parameters(const config& c, param_init init, uint64_t seed) {
  return convt3d::make_conv_bn_parameters(c.in_channels, c.out_channels, c.kernel_size, conv_bias, init, seed);
}

double conditioning(const config& c, const tensor_map& params, const at::Tensor& x) {
  const at::Tensor x64 = x.to(at::kDouble);
  const at::Tensor y = convt3d::forward_conv(conv_of(c), conv_bias, params, x64) * c.scale_factor;
  const at::Tensor magnitude = rounding_magnitude(
      y, convt3d::forward_conv(conv_of(c), conv_bias, squared_conv_params(params), x64.square()) *
             (c.scale_factor * c.scale_factor));
  return convt3d::batch_norm_conditioning(y, magnitude, params, c.training, c.eps);
}

forward_result forward(const config& c, const tensor_map& params, const at::Tensor& x) {
  forward_result r;
  at::Tensor y = convt3d::forward_conv(conv_of(c), conv_bias, params, x);
  y = y * c.scale_factor;
  y = batch_norm_forward(y, params, convt3d::batch_norm_prefix, c.training, c.momentum, c.eps, r.buffers);
  r.output = at::adaptive_avg_pool3d(y, {1, 1, 1});
  return r;
}

forward_result oracle(const config& c, const tensor_map& params, const at::Tensor& x) {
  forward_result r;
  // The scale applies after the bias is added, so it scales the bias too (SPEC §1.5 trap).
  const at::Tensor y = convt3d::oracle_conv(conv_of(c), conv_bias, params, x) * c.scale_factor;
  const at::Tensor out = oracle::batch_norm(y, params, convt3d::batch_norm_prefix, c.training, c.momentum, c.eps,
                                            r.buffers);
  r.output = oracle::spatial_mean(out).view({c.batch_size, c.out_channels, 1, 1, 1});
  return r;
}

}  // namespace fb::ref::convt3d_scale_bn_gap
