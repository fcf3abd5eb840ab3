#include "property_tests/sixth_model/reference.h"

#include "reference/oracle.h"

namespace fb::ref::test_convt2d_relu {

void validate(const config& c) {
  validate_conv_transpose(c.batch_size, c.in_channels, c.out_channels, c.kernel_size, c.stride, c.padding,
                          c.output_padding, {{"height", c.height}, {"width", c.width}});
}

std::vector<int64_t> input_shape(const config& c) { return {c.batch_size, c.in_channels, c.height, c.width}; }

std::vector<int64_t> conv_output_shape(const config& c) {
  return {conv_transpose_output_size(c.height, c.kernel_size, c.stride, c.padding, c.output_padding),
          conv_transpose_output_size(c.width, c.kernel_size, c.stride, c.padding, c.output_padding)};
}

std::vector<int64_t> output_shape(const config& c) {
  const std::vector<int64_t> hw = conv_output_shape(c);
  return {c.batch_size, c.out_channels, hw[0], hw[1]};
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
  return {at::relu(y) * c.scale, {}};
}

forward_result oracle(const config& c, const tensor_map& params, const at::Tensor& x) {
  oracle::convt_geometry g;
  g.kernel = {1, c.kernel_size, c.kernel_size};
  g.stride = {1, c.stride, c.stride};
  g.padding = {0, c.padding, c.padding};
  g.output_padding = {0, c.output_padding, c.output_padding};
  const at::Tensor w = oracle::param64(params, "conv_transpose.weight").unsqueeze(2);
  at::Tensor y = oracle::conv_transpose_scatter(x.to(at::kDouble).unsqueeze(2), w,
                                                oracle::param64(params, "conv_transpose.bias"), g)
                     .squeeze(2)
                     .contiguous();
  double* v = y.data_ptr<double>();
  for (int64_t i = 0; i < y.numel(); ++i) v[i] = (v[i] > 0.0 ? v[i] : 0.0) * c.scale;
  return {y, {}};
}

}  // namespace fb::ref::test_convt2d_relu
