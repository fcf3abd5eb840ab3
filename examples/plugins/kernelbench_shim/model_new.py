"""A KernelBench candidate for level 2 problem 44 (ConvTranspose2d -> * multiplier -> global average
pool, twice), in the form KernelBench asks for: ModelNew with its CUDA source inline
(torch.utils.cpp_extension.load_inline). It stands for what an agent or a kernel engineer submits.

fusebench judges it without Python: extract_cuda.py copies the CUDA source below (the kernels, without
the torch wrapper at its end) into kernel.cuh, and shim.cu is the `run` shim that launches those kernels
with the pointers, workspace and stream fusebench hands over (include/fusebench/plugin.h). Build it with
examples/plugins/CMakeLists.txt; then `fusebench verify --plugin libkernelbench_44.so --model 44`.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

// One block per (b, ci) plane: for each tap (kh, kw), the sum of the inputs x[b, ci, h, w] whose tap
// lands inside the cropped output (0 <= h*stride - padding + kh < H_out, likewise w), in double.
__global__ void plane_tap_sums_kernel(const float* __restrict__ x, double* __restrict__ tap_sums, int H, int W,
                                      int K, int stride, int padding, int H_out, int W_out) {
    const int plane = blockIdx.x;
    extern __shared__ double partial[];
    for (int tap = 0; tap < K * K; ++tap) {
        const int kh = tap / K, kw = tap % K;
        double s = 0.0;
        for (int e = threadIdx.x; e < H * W; e += blockDim.x) {
            const int h = e / W, w = e % W;
            const int oh = h * stride - padding + kh, ow = w * stride - padding + kw;
            if (oh >= 0 && oh < H_out && ow >= 0 && ow < W_out) s += (double)x[(size_t)plane * H * W + e];
        }
        partial[threadIdx.x] = s;
        __syncthreads();
        for (int half = blockDim.x / 2; half > 0; half /= 2) {
            if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
            __syncthreads();
        }
        if (threadIdx.x == 0) tap_sums[(size_t)plane * K * K + tap] = partial[0];
        __syncthreads();
    }
}

// One thread per (b, co): multiplier * (bias + sum_{ci, tap} weight * tap_sum / (H_out * W_out)).
__global__ void combine_kernel(const double* __restrict__ tap_sums, const float* __restrict__ weight,
                               const float* __restrict__ bias, float* __restrict__ out, int B, int C_in,
                               int C_out, int K, double inv_area, double multiplier) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= B * C_out) return;
    const int b = i / C_out, co = i % C_out;
    double acc = 0.0;
    for (int ci = 0; ci < C_in; ++ci)
        for (int tap = 0; tap < K * K; ++tap)
            acc += (double)weight[((size_t)ci * C_out + co) * K * K + tap] * tap_sums[((size_t)b * C_in + ci) * K * K + tap];
    out[i] = (float)(multiplier * ((double)bias[co] + acc * inv_area));
}

torch::Tensor conv_transpose_mul_gap_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, int stride,
                                          int padding, int output_padding, double multiplier) {
    const int B = x.size(0), C_in = x.size(1), H = x.size(2), W = x.size(3);
    const int C_out = weight.size(1), K = weight.size(2);
    const int H_out = (H - 1) * stride - 2 * padding + K + output_padding;
    const int W_out = (W - 1) * stride - 2 * padding + K + output_padding;
    auto tap_sums = torch::empty({B, C_in, K, K}, x.options().dtype(torch::kFloat64));
    auto out = torch::empty({B, C_out, 1, 1}, x.options());
    auto stream = at::cuda::getCurrentCUDAStream();
    plane_tap_sums_kernel<<<B * C_in, 256, 256 * sizeof(double), stream>>>(
        x.data_ptr<float>(), tap_sums.data_ptr<double>(), H, W, K, stride, padding, H_out, W_out);
    combine_kernel<<<(B * C_out + 255) / 256, 256, 0, stream>>>(
        tap_sums.data_ptr<double>(), weight.data_ptr<float>(), bias.data_ptr<float>(), out.data_ptr<float>(), B, C_in,
        C_out, K, 1.0 / ((double)H_out * W_out), multiplier);
    return out;
}
"""

cpp_source = (
    "torch::Tensor conv_transpose_mul_gap_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, "
    "int stride, int padding, int output_padding, double multiplier);"
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier):
        super().__init__()
        # Same parameters (and state_dict keys) as the reference Model.
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.multiplier = multiplier
        self.stride, self.padding, self.output_padding = stride, padding, output_padding
        self.fused = load_inline(name="conv_transpose_mul_gap", cpp_sources=cpp_source, cuda_sources=cuda_source,
                                 functions=["conv_transpose_mul_gap_cuda"], verbose=False)

    def forward(self, x):
        return self.fused.conv_transpose_mul_gap_cuda(
            x.contiguous(), self.conv_transpose.weight.contiguous(), self.conv_transpose.bias.contiguous(),
            self.stride, self.padding, self.output_padding, float(self.multiplier))
