#include "reference/convt3d_bn_sub.h"

#include "reference/convt3d_common.h"
#include "reference/oracle.h"

namespace fb::ref::convt3d_bn_sub {
namespace {
convt3d::cubic_conv conv_of(const config& c) { return {c.kernel_size, c.stride, c.padding}; }
}  // namespace

void validate(const config& c) {
  convt3d::validate_conv_bn(c.batch_size, c.in_channels, c.out_channels, conv_of(c), c.depth, c.height, c.width,
                            c.training);
}

std::vector<int64_t> input_shape(const config& c) {
  return {c.batch_size, c.in_channels, c.depth, c.height, c.width};
}

std::vector<int64_t> output_shape(const config& c) {
  std::vector<int64_t> shape{c.batch_size, c.out_channels};
  for (int64_t n : conv_output_shape(c)) shape.push_back(n);
  return shape;
}

std::vector<int64_t> conv_output_shape(const config& c) {
  return convt3d::output_size(conv_of(c), c.depth, c.height, c.width);
}

tensor_map make_parameters(const config& c, param_init init, uint64_t seed) {
  return convt3d::make_conv_bn_parameters(c.in_channels, c.out_channels, c.kernel_size, c.bias, init, seed);
}

double conditioning(const config& c, const tensor_map& params, const at::Tensor& x) {
  const at::Tensor x64 = x.to(at::kDouble);
  const at::Tensor y = convt3d::forward_conv(conv_of(c), c.bias, params, x64);
  const at::Tensor magnitude =
      rounding_magnitude(y, convt3d::forward_conv(conv_of(c), c.bias, squared_conv_params(params), x64.square()));
  return convt3d::batch_norm_conditioning(y, magnitude, params, c.training, batch_norm_eps);
}

forward_result forward(const config& c, const tensor_map& params, const at::Tensor& x) {
  forward_result r;
  at::Tensor y = convt3d::forward_conv(conv_of(c), c.bias, params, x);
  y = batch_norm_forward(y, params, convt3d::batch_norm_prefix, c.training, batch_norm_momentum, batch_norm_eps,
                         r.buffers);
  r.output = y - y.mean({2, 3, 4}, /*keepdim=*/true);
  return r;
}

forward_result oracle(const config& c, const tensor_map& params, const at::Tensor& x) {
  forward_result r;
  const at::Tensor y = convt3d::oracle_conv(conv_of(c), c.bias, params, x);
  // The full BatchNorm (beta, batch mean and conv bias included) even though the subtraction cancels
  // them: the oracle follows the definition, and the running_mean update needs the true batch mean.
  at::Tensor out = oracle::batch_norm(y, params, convt3d::batch_norm_prefix, c.training, batch_norm_momentum,
                                      batch_norm_eps, r.buffers);
  const at::Tensor mean = oracle::spatial_mean(out);  // (B, C): per sample and channel, not per channel
  const int64_t bc_count = mean.numel(), plane = out.numel() / bc_count;
  double* op = out.data_ptr<double>();
  const double* mp = mean.data_ptr<double>();
  for (int64_t bc = 0; bc < bc_count; ++bc)
    for (int64_t i = 0; i < plane; ++i) op[bc * plane + i] -= mp[bc];
  r.output = out;
  return r;
}

}  // namespace fb::ref::convt3d_bn_sub
