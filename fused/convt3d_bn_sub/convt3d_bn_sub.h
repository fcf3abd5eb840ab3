#pragma once
/// Fused ConvTranspose3d -> BatchNorm3d -> subtract the per-(b, c) spatial mean (KernelBench #15,
/// SPEC 1.1). Torch-free and CUDA-header-free: host-only code may include it.
///
/// Exact identities used (SPEC 1.1): beta, the batch mean and the conv bias cancel in the output,
///   training: out = gamma_c * (y - ybar_bc) / sqrt(var_c + eps)
///   eval:     out = gamma_c * (y - ybar_bc) / sqrt(running_var_c + eps)
/// with y the convolution without bias, ybar_bc its spatial mean and var_c the biased batch
/// variance; the conv bias still enters running_mean. Algorithm and precision: fused/convt3d_bn_sub/convt3d_bn_sub.cu.
///
/// Workspace at the default config (B=16, C_in=16, C_out=32, 16x32x32, k=3, s=2, p=1), training:
/// 274,660,608 bytes + 256 alignment (262 MiB): 251,983,872 of them the materialised y - ybar (fp32,
/// the output's size: training writes it in the convolution pass and reads it once, instead of
/// convolving a second time; measured faster, fused/convt3d_bn_sub/convt3d_bn_sub.cu), 16,777,216 x - c (fp32, x's
/// size: the centring done once, not in every block that stages x), 5,899,520 the rest (2 MiB of
/// it the centres' class tables). Eval mode has no materialised buffer: 22,676,736 + 256.
/// Property test FusedConvT3dBnSub.WorkspaceAtDefault.
#include <cstddef>
#include <cstdint>

#include "fused/runtime/stream.h"

namespace fb::fused::convt3d_bn_sub {

/// Sizes, BatchNorm constants and mode of one call (SPEC 1.1 constructor arguments and input sizes).
struct problem {
  int64_t batch, in_channels, out_channels, depth, height, width, kernel_size, stride, padding;
  bool training;    ///< BatchNorm mode: batch statistics and buffer updates, else running statistics
  double eps;       ///< BatchNorm eps (> 0), added once inside the root
  double momentum;  ///< BatchNorm momentum in [0, 1]
};

/// Scratch bytes the caller must provide to run_cuda (device memory) and run_host (host memory).
/// Throws std::invalid_argument, naming the field and rule, for an invalid problem.
[[nodiscard]] std::size_t workspace_bytes(const problem&);

/// x (B,C_in,D,H,W), weight (C_in,C_out,k,k,k), conv_bias (C_out, or null: no bias), gamma and beta
/// (C_out), out (B,C_out,D',H',W'): contiguous fp32 device pointers. running_mean, running_var (fp32,
/// C_out) and num_batches_tracked (one int64) are updated in place in training mode and untouched
/// in eval mode. workspace: workspace_bytes() of device memory. Asynchronous on `stream`, no
/// allocation, no host sync, graph-capturable; writes every element of out. Deterministic (bitwise,
/// independent of the device's SM count). beta is accepted for the API's sake: it cancels.
void run_cuda(const problem&, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* running_mean, float* running_var, int64_t* num_batches_tracked, float* out,
              void* workspace, stream_t stream);

/// Same algorithm on the CPU with host pointers (the host executor): the kernels' own block
/// programs, run thread by thread; workspace is host memory.
void run_host(const problem&, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* running_mean, float* running_var, int64_t* num_batches_tracked, float* out,
              void* workspace);

}  // namespace fb::fused::convt3d_bn_sub
