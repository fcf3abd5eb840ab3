// The pass kernels of convt3d_bn_sub (fused/convt3d_bn_sub/convt3d_bn_sub.cu) and their launches. Each (J0, pass)
// pair is instantiated in its own translation unit (fused/convt3d_bn_sub_pass_j<J0>_<pass>.cu) so
// that a many-core build compiles them in parallel: in one file (with the twelve pass kernels) nvcc
// took 270-610 s on this 2-core machine (ninja log), and a fresh GPU-gate build on the 16-core GPU
// host ran out of its 240 s box twice with it among the steps left (2026-11-23). Splitting changes
// no code: the same templates, instantiated elsewhere.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "fused/convt3d_bn_sub/conv_pass.cuh"
#include "fused/exec/device_exec.cuh"
#include "fused/runtime/cuda_check.h"

namespace fb::fused::convt3d_bn_sub::detail {

// Two blocks per SM: 64 accumulators + weights + x window fit the 128 registers this allows, and
// the statistics pass's ~106 KB of shared memory fits twice into the SM's 228 KB.
template <int kJ0, bool kChunked, bool kStats>
__global__ void __launch_bounds__(conv3d::simt_fp32::k_threads, 2)
    pass_kernel(const __grid_constant__ plan pl, const __grid_constant__ args a) {
  extern __shared__ float4 smem4[];
  conv3d::simt_fp32::device_exec ex;
  pass_block<kJ0, kChunked, kStats>(ex, pl, a, blockIdx.x, reinterpret_cast<float*>(smem4));
}

/// Pass kStats (statistics or writing) of the variant with J0 = kJ0 (0: the generic tap loop),
/// with one input-channel chunk or several as the plan says.
template <int kJ0, bool kStats>
void launch_pass_variant(const plan& pl, const args& a, cudaStream_t stream) {
  const std::size_t smem = kStats ? pl.smem_stats_bytes : pl.smem_write_bytes;
  const auto blocks = static_cast<unsigned>(pl.g.n_blocks);
  // A dependent of the launch before it (centring, or finalize in eval mode): the blocks stage x and
  // the first weights while that launch finishes; the policies wait before they read its results
  // (wait_for_preceding_launch).
  auto go = [&](auto kernel) {
    fb::fused::device::allow_large_smem(reinterpret_cast<const void*>(kernel), conv3d::simt_fp32::k_smem_max_bytes);
    fb::fused::device::launch_dependent(kernel, blocks, conv3d::simt_fp32::k_threads, smem, stream, pl, a);
  };
  if (pl.g.n_ci_chunks > 1)
    go(pass_kernel<kJ0, true, kStats>);
  else
    go(pass_kernel<kJ0, false, kStats>);
}

// Instantiated in fused/convt3d_bn_sub_pass_j<J0>_<pass>.cu only.
extern template void launch_pass_variant<0, true>(const plan&, const args&, cudaStream_t);
extern template void launch_pass_variant<0, false>(const plan&, const args&, cudaStream_t);
extern template void launch_pass_variant<1, true>(const plan&, const args&, cudaStream_t);
extern template void launch_pass_variant<1, false>(const plan&, const args&, cudaStream_t);
extern template void launch_pass_variant<2, true>(const plan&, const args&, cudaStream_t);
extern template void launch_pass_variant<2, false>(const plan&, const args&, cudaStream_t);

}  // namespace fb::fused::convt3d_bn_sub::detail
