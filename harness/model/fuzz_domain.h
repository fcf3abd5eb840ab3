#pragma once
/// A model's fuzz domain declared once, as data: every field with its range and distribution, and the
/// constraints between them. The RapidCheck generators (harness/model/generators.cpp), `fusebench list`
/// (text and --json), the GPU self-test's draw() (property_tests/selftest/, built without libtorch or
/// RapidCheck) and the README's domain table (checked by generators_test) all read it, so none of them
/// can drift from the others. Torch-free, RapidCheck-free and header-only for that reason.
///
/// The domain is every config PyTorch accepts within the case-size limits: padding up to the largest
/// that leaves a non-empty output, output_padding over its whole range [0, stride). A limit of a fused
/// implementation would be declared beside that implementation, never here (no fused kernel has one
/// today: each runs every config of its model's domain).
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace fb::domain {

/// How a real field is drawn.
enum class distribution { uniform, log_uniform };

/// Integers lo..hi, both included.
struct integer_range {
  int64_t lo;
  int64_t hi;
};

/// A real config field drawn from [lo, hi].
struct real_field {
  const char* name;  ///< the config key
  double lo;
  double hi;
  distribution dist = distribution::uniform;
};

/// The fuzz domain of a transposed-convolution model.
struct convt_domain {
  int dims = 2;                       ///< spatial dims: 2 or 3
  bool strided = true;                ///< stride and padding are config keys (else stride 1, padding 0)
  bool output_padding = false;        ///< output_padding is a config key: drawn over [0, stride)
  bool last_dim_is_channels = false;  ///< LayerNorm(out_channels) over the last dim: C_out := W'
  integer_range batch{1, 8};
  integer_range channels{1, 64};      ///< C_in and C_out, drawn independently
  integer_range kernel{1, 7};
  integer_range stride{1, 4};
  integer_range spatial{1, 40};       ///< every input spatial size
  /// Padding: 0..kernel_size, except one case in `wide_padding_one_in`, which draws it from 0 up to the
  /// largest PyTorch accepts (max_padding: crops at both borders, padding above the kernel size).
  int wide_padding_one_in = 3;
  std::vector<real_field> reals;      ///< the model's own scalars
  std::vector<const char*> flags;     ///< boolean config keys, drawn both ways
  /// The flag that switches training-mode BatchNorm on ("" when none): then B * D'H'W' > 1.
  const char* batch_norm_training_flag = "";
  double input_offset = 100.0;        ///< centre of the `offset` input distribution
  /// Also draw the inputs and weights that attack split-precision convolutions (issue 36): values
  /// spanning 60 binades within one patch (`wide`), rows whose LayerNorm mean cancels (`near_constant`)
  /// and a few conv weights 2^10 times the rest (the `outliers` parameter regime). A per-row/per-column
  /// scaled int8 split (Ozaki) of #34's convolution misses 1e-5 on the last at 4 slices
  /// (probes/split_scheme/split_accuracy).
  bool split_scheme_attacks = false;
  const char* note = "";              ///< what else the domain holds (parameters, inputs), one phrase
};

/// The largest padding PyTorch accepts at input size n: the output (n-1)s - 2p + k + op stays >= 1.
[[nodiscard]] inline int64_t max_padding(int64_t n, int64_t kernel_size, int64_t stride, int64_t output_padding) {
  return ((n - 1) * stride + kernel_size + output_padding - 1) / 2;
}

/// The padding a domain allows for a kernel and stride at any of its input sizes.
[[nodiscard]] inline int64_t max_padding(const convt_domain& d, int64_t kernel_size, int64_t stride,
                                         int64_t output_padding) {
  return max_padding(d.spatial.hi, kernel_size, stride, output_padding);
}

namespace detail {
inline std::string format_real(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
inline std::string range_text(const integer_range& r) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%" PRId64 "..%" PRId64, r.lo, r.hi);
  return buf;
}
}  // namespace detail

/// One line: "B 1..8, C 1..64, k 1..7, s 1..4, p 0..k (1 in 3: up to PyTorch's bound), op 0..s-1,
/// H,W 1..40, multiplier [-3,3]; offset inputs +10".
[[nodiscard]] inline std::string describe(const convt_domain& d) {
  std::string s = "B " + detail::range_text(d.batch);
  s += d.last_dim_is_channels ? ", C_in " + detail::range_text(d.channels) + ", C_out = W' <= " +
                                    std::to_string(d.channels.hi)
                              : ", C " + detail::range_text(d.channels);
  s += ", k " + detail::range_text(d.kernel);
  if (d.strided) {
    s += ", s " + detail::range_text(d.stride) + ", p 0..k (1 in " + std::to_string(d.wide_padding_one_in) +
         ": up to PyTorch's bound, p > k)";
    if (d.output_padding) s += ", op 0..s-1";
  }
  s += d.dims == 3 ? ", D,H,W " : ", H,W ";
  s += detail::range_text(d.spatial);
  for (const real_field& r : d.reals)
    s += ", " + std::string(r.name) + (r.dist == distribution::log_uniform ? " log-uniform [" : " [") +
         detail::format_real(r.lo) + "," + detail::format_real(r.hi) + "]";
  for (const char* f : d.flags) s += ", " + std::string(f) + " on/off";
  if (d.input_offset != 100.0) s += "; offset inputs +" + detail::format_real(d.input_offset);
  if (d.split_scheme_attacks) s += "; split-scheme attacks: wide, near_constant inputs, outlier weights";
  if (d.note[0] != '\0') s += "; " + std::string(d.note);
  return s;
}

/// The README's fuzz-domain table row of a model: "| `id` | #kb | describe(d) |".
[[nodiscard]] inline std::string table_row(const std::string& id, int kernelbench_id, const convt_domain& d) {
  return "| `" + id + "` | " + std::to_string(kernelbench_id) + " | " + describe(d) + " |";
}

}  // namespace fb::domain
