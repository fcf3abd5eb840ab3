#pragma once
/// What the example plug-ins for KernelBench #44 (ConvTranspose2d -> * multiplier -> global average
/// pool, twice; SPEC.md 1.4) share: reading the call's config and tensors, and the math, written once
/// for the host and the CUDA kernel. Only the ABI header (include/fusebench/plugin.h) is needed: no
/// fusebench, torch or CUDA header.
///
/// The algebra: the mean of the transposed convolution over its (H', W') output is
///   bias[co] + 1/(H'W') * sum_{ci,kh,kw} W[ci,co,kh,kw] * S[b,ci,kh,kw],
/// where S sums x[b,ci,h,w] over the inputs whose tap (kh, kw) lands inside the output: the rows h with
/// 0 <= h*stride - padding + kh < H' (a contiguous range, h_first..h_last) and likewise the columns.
/// With padding > 0 the border inputs' outer taps fall outside: dropping that "border term" (summing
/// all of x for every tap) is the classic mistake (examples/plugins/wrong_border).
#include <fusebench/plugin.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(__CUDACC__)
#define EXAMPLE_HOST_DEVICE __host__ __device__ inline
#else
#define EXAMPLE_HOST_DEVICE inline
#endif

namespace example {

/// The config of one call (the model's constructor arguments and input sizes).
struct problem {
  int64_t batch, in_channels, out_channels, height, width, kernel_size, stride, padding, output_padding;
  double multiplier;
  [[nodiscard]] EXAMPLE_HOST_DEVICE int64_t out_height() const {
    return (height - 1) * stride - 2 * padding + kernel_size + output_padding;
  }
  [[nodiscard]] EXAMPLE_HOST_DEVICE int64_t out_width() const {
    return (width - 1) * stride - 2 * padding + kernel_size + output_padding;
  }
};

/// The input rows (or columns) [first, last] whose tap k lands in [0, out_size): empty when first > last.
EXAMPLE_HOST_DEVICE void tap_range(int64_t size, int64_t stride, int64_t padding, int64_t k, int64_t out_size,
                                   int64_t* first, int64_t* last) {
  // h*stride - padding + k >= 0  <=>  h >= ceil((padding - k) / stride)
  const int64_t lo = padding - k;
  int64_t f = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  // h*stride - padding + k <= out_size - 1  <=>  h <= floor((out_size - 1 + padding - k) / stride)
  const int64_t hi = out_size - 1 + padding - k;
  int64_t l = hi < 0 ? -1 : hi / stride;
  if (l > size - 1) l = size - 1;
  *first = f;
  *last = l;
}

/// Reads the config; false (with `error` filled) when a field is missing.
inline bool read_problem(const fusebench_config* c, problem* p, char* error, size_t error_size) {
  struct field {
    const char* name;
    int64_t* value;
  } fields[] = {{"batch_size", &p->batch},   {"in_channels", &p->in_channels}, {"out_channels", &p->out_channels},
                {"height", &p->height},      {"width", &p->width},             {"kernel_size", &p->kernel_size},
                {"stride", &p->stride},      {"padding", &p->padding},         {"output_padding", &p->output_padding}};
  for (const field& f : fields) {
    double v = 0;
    if (!fusebench_config_value(c, f.name, &v)) {
      snprintf(error, error_size, "config field %s is missing (is this model 44?)", f.name);
      return false;
    }
    *f.value = static_cast<int64_t>(v);
  }
  if (!fusebench_config_value(c, "multiplier", &p->multiplier)) {
    snprintf(error, error_size, "config field multiplier is missing");
    return false;
  }
  return true;
}

/// The call's tensors as raw float pointers; false (with `error` filled) when one is missing or not a
/// contiguous float32 tensor.
struct tensors {
  const float* x = nullptr;
  const float* weight = nullptr;
  const float* bias = nullptr;  ///< may be null: no conv bias
  float* out = nullptr;
};

inline bool contiguous_float(const fusebench_tensor* t) {
  if (t == nullptr || t->dtype != FUSEBENCH_FLOAT32) return false;
  int64_t expected = 1;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    if (t->shape[d] != 1 && t->strides[d] != expected) return false;
    expected *= t->shape[d];
  }
  return true;
}

inline bool read_tensors(const fusebench_call* call, tensors* t, char* error, size_t error_size) {
  const fusebench_tensor* w = fusebench_find_tensor(call->params, call->num_params, "conv_transpose.weight");
  const fusebench_tensor* b = fusebench_find_tensor(call->params, call->num_params, "conv_transpose.bias");
  if (!contiguous_float(call->input) || !contiguous_float(w) || !contiguous_float(call->output) ||
      (b != nullptr && !contiguous_float(b))) {
    snprintf(error, error_size, "input, conv_transpose.weight, conv_transpose.bias and output must be contiguous float32");
    return false;
  }
  t->x = static_cast<const float*>(call->input->data);
  t->weight = static_cast<const float*>(w->data);
  t->bias = b != nullptr ? static_cast<const float*>(b->data) : nullptr;
  t->out = static_cast<float*>(call->output->data);
  return true;
}

