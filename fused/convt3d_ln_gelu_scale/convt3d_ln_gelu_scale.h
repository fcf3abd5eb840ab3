#pragma once
/// Fused ConvTranspose3d -> LayerNorm over the last dim W' (== C_out) -> exact erf GELU -> * scale
/// (KernelBench #34, SPEC 1.2). Torch-free and CUDA-header-free: host-only code may include it.
///
/// out[b, co, d', h', w'] = scale * GELU(gamma[w'] * (y - mean) / sqrt(var + eps) + beta[w']), with
/// y the transposed convolution and mean, var (biased, from centred values) over the W' values of
/// the row (b, co, d', h'). The conv bias adds a constant to every row and cancels in exact
/// arithmetic; the kernels still add it before rounding y to fp32, as PyTorch does (the grid y is
/// rounded to depends on it). Algorithm and precision: fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale.cu.
#include <cstddef>
#include <cstdint>

#include "fused/runtime/stream.h"

namespace fb::fused::convt3d_ln_gelu_scale {

/// Sizes and constants of one call (SPEC 1.2 constructor arguments and input sizes).
struct problem {
  int64_t batch, in_channels, out_channels, depth, height, width, kernel_size, stride, padding;
  double eps;             ///< LayerNorm eps (> 0), added once inside the root
  double scaling_factor;  ///< the factor after GELU (finite, any sign)
};

/// Scratch bytes the caller must provide to run_cuda (device memory) and run_host (host memory).
/// Throws std::invalid_argument, naming the field and rule, for an invalid problem (also W' !=
/// out_channels, and W' beyond what a block holds in shared memory: out_channels <= 128).
[[nodiscard]] std::size_t workspace_bytes(const problem&);

/// x (B,C_in,D,H,W), weight (C_in,C_out,k,k,k), conv_bias (C_out, or null), gamma and beta (W'),
/// out (B,C_out,D',H',W'): contiguous fp32 device pointers; workspace: workspace_bytes() of device
/// memory. Asynchronous on `stream`, no allocation, no host sync, graph-capturable; writes every
/// element of out. Deterministic (bitwise, independent of the device's SM count).
void run_cuda(const problem&, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* out, void* workspace, stream_t stream);

/// Same algorithm on the CPU with host pointers (the host executor): the kernels' own block
/// programs, run thread by thread; workspace is host memory.
void run_host(const problem&, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* out, void* workspace);

}  // namespace fb::fused::convt3d_ln_gelu_scale
