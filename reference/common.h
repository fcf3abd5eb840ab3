#pragma once
/// Shared vocabulary of the libtorch references: named tensors, forward results, config errors,
/// PyTorch-faithful parameter initialisation and the TF32 switch.
#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>


namespace fb::ref {

/// Named tensors keyed exactly like the PyTorch module's state_dict ("conv_transpose.weight", ...).
using tensor_map = std::map<std::string, at::Tensor>;

/// One forward call: the output plus the BatchNorm buffers as they stand after the call
/// (empty for models without BatchNorm; unchanged copies in eval mode).
struct forward_result {
  at::Tensor output;
  tensor_map buffers;
};

/// A config that PyTorch would reject or that makes no sense. The message names the field, the
/// value and the rule, e.g. `output_padding = 2: must be < stride (2)`.
class config_error : public std::invalid_argument {
 public:
  config_error(std::string field, std::string value, std::string rule)
      : std::invalid_argument(field + " = " + value + ": " + rule),
        m_field(std::move(field)),
        m_value(std::move(value)),
        m_rule(std::move(rule)) {}
  [[nodiscard]] const std::string& field() const { return m_field; }
  [[nodiscard]] const std::string& value() const { return m_value; }
  [[nodiscard]] const std::string& rule() const { return m_rule; }

 private:
  std::string m_field, m_value, m_rule;
};

/// Throws config_error(field, value, rule) unless `ok`.
template <class T>
void require(bool ok, const std::string& field, const T& value, const std::string& rule) {
  if (ok) return;
  std::ostringstream os;
  os << value;
  throw config_error(field, os.str(), rule);
}

/// How a parameter set is made: as the PyTorch module initialises itself, or fully random (fuzzing:
/// gamma=1, beta=0 and small biases hide bugs, so every parameter and buffer is drawn).
/// outlier_weights: randomized, then ~0.2% of the transposed convolution's weights (at least one)
/// multiplied by 2^10: the "weights with a few huge entries" that a split-precision product with a
/// shared scale per weight column must survive (issue 36).
enum class param_init { pytorch_default, randomized, outlier_weights };

/// A seeded CPU generator: every random tensor is drawn on the CPU so a case is the same on any device.
[[nodiscard]] at::Generator make_generator(uint64_t seed);

/// Uniform on [lo, hi), float32, CPU.
[[nodiscard]] at::Tensor uniform(at::IntArrayRef shape, double lo, double hi, at::Generator& gen);
/// Normal(mean, std), float32, CPU.
[[nodiscard]] at::Tensor normal(at::IntArrayRef shape, double mean, double std, at::Generator& gen);
/// One uniform draw in [lo, hi).
[[nodiscard]] double uniform_scalar(double lo, double hi, at::Generator& gen);

/// Adds `conv_transpose.weight` (C_in, C_out, k^dims) and, if `bias`, `conv_transpose.bias` (C_out).
/// Default init is PyTorch's: kaiming_uniform(a=sqrt(5)) with fan_in = C_out * k^dims (dim 1 of
/// the transposed weight), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bound for the bias.
void init_conv_transpose(tensor_map& params, int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                         int dims, bool bias, param_init init, at::Generator& gen);

/// Adds `<prefix>.weight/.bias/.running_mean/.running_var/.num_batches_tracked` for BatchNorm(channels).
void init_batch_norm(tensor_map& params, const std::string& prefix, int64_t channels, param_init init,
                     at::Generator& gen);

/// The names of BatchNorm buffers under `prefix` (updated by training-mode forward calls).
[[nodiscard]] std::vector<std::string> batch_norm_buffer_names(const std::string& prefix);

/// Training-mode BatchNorm through ATen on `y` with the buffers in `params` under `prefix`;
/// returns the normalised tensor and appends the updated buffers (copies) to `buffers_out`.
/// Follows nn.BatchNorm: ATen updates running_mean/var (unbiased var), the module bumps num_batches_tracked.
[[nodiscard]] at::Tensor batch_norm_forward(const at::Tensor& y, const tensor_map& params, const std::string& prefix,
                                            bool training, double momentum, double eps, tensor_map& buffers_out);

/// `params[name]` converted to the dtype/device of `like`; throws std::out_of_range naming a missing key.
[[nodiscard]] at::Tensor param_like(const tensor_map& params, const std::string& name, const at::Tensor& like);

/// RAII: sets whether cuDNN and cuBLAS may use TF32 and restores the previous setting.
/// The strict reference runs under tf32_guard(false) (SPEC §2: a TF32 reference is 1e-3 off).
class tf32_guard {
 public:
  explicit tf32_guard(bool allow);
  ~tf32_guard();
  tf32_guard(const tf32_guard&) = delete;
  tf32_guard& operator=(const tf32_guard&) = delete;

 private:
  bool m_prev_cudnn;
  bool m_prev_cublas;
};

}  // namespace fb::ref

namespace fb::ref {

/// The output size of a transposed convolution as PyTorch documents it for ConvTranspose{2,3}d
/// (dilation 1): (n_in - 1)*s - 2p + dilation*(k - 1) + op + 1. Written here, not taken from fused/:
/// the reference judges the fused kernels, so it shares no formula with them (a wrong size there must
/// not be wrong here as well).
[[nodiscard]] inline int64_t conv_transpose_output_size(int64_t n_in, int64_t k, int64_t s, int64_t p, int64_t op) {
  constexpr int64_t dilation = 1;
  return (n_in - 1) * s - 2 * p + dilation * (k - 1) + op + 1;
}

/// The rules PyTorch applies to a transposed convolution, shared by all five models. `spatial`
/// holds {name, size} of each input spatial dim; throws config_error naming the first broken rule.
struct named_size {
  const char* name;
  int64_t value;
};
void validate_conv_transpose(int64_t batch_size, int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                             int64_t stride, int64_t padding, int64_t output_padding,
                             const std::vector<named_size>& spatial);

}  // namespace fb::ref

namespace fb::ref {

/// How much a normalisation amplifies fp32 rounding in the libtorch reference: the largest
/// magnitude * |gamma| / sqrt(var + eps) over the groups normalised together (the rows of a
/// LayerNorm, the channels of a BatchNorm). `magnitude` is the typical scale of fp32 rounding in
/// each conv output element, |y| + sqrt(conv(x^2, w^2)) (the sum's rounding grows with the root
/// sum of squares of its terms, which exceeds |y| where the conv sum cancels); libtorch's
/// (y - mean) * rstd, computed as y*a + b, then cancels again. The fp32 error of the
/// reference grows with this ratio; past the harness's limit it misses the 1e-5 gate against fp64
/// and the case cannot judge a fused kernel. `y` and `magnitude` are float64; `reduce_dims` are the
/// dims of one group; `gamma` broadcasts against the per-group statistics.
[[nodiscard]] double normalisation_conditioning(const at::Tensor& y, const at::Tensor& magnitude,
                                                at::IntArrayRef reduce_dims, double eps, const at::Tensor& gamma);

/// `params` with the conv weight squared and the conv bias dropped: conv(x^2, w^2) is the sum of the
/// squared terms of each conv output element.
[[nodiscard]] tensor_map squared_conv_params(const tensor_map& params);
/// |y| + sqrt(sum_of_squares): see normalisation_conditioning.
[[nodiscard]] at::Tensor rounding_magnitude(const at::Tensor& y, const at::Tensor& sum_of_squares);

}  // namespace fb::ref
