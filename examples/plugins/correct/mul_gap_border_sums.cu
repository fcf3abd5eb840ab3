/// The CUDA path of the correct #44 plug-in: a block per (b, ci, tap) sums the rectangle of x that
/// the tap lands from (a fixed-order tree reduction: the same bits every call), then a thread per
/// (b, co) combines the tap sums with the weights (common/mul_gap_plugin.h: the host path's math).
#include <cuda_runtime.h>

#include "../common/mul_gap_plugin.h"

namespace example {
namespace {

constexpr int threads = 256;

__global__ void tap_sums_kernel(problem p, const float* x, double* tap_sums) {
  const int64_t k = p.kernel_size;
  const int64_t tap = blockIdx.x % (k * k);
  const int64_t plane = blockIdx.x / (k * k);
  int64_t h0, h1, w0, w1;
  tap_range(p.height, p.stride, p.padding, tap / k, p.out_height(), &h0, &h1);
  tap_range(p.width, p.stride, p.padding, tap % k, p.out_width(), &w0, &w1);
  const int64_t rows = h1 >= h0 ? h1 - h0 + 1 : 0, cols = w1 >= w0 ? w1 - w0 + 1 : 0;
  double s = 0;
  for (int64_t e = threadIdx.x; e < rows * cols; e += blockDim.x)
    s += x[(plane * p.height + h0 + e / cols) * p.width + w0 + e % cols];
  __shared__ double partial[threads];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int half = threads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) tap_sums[blockIdx.x] = partial[0];
}

__global__ void output_kernel(problem p, const double* tap_sums, const float* weight, const float* bias, float* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= p.batch * p.out_channels) return;
  out[i] = output_element(p, tap_sums, weight, bias, i / p.out_channels, i % p.out_channels);
}

}  // namespace

int run_cuda(const problem& p, const tensors& t, double* tap_sums, void* stream, char* error, size_t error_size) {
  const auto s = static_cast<cudaStream_t>(stream);
  const int64_t taps = p.batch * p.in_channels * p.kernel_size * p.kernel_size;
  const int64_t outputs = p.batch * p.out_channels;
  if (taps > 0) tap_sums_kernel<<<static_cast<unsigned>(taps), threads, 0, s>>>(p, t.x, tap_sums);
  if (outputs > 0)
    output_kernel<<<static_cast<unsigned>((outputs + threads - 1) / threads), threads, 0, s>>>(p, tap_sums, t.weight,
                                                                                              t.bias, t.out);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    snprintf(error, error_size, "kernel launch: %s", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}

}  // namespace example
