#pragma once
/// Fused ConvTranspose3d (stride 1, no padding, bias) -> * scale_factor -> BatchNorm3d ->
/// AdaptiveAvgPool3d(1) (KernelBench #77, SPEC 1.5). Torch-free and CUDA-header-free: host-only code
/// may include it.
///
/// Algebra (exact; n' = n + k - 1 per dimension, N' = D'H'W', z = conv(x) without bias):
///   ybar[b, c] = scale * (bias[c] + (1/N') sum_ci S[b, ci] Wsum[ci, c])       (fp64 sums of x, w)
///   m2[b, c]   = sum_o (y - ybar)^2 = scale^2 (1/N') sum_{f != 0} |Z[b, c](f)|^2    (Parseval)
///   Z[b, c](f) = sum_ci X[b, ci](f) W[ci, c](f) on the n'-point DFT grid (circular = linear there)
///   training: mean/var_c from (ybar, m2) (fused/math/batch_norm.cuh), out = A_c (ybar - mean_c) +
///             beta_c, running buffers updated, num_batches_tracked += 1;
///   eval:     out = gamma_c (ybar - running_mean_c) / sqrt(running_var_c + eps) + beta_c, nothing
///             updated (only sums of x and w are needed).
///
/// Workspace (workspace_bytes): fp64 S (B*C_in), Wsum (C_in*C_out), ybar and m2 (B*C_out each); in
/// training also the input spectrum X (half spectrum along w: D'*H'*(W'/2+1)*C_in*B complex fp32),
/// the weights' depth transform H1 ((D'/2+1)*k*k*C_in*C_out complex fp32), their height transform
/// G for every row pair (pairs*k*C_in*C_out complex fp32, pairs ~ D'*H'/2), the per-group |Z|^2
/// partials (ceil(units/8)*B*C_out fp64, units ~ D'*H'*(W'/2+1)/2) and x's tables, one image per fw
/// chunk (~9 KB each at the default). At the default config
/// (B 16, C 64 -> 128, 16x32x32, k 5): X 112 MB + H1 18 MB + G 119 MB + partials 14 MB ~ 263 MB; it
/// grows linearly with B*C_in*D'H'W' (X), C_in*C_out*D'*k^2 (H1), C_in*C_out*D'H'*k (G) and
/// B*C_out*D'H'W' (partials). Eval needs only the few KB of fp64 sums.
#include <cstddef>
#include <cstdint>

#include "fused/runtime/stream.h"

namespace fb::fused::convt3d_scale_bn_gap {

/// Sizes, scalars and mode of one call (SPEC 1.5 constructor arguments, input sizes, BN mode).
struct problem {
  int64_t batch, in_channels, out_channels, depth, height, width, kernel_size;
  double scale_factor;  ///< multiplies the conv output, bias included
  double eps;           ///< BatchNorm eps (> 0), added once inside the root
  double momentum;      ///< BatchNorm momentum in (0, 1]
  bool training;        ///< batch statistics + buffer update, or running statistics
};

/// Scratch bytes the caller must provide to run_cuda (device memory) and run_host (host memory).
/// Throws std::invalid_argument, naming the field and rule, for an invalid problem.
[[nodiscard]] std::size_t workspace_bytes(const problem&);

/// x (B,C_in,D,H,W), weight (C_in,C_out,k,k,k), conv_bias, gamma, beta (C_out), out (B,C_out):
/// contiguous fp32 device pointers. running_mean, running_var (C_out fp32) and num_batches_tracked
/// (one int64) are updated in place in training mode and only read (the first two) in eval mode.
/// workspace: workspace_bytes() of device memory. Asynchronous on `stream`, no allocation, no host
/// sync, graph-capturable; writes every element of out. Deterministic (bitwise).
void run_cuda(const problem&, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* running_mean, float* running_var, int64_t* num_batches_tracked, float* out,
              void* workspace, stream_t stream);

/// The same kernels' block programs run on the CPU with host pointers (the host executor); workspace
/// is host memory.
void run_host(const problem&, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* running_mean, float* running_var, int64_t* num_batches_tracked, float* out,
              void* workspace);

}  // namespace fb::fused::convt3d_scale_bn_gap
