#pragma once
/// Fused ConvTranspose2d -> * multiplier -> mean over (H', W') (KernelBench #44, SPEC 1.4).
/// Torch-free and CUDA-header-free: host-only code may include it.
#include <cstddef>
#include <cstdint>

#include "fused/runtime/stream.h"

namespace fb::fused::convt2d_mul_gap {

/// Sizes and scalar parameters of one call (SPEC 1.4 constructor arguments and input sizes).
struct problem {
  int64_t batch, in_channels, out_channels, height, width, kernel_size, stride, padding, output_padding;
  float multiplier;
};

/// Scratch bytes the caller must provide to run_cuda (device memory) and run_host (host memory).
/// Throws std::invalid_argument, naming the field and rule, for an invalid problem.
[[nodiscard]] std::size_t workspace_bytes(const problem&);

/// x (B,C_in,H,W), weight (C_in,C_out,k,k), conv_bias (C_out), out (B,C_out): contiguous fp32 device
/// pointers; workspace: workspace_bytes() of device memory. Asynchronous on `stream`, no allocation,
/// no host sync, graph-capturable; writes every element of out. Deterministic (bitwise).
void run_cuda(const problem&, const float* x, const float* weight, const float* conv_bias, float* out,
              void* workspace, stream_t stream);

/// Same algorithm on the CPU with host pointers (the host executor); workspace is host memory.
void run_host(const problem&, const float* x, const float* weight, const float* conv_bias, float* out,
              void* workspace);

}  // namespace fb::fused::convt2d_mul_gap
