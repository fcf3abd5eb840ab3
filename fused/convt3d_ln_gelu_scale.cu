// CUDA path of convt3d_ln_gelu_scale (KernelBench #34): ConvTranspose3d -> LayerNorm over the last
// dim W' (== C_out) -> exact erf GELU -> * scaling_factor (SPEC 1.2).
//
// Launches (fused/common/convt3d_ln_gelu_scale_plan.h has the block programs, run identically by the
// host executor): arrange (the weights in the fp64 MMA's fragment order, and the A operands' koff
// tables) -> pass (the convolution
// on the fp64 tensor cores, fused/common/convt3d_mma_tile.cuh, with the LayerNorm/GELU/scale
// epilogue on chip).
//
// The convolution: phase (sub-pixel) decomposition, one implicit GEMM per phase on
// mma.sync m16n8k16 f64 (fused/common/mma_f64.cuh). fp32 inputs, fp64 products (exact) and fp64
// sums, one rounding to fp32: no TF32, no split-precision terms, no compensation. A block of 4
// warps holds one sample, <= 64 output channels, one d base and tile_h h bases of one (d, h)
// phase pair, and every w phase: whole W' rows. Three blocks per SM (168 registers) where the tile
// fits in 75 KB (the default: x box of 32 channels in fp64 54 KB, phase 0's rows 17 KB: 73.5 KB),
// else two or one.
//
// The epilogue: each w phase's accumulators go to a row buffer in shared memory (each row its w
// phases one after the other); the last w phase's go into the staged x's memory once every warp's
// k16 loop is done with it (a split row buffer, where it fits); after the last w phase a thread
// per row takes its fp64 mean and biased variance in one pass (sums of the values less the row's
// first value and of their squares, 4 interleaved partial sums each: row_moments), normalises its
// row in fp64, rounds once to fp32, applies exact (erf) GELU in fp32 (u Phi(u), Phi's small side
// by one exp2 and a polynomial: gelu_erf) and the scale, and stores the row in w' order, 16 bytes
// at a time (a row's values are independent chains: their latencies overlap). The conv bias
// cancels.
//
// Determinism: no atomics; every output has one owner and every sum a fixed order (the MMA's
// internal order is fixed by the hardware). 64-bit indices for x, out and the workspace; 32-bit
// only inside a block's shared memory.
#include <cuda_runtime.h>

#include <cstdint>

#include "fused/common/convt3d_ln_gelu_scale_plan.h"
#include "fused/common/cuda_check.h"
#include "fused/common/device_exec.cuh"
#include "fused/common/plan_util.h"
#include "fused/convt3d_ln_gelu_scale.h"

namespace fb::fused::convt3d_ln_gelu_scale {
namespace {

namespace conv = fb::fused::convt3d_mma;
using detail::args;
using detail::plan;

constexpr int k_arrange_threads = 256;

__global__ void __launch_bounds__(k_arrange_threads) arrange_kernel(const __grid_constant__ plan pl,
                                                                    const __grid_constant__ args a) {
  const int64_t item = static_cast<int64_t>(blockIdx.x) * k_arrange_threads + threadIdx.x;
  if (item < detail::arrange_items(pl)) detail::arrange_item(pl, a, item);
}

__global__ void __launch_bounds__(conv::k_threads, conv::k_blocks_per_sm)
    pass_kernel(const __grid_constant__ plan pl, const __grid_constant__ args a) {
  extern __shared__ float4 smem4[];
  conv::mma_device_exec ex;
  detail::pass_block(ex, pl, a, blockIdx.x, reinterpret_cast<unsigned char*>(smem4));
}

}  // namespace

void run_cuda(const problem& prob, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* out, void* workspace, stream_t stream) {
  (void)conv_bias;  // cancels in the LayerNorm
  const plan pl = detail::make_plan(prob);
  const args a = detail::bind(x, weight, gamma, beta, out, workspace);
  const auto s = static_cast<cudaStream_t>(stream);
  arrange_kernel<<<static_cast<unsigned>((detail::arrange_items(pl) + k_arrange_threads - 1) / k_arrange_threads),
                   k_arrange_threads, 0, s>>>(pl, a);
  FB_CUDA_CHECK(cudaGetLastError());
  fb::fused::device::allow_large_smem(reinterpret_cast<const void*>(pass_kernel), conv::k_smem_max_bytes);
  pass_kernel<<<static_cast<unsigned>(pl.g.n_blocks), conv::k_threads, pl.smem_bytes, s>>>(pl, a);
  FB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace fb::fused::convt3d_ln_gelu_scale
