#include "reference/convt2d_mul_gap.h"

#include "reference/oracle.h"

namespace fb::ref::convt2d_mul_gap {

void validate(const config& c) {
  validate_conv_transpose(c.batch_size, c.in_channels, c.out_channels, c.kernel_size, c.stride, c.padding,
                          c.output_padding, {{"height", c.height}, {"width", c.width}});
}

std::vector<int64_t> input_shape(const config& c) { return {c.batch_size, c.in_channels, c.height, c.width}; }

std::vector<int64_t> output_shape(const config& c) { return {c.batch_size, c.out_channels, 1, 1}; }

std::vector<int64_t> conv_output_shape(const config& c) {
  return {conv_transpose_output_size(c.height, c.kernel_size, c.stride, c.padding, c.output_padding),
          conv_transpose_output_size(c.width, c.kernel_size, c.stride, c.padding, c.output_padding)};
}

tensor_map make_parameters(const config& c, param_init init, uint64_t seed) {
  at::Generator gen = make_generator(seed);
  tensor_map params;
  init_conv_transpose(params, c.in_channels, c.out_channels, c.kernel_size, 2, /*bias=*/true, init, gen);
  return params;
}

forward_result forward(const config& c, const tensor_map& params, const at::Tensor& x) {
  at::Tensor y = at::conv_transpose2d(x, param_like(params, "conv_transpose.weight", x),
                                      param_like(params, "conv_transpose.bias", x), {c.stride, c.stride},
                                      {c.padding, c.padding}, {c.output_padding, c.output_padding});
  y = y * c.multiplier;
  y = at::mean(y, {2, 3}, /*keepdim=*/true);
  y = at::mean(y, {2, 3}, /*keepdim=*/true);
  return {y, {}};
}

forward_result oracle(const config& c, const tensor_map& params, const at::Tensor& x) {
  oracle::convt_geometry g;
  g.kernel = {1, c.kernel_size, c.kernel_size};
  g.stride = {1, c.stride, c.stride};
  g.padding = {0, c.padding, c.padding};
  g.output_padding = {0, c.output_padding, c.output_padding};
  const at::Tensor w = oracle::param64(params, "conv_transpose.weight").unsqueeze(2);
  at::Tensor y = oracle::conv_transpose_scatter(x.to(at::kDouble).unsqueeze(2), w,
                                                oracle::param64(params, "conv_transpose.bias"), g);
  y = y * c.multiplier;
  // Mean then mean again: the second is an identity on a 1x1 map.
  return {oracle::spatial_mean(y).view({c.batch_size, c.out_channels, 1, 1}), {}};
}

}  // namespace fb::ref::convt2d_mul_gap
