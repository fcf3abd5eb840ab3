#include "reference/convt3d_common.h"

#include "reference/oracle.h"

namespace fb::ref::convt3d {

std::vector<int64_t> output_size(const cubic_conv& conv, int64_t depth, int64_t height, int64_t width) {
  std::vector<int64_t> out;
  for (int64_t n : {depth, height, width})
    out.push_back(conv_transpose_output_size(n, conv.kernel_size, conv.stride, conv.padding, /*op=*/0));
  return out;
}

void validate_conv_bn(int64_t batch_size, int64_t in_channels, int64_t out_channels, const cubic_conv& conv,
                      int64_t depth, int64_t height, int64_t width, bool training) {
  validate_conv_transpose(batch_size, in_channels, out_channels, conv.kernel_size, conv.stride, conv.padding,
                          /*output_padding=*/0, {{"depth", depth}, {"height", height}, {"width", width}});
  if (!training) return;  // eval mode normalises with the running buffers: any N works
  // Every factor is >= 1 here, so N > 1 iff some factor is > 1; testing that avoids overflowing the product.
  bool more_than_one = batch_size > 1;
  for (int64_t n : output_size(conv, depth, height, width)) more_than_one = more_than_one || n > 1;
  require(more_than_one, "batch_size", batch_size,
          "training-mode BatchNorm needs more than one value per channel: B*D'*H'*W' = 1");
}

tensor_map make_conv_bn_parameters(int64_t in_channels, int64_t out_channels, int64_t kernel_size, bool bias,
                                   param_init init, uint64_t seed) {
  at::Generator gen = make_generator(seed);
  tensor_map params;
  init_conv_transpose(params, in_channels, out_channels, kernel_size, /*dims=*/3, bias, init, gen);
  init_batch_norm(params, batch_norm_prefix, out_channels, init, gen);
  return params;
}

at::Tensor forward_conv(const cubic_conv& conv, bool bias, const tensor_map& params, const at::Tensor& x) {
  // An undefined tensor is ATen's "no bias" in both libtorch 1.13 and 2.x (the argument is optional<Tensor>).
  const at::Tensor b = bias ? param_like(params, "conv_transpose.bias", x) : at::Tensor();
  const int64_t s = conv.stride, p = conv.padding;
  return at::conv_transpose3d(x, param_like(params, "conv_transpose.weight", x), b, {s, s, s}, {p, p, p});
}

double batch_norm_conditioning(const at::Tensor& y, const at::Tensor& magnitude, const tensor_map& params,
                               bool training, double eps) {
  const std::string prefix = batch_norm_prefix;
  const at::Tensor gamma = param_like(params, prefix + ".weight", y).view({1, -1, 1, 1, 1});
  // beta (and in eval mode the running mean) shift every normalised value; what follows the
  // BatchNorm (#15's mean subtraction, #77's pooling) cancels that shift in fp32 too.
  const double beta = param_like(params, prefix + ".bias", y).abs().max().item<double>();
  if (training) return normalisation_conditioning(y, magnitude, {0, 2, 3, 4}, eps, gamma) + beta;
  const at::Tensor var = param_like(params, prefix + ".running_var", y).view({1, -1, 1, 1, 1});
  const at::Tensor mean = param_like(params, prefix + ".running_mean", y).view({1, -1, 1, 1, 1});
  return ((magnitude.amax({0, 2, 3, 4}, true) + mean.abs()) * gamma.abs() / (var + eps).sqrt()).max().item<double>() +
         beta;
}

at::Tensor oracle_conv(const cubic_conv& conv, bool bias, const tensor_map& params, const at::Tensor& x) {
  oracle::convt_geometry g;
  g.kernel = {conv.kernel_size, conv.kernel_size, conv.kernel_size};
  g.stride = {conv.stride, conv.stride, conv.stride};
  g.padding = {conv.padding, conv.padding, conv.padding};
  const at::Tensor b = bias ? oracle::param64(params, "conv_transpose.bias") : at::Tensor();
  return oracle::conv_transpose_scatter(x, oracle::param64(params, "conv_transpose.weight"), b, g);
}

}  // namespace fb::ref::convt3d
