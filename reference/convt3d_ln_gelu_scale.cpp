#include "reference/convt3d_ln_gelu_scale.h"

#include "reference/oracle.h"

#include <cmath>
#include <string>

namespace fb::ref::convt3d_ln_gelu_scale {

void validate(const config& c) {
  // The module has no output_padding argument: PyTorch's default 0.
  validate_conv_transpose(c.batch_size, c.in_channels, c.out_channels, c.kernel_size, c.stride, c.padding,
                          /*output_padding=*/0, {{"depth", c.depth}, {"height", c.height}, {"width", c.width}});
  // LayerNorm([out_channels]) on a 5-D tensor normalises the last dim, so PyTorch raises unless
  // W' == out_channels. The width is the input size that decides W', so it is the field named.
  const int64_t w_out = conv_transpose_output_size(c.width, c.kernel_size, c.stride, c.padding, 0);
  require(w_out == c.out_channels, "width", c.width,
          "LayerNorm(out_channels) normalises the last dim: W' = (width-1)*stride - 2*padding + kernel_size = " +
              std::to_string(w_out) + " must equal out_channels = " + std::to_string(c.out_channels));
  // `eps > 0` is false for NaN too.
  require(c.eps > 0 && std::isfinite(c.eps), "eps", c.eps, "must be finite and > 0");
  require(std::isfinite(c.scaling_factor), "scaling_factor", c.scaling_factor, "must be finite");
}

std::vector<int64_t> input_shape(const config& c) {
  return {c.batch_size, c.in_channels, c.depth, c.height, c.width};
}

std::vector<int64_t> conv_output_shape(const config& c) {
  return {conv_transpose_output_size(c.depth, c.kernel_size, c.stride, c.padding, 0),
          conv_transpose_output_size(c.height, c.kernel_size, c.stride, c.padding, 0),
          conv_transpose_output_size(c.width, c.kernel_size, c.stride, c.padding, 0)};
}

std::vector<int64_t> output_shape(const config& c) {
  const std::vector<int64_t> s = conv_output_shape(c);
  return {c.batch_size, c.out_channels, s[0], s[1], s[2]};
}

tensor_map make_parameters(const config& c, param_init init, uint64_t seed) {
  at::Generator gen = make_generator(seed);
  tensor_map params;
  init_conv_transpose(params, c.in_channels, c.out_channels, c.kernel_size, 3, c.bias, init, gen);
  if (init == param_init::pytorch_default) {
    params["layer_norm.weight"] = at::ones({c.out_channels}, at::kFloat);
    params["layer_norm.bias"] = at::zeros({c.out_channels}, at::kFloat);
    return params;
  }
  // gamma of either sign and a beta offset: ones/zeros would hide a dropped affine term, and a
  // gamma indexed by channel instead of by w position only shows when gamma varies along W'.
  params["layer_norm.weight"] = uniform({c.out_channels}, -2.0, 2.0, gen);
  params["layer_norm.bias"] = uniform({c.out_channels}, -2.0, 2.0, gen);
  return params;
}

namespace {
at::Tensor conv_output(const config& c, const tensor_map& params, const at::Tensor& x) {
  const at::Tensor bias = c.bias ? param_like(params, "conv_transpose.bias", x) : at::Tensor();
  return at::conv_transpose3d(x, param_like(params, "conv_transpose.weight", x), bias,
                              {c.stride, c.stride, c.stride}, {c.padding, c.padding, c.padding});
}
}  // namespace

double conditioning(const config& c, const tensor_map& params, const at::Tensor& x) {
  const at::Tensor x64 = x.to(at::kDouble);
  const at::Tensor y = conv_output(c, params, x64);
  const at::Tensor magnitude = rounding_magnitude(y, conv_output(c, squared_conv_params(params), x64.square()));
  const at::Tensor gamma = param_like(params, "layer_norm.weight", y).abs().max();
  return normalisation_conditioning(y, magnitude, {-1}, c.eps, gamma) * std::max(1.0, std::abs(c.scaling_factor));
}

namespace {
/// LayerNorm over W', exact GELU, the scale: the module after its convolution.
forward_result normalise(const config& c, const tensor_map& params, at::Tensor y) {
  // normalized_shape = [out_channels]: the last dim (W') only, as nn.LayerNorm(out_channels) does.
  y = at::layer_norm(y, {c.out_channels}, param_like(params, "layer_norm.weight", y),
                     param_like(params, "layer_norm.bias", y), c.eps);
  y = at::gelu(y, "none");  // exact erf form, nn.GELU()'s default
  y = y * c.scaling_factor;
  return {y, {}};
}
}  // namespace

forward_result forward_rounded_conv(const config& c, const tensor_map& params, const at::Tensor& x) {
  const at::Tensor x64 = x.to(at::kDouble);
  return normalise(c, params, conv_output(c, params, x64).to(at::kFloat).to(at::kDouble));
}

forward_result forward(const config& c, const tensor_map& params, const at::Tensor& x) {
  return normalise(c, params, conv_output(c, params, x));
}

forward_result oracle(const config& c, const tensor_map& params, const at::Tensor& x) {
  oracle::convt_geometry g;
  g.kernel = {c.kernel_size, c.kernel_size, c.kernel_size};
  g.stride = {c.stride, c.stride, c.stride};
  g.padding = {c.padding, c.padding, c.padding};
  const at::Tensor bias = c.bias ? oracle::param64(params, "conv_transpose.bias") : at::Tensor();
  at::Tensor y = oracle::conv_transpose_scatter(x, oracle::param64(params, "conv_transpose.weight"), bias, g);
  y = oracle::layer_norm_last_dim(y, oracle::param64(params, "layer_norm.weight"),
                                  oracle::param64(params, "layer_norm.bias"), c.eps);
  y = oracle::gelu_erf(y);
  return {y * c.scaling_factor, {}};
}

}  // namespace fb::ref::convt3d_ln_gelu_scale
