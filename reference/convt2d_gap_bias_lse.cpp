#include "reference/convt2d_gap_bias_lse.h"

#include "reference/oracle.h"

namespace fb::ref::convt2d_gap_bias_lse {
namespace {
// The module's fixed geometry: nn.ConvTranspose2d(in, out, k) with its defaults.
constexpr int64_t k_stride = 1;
constexpr int64_t k_padding = 0;
// The constant the forward multiplies by (KernelBench hard-codes it).
constexpr double k_output_scale = 10.0;
}  // namespace

void validate(const config& c) {
  validate_conv_transpose(c.batch_size, c.in_channels, c.out_channels, c.kernel_size, k_stride, k_padding,
                          /*output_padding=*/0, {{"height", c.height}, {"width", c.width}});
}

std::vector<int64_t> input_shape(const config& c) { return {c.batch_size, c.in_channels, c.height, c.width}; }

std::vector<int64_t> output_shape(const config& c) { return {c.batch_size, 1}; }

std::vector<int64_t> conv_output_shape(const config& c) {
  return {conv_transpose_output_size(c.height, c.kernel_size, k_stride, k_padding, 0),
          conv_transpose_output_size(c.width, c.kernel_size, k_stride, k_padding, 0)};
}

tensor_map make_parameters(const config& c, param_init init, uint64_t seed) {
  at::Generator gen = make_generator(seed);
  tensor_map params;
  init_conv_transpose(params, c.in_channels, c.out_channels, c.kernel_size, 2, /*bias=*/true, init, gen);
  if (init == param_init::pytorch_default) {
    params["bias"] = normal({c.out_channels, 1, 1}, 0.0, 1.0, gen);  // torch.randn(bias_shape)
    return params;
  }
  // A random spread around an offset: none half the time, moderate (|offset| < 50) a quarter, and
  // a quarter 90..150 of either sign. float32 exp overflows past 88.7 and underflows to 0 below
  // -103, so an unstabilised logsumexp gives Inf or -Inf there; the stabilised form stays exact.
  const double scale = uniform_scalar(0.5, 8.0, gen);
  const double regime = uniform_scalar(0.0, 1.0, gen);
  double offset = 0.0;
  if (regime >= 0.75) {
    offset = uniform_scalar(90.0, 150.0, gen) * (uniform_scalar(0.0, 1.0, gen) < 0.5 ? -1.0 : 1.0);
  } else if (regime >= 0.5) {
    offset = uniform_scalar(-50.0, 50.0, gen);
  }
  params["bias"] = normal({c.out_channels, 1, 1}, offset, scale, gen);
  return params;
}

forward_result forward(const config& /*c: the geometry is fixed*/, const tensor_map& params, const at::Tensor& x) {
  at::Tensor y = at::conv_transpose2d(x, param_like(params, "conv_transpose.weight", x),
                                      param_like(params, "conv_transpose.bias", x), {k_stride, k_stride},
                                      {k_padding, k_padding});
  y = at::mean(y, {2, 3}, /*keepdim=*/true);
  y = y + param_like(params, "bias", x);  // (B, C_out, 1, 1) + (C_out, 1, 1)
  y = at::logsumexp(y, {1}, /*keepdim=*/true);
  y = at::sum(y, {2, 3});  // no keepdim: (B, 1)
  y = y * k_output_scale;
  return {y, {}};
}

forward_result oracle(const config& c, const tensor_map& params, const at::Tensor& x) {
  oracle::convt_geometry g;
  g.kernel = {1, c.kernel_size, c.kernel_size};
  const at::Tensor w = oracle::param64(params, "conv_transpose.weight").unsqueeze(2);
  const at::Tensor y = oracle::conv_transpose_scatter(x.to(at::kCPU, at::kDouble).unsqueeze(2), w,
                                                      oracle::param64(params, "conv_transpose.bias"), g);
  const at::Tensor mean = oracle::spatial_mean(y).contiguous();  // (B, C_out)
  const at::Tensor bias = oracle::param64(params, "bias");        // (C_out, 1, 1), contiguous
  const int64_t B = c.batch_size, C = c.out_channels;
  at::Tensor out = at::empty({B, 1}, at::kDouble);
  std::vector<double> row(static_cast<size_t>(C));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t co = 0; co < C; ++co) row[co] = mean.data_ptr<double>()[b * C + co] + bias.data_ptr<double>()[co];
    // The sum over the 1x1 map after logsumexp is the single value itself.
    out.data_ptr<double>()[b] = k_output_scale * oracle::logsumexp(row.data(), C);
  }
  return {out, {}};
}

}  // namespace fb::ref::convt2d_gap_bias_lse
