#include "reference/oracle.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fb::ref::oracle {
namespace {
int64_t out_size(int64_t n, int64_t k, int64_t s, int64_t p, int64_t op) { return (n - 1) * s - 2 * p + k + op; }
}  // namespace

at::Tensor param64(const tensor_map& params, const std::string& name) {
  auto it = params.find(name);
  if (it == params.end()) throw std::out_of_range("missing parameter '" + name + "'");
  return it->second.to(at::kCPU, at::kDouble).contiguous();
}

at::Tensor conv_transpose_scatter(const at::Tensor& x_in, const at::Tensor& w_in, const at::Tensor& bias_in,
                                  const convt_geometry& g) {
  const at::Tensor x = x_in.to(at::kCPU, at::kDouble).contiguous();
  const at::Tensor w = w_in.to(at::kCPU, at::kDouble).contiguous();
  TORCH_CHECK(x.dim() == 5 && w.dim() == 5, "oracle conv_transpose_scatter expects 5-D x and weight");
  const int64_t B = x.size(0), Ci = x.size(1), Co = w.size(1);
  const std::array<int64_t, 3> n_in{x.size(2), x.size(3), x.size(4)};
  std::array<int64_t, 3> n_out{};
  for (int d = 0; d < 3; ++d) n_out[d] = out_size(n_in[d], g.kernel[d], g.stride[d], g.padding[d], g.output_padding[d]);
  at::Tensor y = at::zeros({B, Co, n_out[0], n_out[1], n_out[2]}, at::kDouble);
  const double* xp = x.data_ptr<double>();
  const double* wp = w.data_ptr<double>();
  double* yp = y.data_ptr<double>();
  const int64_t kd = g.kernel[0], kh = g.kernel[1], kw = g.kernel[2];
  for (int64_t b = 0; b < B; ++b)
    for (int64_t ci = 0; ci < Ci; ++ci)
      for (int64_t id = 0; id < n_in[0]; ++id)
        for (int64_t ih = 0; ih < n_in[1]; ++ih)
          for (int64_t iw = 0; iw < n_in[2]; ++iw) {
            const double xv = xp[(((b * Ci + ci) * n_in[0] + id) * n_in[1] + ih) * n_in[2] + iw];
            for (int64_t co = 0; co < Co; ++co)
              for (int64_t td = 0; td < kd; ++td) {
                const int64_t od = id * g.stride[0] - g.padding[0] + td;
                if (od < 0 || od >= n_out[0]) continue;
                for (int64_t th = 0; th < kh; ++th) {
                  const int64_t oh = ih * g.stride[1] - g.padding[1] + th;
                  if (oh < 0 || oh >= n_out[1]) continue;
                  for (int64_t tw = 0; tw < kw; ++tw) {
                    const int64_t ow = iw * g.stride[2] - g.padding[2] + tw;
                    if (ow < 0 || ow >= n_out[2]) continue;
                    const double wv = wp[(((ci * Co + co) * kd + td) * kh + th) * kw + tw];
                    yp[(((b * Co + co) * n_out[0] + od) * n_out[1] + oh) * n_out[2] + ow] += xv * wv;
                  }
                }
              }
          }
  if (bias_in.defined()) {
    const at::Tensor bias = bias_in.to(at::kCPU, at::kDouble).contiguous();
    const int64_t plane = n_out[0] * n_out[1] * n_out[2];
    for (int64_t b = 0; b < B; ++b)
      for (int64_t co = 0; co < Co; ++co)
        for (int64_t i = 0; i < plane; ++i) yp[(b * Co + co) * plane + i] += bias.data_ptr<double>()[co];
  }
  return y;
}

std::vector<channel_stats> batch_stats(const at::Tensor& y_in) {
  const at::Tensor y = y_in.contiguous();
  const int64_t B = y.size(0), C = y.size(1), plane = y.numel() / (B * C);
  const double* p = y.data_ptr<double>();
  std::vector<channel_stats> stats(C);
  for (int64_t c = 0; c < C; ++c) {
    double sum = 0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < plane; ++i) sum += p[(b * C + c) * plane + i];
    const int64_t n = B * plane;
    const double mean = sum / static_cast<double>(n);
    double ss = 0;  // two-pass variance: no E[x^2]-E[x]^2 cancellation
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < plane; ++i) {
        const double d = p[(b * C + c) * plane + i] - mean;
        ss += d * d;
      }
    stats[c] = {mean, ss / static_cast<double>(n), n};
  }
  return stats;
}

