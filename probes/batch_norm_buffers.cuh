#pragma once
/// The device buffers of a BatchNorm model's call (#15, #77) for the timing probes, filled as
/// KernelBench fills them: x by torch.rand, the weight and conv bias uniform in +-1/sqrt(fan_in)
/// (ConvTranspose3d's init), gamma in [0.5, 1.5] and beta in [-1, 1] (randomised so that the
/// affine step is exercised). One seed, one fill order: two builds see the same inputs.
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "fused/runtime/cuda_check.h"

namespace fb::probes {

struct batch_norm_buffers {
  float *x = nullptr, *weight = nullptr, *conv_bias = nullptr, *gamma = nullptr, *beta = nullptr;
  float *running_mean = nullptr, *running_var = nullptr, *out = nullptr;
  int64_t* num_batches_tracked = nullptr;
  void* workspace = nullptr;
  int64_t channels = 0;

  /// fan_in: out_channels * k^3 (PyTorch's for a transposed convolution's weight).
  batch_norm_buffers(int64_t n_x, int64_t n_w, int64_t out_channels, int64_t fan_in, int64_t n_out,
                     std::size_t workspace_bytes)
      : channels(out_channels) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<float> u01(0.0f, 1.0f), u(-1.0f, 1.0f);
    std::vector<float> hx(n_x), hw(n_w), hb(channels), hg(channels), hbeta(channels);
    for (float& v : hx) v = u01(rng);
    const float wb = 1.0f / std::sqrt(static_cast<float>(fan_in));
    for (float& v : hw) v = wb * u(rng);
    for (float& v : hb) v = wb * u(rng);
    for (float& v : hg) v = 1.0f + 0.5f * u(rng);
    for (float& v : hbeta) v = u(rng);
    upload(&x, hx);
    upload(&weight, hw);
    upload(&conv_bias, hb);
    upload(&gamma, hg);
    upload(&beta, hbeta);
    FB_CUDA_CHECK(cudaMalloc(&running_mean, channels * 4));
    FB_CUDA_CHECK(cudaMalloc(&running_var, channels * 4));
    FB_CUDA_CHECK(cudaMalloc(&num_batches_tracked, sizeof(int64_t)));
    FB_CUDA_CHECK(cudaMalloc(&out, n_out * 4));
    FB_CUDA_CHECK(cudaMalloc(&workspace, workspace_bytes));
  }
  batch_norm_buffers(const batch_norm_buffers&) = delete;
  batch_norm_buffers& operator=(const batch_norm_buffers&) = delete;
  ~batch_norm_buffers() {
    for (void* p : {static_cast<void*>(x), static_cast<void*>(weight), static_cast<void*>(conv_bias),
                    static_cast<void*>(gamma), static_cast<void*>(beta), static_cast<void*>(running_mean),
                    static_cast<void*>(running_var), static_cast<void*>(out),
                    static_cast<void*>(num_batches_tracked), workspace})
      cudaFree(p);
  }

  /// The running buffers back to PyTorch's initial values (training updates them in place), so
  /// that every call computes the same thing; callers keep it outside the timed span.
  void reset(cudaStream_t s) {
    const std::vector<float> zeros(channels, 0.0f), ones(channels, 1.0f);
    FB_CUDA_CHECK(cudaMemcpyAsync(running_mean, zeros.data(), channels * 4, cudaMemcpyHostToDevice, s));
    FB_CUDA_CHECK(cudaMemcpyAsync(running_var, ones.data(), channels * 4, cudaMemcpyHostToDevice, s));
    FB_CUDA_CHECK(cudaMemsetAsync(num_batches_tracked, 0, sizeof(int64_t), s));
    FB_CUDA_CHECK(cudaStreamSynchronize(s));  // the host vectors die here
  }

 private:
  static void upload(float** dst, const std::vector<float>& v) {
    FB_CUDA_CHECK(cudaMalloc(dst, v.size() * 4));
    FB_CUDA_CHECK(cudaMemcpy(*dst, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
  }
};

}  // namespace fb::probes