/// A call's config and tensors, both read (false, with the reason in error, where either fails).
inline bool read_call(const fusebench_call* call, problem* p, tensors* t, char* error, size_t error_size) {
  return read_problem(&call->config, p, error, error_size) && read_tensors(call, t, error, error_size);
}

/// out[b, co] from the tap sums S[b, ci, kh, kw] (fp64), in a fixed order: the same bits every call.
EXAMPLE_HOST_DEVICE float output_element(const problem& p, const double* tap_sums, const float* weight, const float* bias,
                                         int64_t b, int64_t co) {
  const int64_t k = p.kernel_size;
  double acc = 0;
  for (int64_t ci = 0; ci < p.in_channels; ++ci)
    for (int64_t t = 0; t < k * k; ++t)
      acc += static_cast<double>(weight[(ci * p.out_channels + co) * k * k + t]) * tap_sums[(b * p.in_channels + ci) * k * k + t];
  const double area = static_cast<double>(p.out_height()) * static_cast<double>(p.out_width());
  const double mean = (bias != nullptr ? static_cast<double>(bias[co]) : 0.0) + acc / area;
  return static_cast<float>(p.multiplier * mean);
}

/// Workspace of the tap sums: B * C_in * k * k doubles.
[[nodiscard]] inline size_t tap_sum_bytes(const problem& p) {
  return static_cast<size_t>(p.batch * p.in_channels * p.kernel_size * p.kernel_size) * sizeof(double);
}

/// The ABI's workspace query (fusebench_implementation::workspace_bytes) for every example: the tap
/// sums of the config, 0 where it does not read (run then reports the config's error).
inline size_t workspace_bytes(const fusebench_config* config, fusebench_device, void*) {
  problem p{};
  char ignored[8];
  return read_problem(config, &p, ignored, sizeof ignored) ? tap_sum_bytes(p) : 0;
}

/// Registers a CPU implementation of `model` named `name` with the examples' workspace query: what
/// the deliberately faulty examples (crashing, out_of_bounds, wrong_border) each register.
inline int add_cpu_implementation(const fusebench_host* host, const char* model, const char* name,
                                  decltype(fusebench_implementation::run) run) {
  fusebench_implementation impl{};
  impl.model = model;
  impl.name = name;
  impl.devices = FUSEBENCH_DEVICES_CPU;
  impl.run = run;
  impl.workspace_bytes = workspace_bytes;
  return host->add_implementation(host, &impl);
}

/// The host path: tap sums from a 2-D prefix sum of each (b, ci) plane, then the outputs.
/// `drop_border`: sum the whole plane for every tap (the mistake of examples/plugins/wrong_border).
inline void run_host(const problem& p, const tensors& t, double* tap_sums, bool drop_border = false) {
  const int64_t H = p.height, W = p.width, k = p.kernel_size;
  double* prefix = new double[static_cast<size_t>((H + 1) * (W + 1))];
  for (int64_t plane = 0; plane < p.batch * p.in_channels; ++plane) {
    const float* x = t.x + plane * H * W;
    for (int64_t j = 0; j <= W; ++j) prefix[j] = 0;
    for (int64_t i = 1; i <= H; ++i) {
      double row = 0;
      prefix[i * (W + 1)] = 0;
      for (int64_t j = 1; j <= W; ++j) {
        row += x[(i - 1) * W + (j - 1)];
        prefix[i * (W + 1) + j] = prefix[(i - 1) * (W + 1) + j] + row;
      }
    }
    for (int64_t kh = 0; kh < k; ++kh)
      for (int64_t kw = 0; kw < k; ++kw) {
        int64_t h0 = 0, h1 = H - 1, w0 = 0, w1 = W - 1;
        if (!drop_border) {
          tap_range(H, p.stride, p.padding, kh, p.out_height(), &h0, &h1);
          tap_range(W, p.stride, p.padding, kw, p.out_width(), &w0, &w1);
        }
        double s = 0;
        if (h0 <= h1 && w0 <= w1)
          s = prefix[(h1 + 1) * (W + 1) + (w1 + 1)] - prefix[h0 * (W + 1) + (w1 + 1)] -
              prefix[(h1 + 1) * (W + 1) + w0] + prefix[h0 * (W + 1) + w0];
        tap_sums[plane * k * k + kh * k + kw] = s;
      }
  }
  delete[] prefix;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t co = 0; co < p.out_channels; ++co)
      t.out[b * p.out_channels + co] = output_element(p, tap_sums, t.weight, t.bias, b, co);
}

}  // namespace example