at::Tensor batch_norm(const at::Tensor& y_in, const tensor_map& params, const std::string& prefix, bool training,
                      double momentum, double eps, tensor_map& buffers_out) {
  const at::Tensor y = y_in.contiguous();
  const int64_t B = y.size(0), C = y.size(1), plane = y.numel() / (B * C);
  const at::Tensor gamma = param64(params, prefix + ".weight");
  const at::Tensor beta = param64(params, prefix + ".bias");
  at::Tensor rm = param64(params, prefix + ".running_mean").clone();
  at::Tensor rv = param64(params, prefix + ".running_var").clone();
  at::Tensor tracked = params.at(prefix + ".num_batches_tracked").to(at::kCPU).clone();
  std::vector<double> mean(C), var(C);
  if (training) {
    const auto stats = batch_stats(y);
    for (int64_t c = 0; c < C; ++c) {
      mean[c] = stats[c].mean;
      var[c] = stats[c].var_biased;
      const double n = static_cast<double>(stats[c].count);
      rm.data_ptr<double>()[c] = (1 - momentum) * rm.data_ptr<double>()[c] + momentum * stats[c].mean;
      rv.data_ptr<double>()[c] =
          (1 - momentum) * rv.data_ptr<double>()[c] + momentum * stats[c].var_biased * n / (n - 1);
    }
    tracked.add_(1);
  } else {
    for (int64_t c = 0; c < C; ++c) {
      mean[c] = rm.data_ptr<double>()[c];
      var[c] = rv.data_ptr<double>()[c];
    }
  }
  at::Tensor out = at::empty_like(y);
  const double* yp = y.data_ptr<double>();
  double* op = out.data_ptr<double>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c) {
      const double inv = 1.0 / std::sqrt(var[c] + eps);
      for (int64_t i = 0; i < plane; ++i) {
        const int64_t k = (b * C + c) * plane + i;
        op[k] = (yp[k] - mean[c]) * inv * gamma.data_ptr<double>()[c] + beta.data_ptr<double>()[c];
      }
    }
  buffers_out[prefix + ".running_mean"] = rm;
  buffers_out[prefix + ".running_var"] = rv;
  buffers_out[prefix + ".num_batches_tracked"] = tracked;
  return out;
}

at::Tensor layer_norm_last_dim(const at::Tensor& y_in, const at::Tensor& gamma_in, const at::Tensor& beta_in,
                               double eps) {
  const at::Tensor y = y_in.contiguous();
  const at::Tensor gamma = gamma_in.to(at::kCPU, at::kDouble).contiguous();
  const at::Tensor beta = beta_in.to(at::kCPU, at::kDouble).contiguous();
  const int64_t W = y.size(-1), rows = y.numel() / W;
  TORCH_CHECK(gamma.numel() == W, "oracle layer_norm: gamma has ", gamma.numel(), " elements, last dim is ", W);
  at::Tensor out = at::empty_like(y);
  const double* yp = y.data_ptr<double>();
  double* op = out.data_ptr<double>();
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = yp + r * W;
    double sum = 0;
    for (int64_t w = 0; w < W; ++w) sum += row[w];
    const double mean = sum / static_cast<double>(W);
    double ss = 0;
    for (int64_t w = 0; w < W; ++w) ss += (row[w] - mean) * (row[w] - mean);
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(W) + eps);
    for (int64_t w = 0; w < W; ++w)
      op[r * W + w] = (row[w] - mean) * inv * gamma.data_ptr<double>()[w] + beta.data_ptr<double>()[w];
  }
  return out;
}

at::Tensor gelu_erf(const at::Tensor& y_in) {
  const at::Tensor y = y_in.contiguous();
  at::Tensor out = at::empty_like(y);
  const double* yp = y.data_ptr<double>();
  double* op = out.data_ptr<double>();
  for (int64_t i = 0; i < y.numel(); ++i) op[i] = 0.5 * yp[i] * (1.0 + std::erf(yp[i] / std::sqrt(2.0)));
  return out;
}

at::Tensor spatial_mean(const at::Tensor& y_in) {
  const at::Tensor y = y_in.contiguous();
  const int64_t B = y.size(0), C = y.size(1), plane = y.numel() / (B * C);
  at::Tensor out = at::empty({B, C}, at::kDouble);
  const double* yp = y.data_ptr<double>();
  for (int64_t bc = 0; bc < B * C; ++bc) {
    double sum = 0;
    for (int64_t i = 0; i < plane; ++i) sum += yp[bc * plane + i];
    out.data_ptr<double>()[bc] = sum / static_cast<double>(plane);
  }
  return out;
}

double logsumexp(const double* v, int64_t n) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) m = std::max(m, v[i]);
  if (!std::isfinite(m)) return m;
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::exp(v[i] - m);
  return m + std::log(s);
}

}  // namespace fb::ref::oracle
