#pragma once
/// Fused ConvTranspose2d (stride 1, padding 0) -> mean over (H', W') -> + bias -> logsumexp over
/// channels -> * 10 (KernelBench #42, SPEC 1.3). Torch-free and CUDA-header-free.
#include <cstddef>
#include <cstdint>

#include "fused/runtime/stream.h"

namespace fb::fused::convt2d_gap_bias_lse {

/// Sizes of one call (SPEC 1.3 constructor arguments and input sizes).
struct problem {
  int64_t batch, in_channels, out_channels, height, width, kernel_size;
};

/// Scratch bytes the caller must provide to run_cuda (device memory) and run_host (host memory).
/// Throws std::invalid_argument, naming the field and rule, for an invalid problem.
[[nodiscard]] std::size_t workspace_bytes(const problem&);

/// x (B,C_in,H,W), weight (C_in,C_out,k,k), conv_bias (C_out), bias (C_out,1,1), out (B,1): contiguous
/// fp32 device pointers; workspace: workspace_bytes() of device memory. Asynchronous on `stream`, no
/// allocation, no host sync, graph-capturable; writes every element of out. Deterministic (bitwise).
void run_cuda(const problem&, const float* x, const float* weight, const float* conv_bias, const float* bias,
              float* out, void* workspace, stream_t stream);

/// Same algorithm on the CPU with host pointers (the host executor); workspace is host memory.
void run_host(const problem&, const float* x, const float* weight, const float* conv_bias, const float* bias,
              float* out, void* workspace);

}  // namespace fb::fused::convt2d_gap_bias_lse
