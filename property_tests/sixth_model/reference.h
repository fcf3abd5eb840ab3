#pragma once
/// The test-only sixth model, test_convt2d_relu: ConvTranspose2d -> ReLU -> * scale. Not a KernelBench
/// problem and not in `fusebench list`: it proves that a model is new files plus one registry line
/// (README "Adding a model"), in a test executable (property_tests/sixth_model/sixth_model.cmake).
/// This file is its reference/<id>.h: config, validation, shapes, parameters, libtorch forward, fp64 oracle.
#include "reference/common.h"

namespace fb::ref::test_convt2d_relu {

/// Constructor arguments and input sizes (small: the model exists for the tests only).
struct config {
  int64_t in_channels = 3;
  int64_t out_channels = 4;
  int64_t kernel_size = 3;
  int64_t stride = 2;
  int64_t padding = 1;
  int64_t output_padding = 1;
  double scale = 0.5;
  int64_t batch_size = 2;
  int64_t height = 8;
  int64_t width = 8;
};

/// Throws config_error for anything PyTorch rejects.
void validate(const config& c);
/// (B, C_in, H, W).
[[nodiscard]] std::vector<int64_t> input_shape(const config& c);
/// (B, C_out, H', W').
[[nodiscard]] std::vector<int64_t> output_shape(const config& c);
/// (H', W') of the transposed convolution.
[[nodiscard]] std::vector<int64_t> conv_output_shape(const config& c);
/// conv_transpose.weight (C_in, C_out, k, k) and conv_transpose.bias (C_out).
[[nodiscard]] tensor_map make_parameters(const config& c, param_init init, uint64_t seed);
/// libtorch forward on x's device and dtype.
[[nodiscard]] forward_result forward(const config& c, const tensor_map& params, const at::Tensor& x);
/// fp64 loops on the CPU.
[[nodiscard]] forward_result oracle(const config& c, const tensor_map& params, const at::Tensor& x);

}  // namespace fb::ref::test_convt2d_relu
