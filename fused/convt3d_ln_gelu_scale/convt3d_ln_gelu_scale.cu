// CUDA path of convt3d_ln_gelu_scale (KernelBench #34): ConvTranspose3d -> LayerNorm over the last
// dim W' (== C_out) -> exact erf GELU -> * scaling_factor (SPEC 1.2).
//
// Launches (fused/convt3d_ln_gelu_scale/plan.h has the block programs, run identically by the
// host executor): arrange (the weights in the fp64 MMA's fragment order, the A operands' koff
// tables, the tile counter zeroed) -> pass (the convolution on the fp64 tensor cores,
// fused/conv3d/mma_fp64_tile.cuh, with the LayerNorm/GELU/scale epilogue on chip): where the
// plan allows (plan::persistent: the default does), persistent_kernel, resident blocks that run
// tile after tile with the next tile's x box fetched by a TMA tensor copy during this tile's
// epilogue (conv_persistent); else pass_kernel, a block per tile (conv_block). Both compute every
// tile alike, bit for bit.
//
// The convolution: phase (sub-pixel) decomposition, one implicit GEMM per phase on
// mma.sync m16n8k16 f64 (fused/arch/mma_f64.cuh). fp32 inputs, fp64 products (exact) and fp64
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
// cancels in exact arithmetic but is added (fp64) before y's rounding to fp32, so that y is the
// correctly rounded value of what PyTorch's fp32 convolution rounds (plan.h args::bias).
//
// Determinism: every output has one owner and every sum a fixed order (the MMA's internal order is
// fixed by the hardware); the persistent kernel's one atomic (the tile counter) decides only which
// block computes a tile, not how. 64-bit indices for x, out and the workspace; 32-bit
// only inside a block's shared memory.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale.h"
#include "fused/convt3d_ln_gelu_scale/epilogue.cuh"
#include "fused/exec/device_exec.cuh"
#include "fused/runtime/cuda_check.h"
#include "fused/runtime/device_info.h"
#include "fused/runtime/plan_util.h"

namespace fb::fused::convt3d_ln_gelu_scale {
namespace {

using detail::args;
using detail::plan;

constexpr int k_arrange_threads = 256;

__global__ void __launch_bounds__(k_arrange_threads) arrange_kernel(const __grid_constant__ plan pl,
                                                                    const __grid_constant__ args a) {
  const int64_t item = static_cast<int64_t>(blockIdx.x) * k_arrange_threads + threadIdx.x;
  if (item < detail::arrange_items(pl)) detail::arrange_item(pl, a, item);
}

__global__ void __launch_bounds__(conv3d::mma_fp64::k_threads, conv3d::mma_fp64::k_blocks_per_sm)
    pass_kernel(const __grid_constant__ plan pl, const __grid_constant__ args a) {
  extern __shared__ float4 smem4[];
  conv3d::mma_fp64::mma_device_exec ex;
  detail::pass_block(ex, pl, a, blockIdx.x, reinterpret_cast<unsigned char*>(smem4));
}

/// The persistent program (plan::persistent): `box_map` is x as a 5-D tensor for the tiles' boxes.
__global__ void __launch_bounds__(conv3d::mma_fp64::k_threads, conv3d::mma_fp64::k_blocks_per_sm)
    persistent_kernel(const __grid_constant__ plan pl, const __grid_constant__ args a,
                      const __grid_constant__ CUtensorMap box_map) {
  extern __shared__ __align__(128) unsigned char persistent_smem[];
  __shared__ std::uint64_t box_barrier;
  __shared__ unsigned claimed;
  conv3d::mma_fp64::mma_persistent_exec ex;
  ex.box_map = &box_map;
  ex.tile_counter = detail::tile_counter(pl, a);
  ex.claimed = &claimed;
  ex.box = reinterpret_cast<float*>(persistent_smem + conv3d::mma_fp64::box_offset(pl.g));
  ex.stager.barrier = &box_barrier;
  if (threadIdx.x == 0) ex.stager.init();
  __syncthreads();
  detail::persistent_program(ex, pl, a, persistent_smem);
}

/// cuTensorMapEncodeTiled from the driver, found once through the runtime (no link to libcuda).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    FB_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw std::runtime_error("convt3d_ln_gelu_scale: the driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

/// x (batch, C_in, D, H, W) as a 5-D fp32 tensor, innermost W, with the tiles' box (conv3d::mma_fp64::box_width
/// x xh x xd x C_in x 1) and zeros outside the tensor.
CUtensorMap x_box_map(const problem& prob, const plan& pl, const float* x) {
  const cuuint64_t dims[5] = {static_cast<cuuint64_t>(prob.width), static_cast<cuuint64_t>(prob.height),
                              static_cast<cuuint64_t>(prob.depth), static_cast<cuuint64_t>(prob.in_channels),
                              static_cast<cuuint64_t>(prob.batch)};
  const cuuint64_t strides[4] = {dims[0] * sizeof(float), dims[0] * dims[1] * sizeof(float),
                                 dims[0] * dims[1] * dims[2] * sizeof(float),
                                 dims[0] * dims[1] * dims[2] * dims[3] * sizeof(float)};
  const cuuint32_t box[5] = {static_cast<cuuint32_t>(conv3d::mma_fp64::box_width(pl.g)),
                             static_cast<cuuint32_t>(pl.g.xh),
                             static_cast<cuuint32_t>(pl.g.xd), static_cast<cuuint32_t>(prob.in_channels), 1u};
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  CUtensorMap map{};
  const CUresult r = tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 5, const_cast<float*>(x), dims,
                                          strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                          CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("convt3d_ln_gelu_scale: cuTensorMapEncodeTiled failed with CUresult " +
                             std::to_string(static_cast<int>(r)));
  return map;
}

}  // namespace

void run_cuda(const problem& prob, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* out, void* workspace, stream_t stream) {
  const plan pl = detail::make_plan(prob);
  const args a = detail::bind(x, weight, conv_bias, gamma, beta, out, workspace);
  const auto s = static_cast<cudaStream_t>(stream);
  arrange_kernel<<<static_cast<unsigned>((detail::arrange_items(pl) + k_arrange_threads - 1) / k_arrange_threads),
                   k_arrange_threads, 0, s>>>(pl, a);
  FB_CUDA_CHECK(cudaGetLastError());
  // The tensor copy reads x from a 16-byte aligned address (the plans' arrays are; a caller's view
  // at an odd offset runs the block kernel, which computes the same tiles in the same order).
  if (pl.persistent && reinterpret_cast<std::uintptr_t>(x) % 16 == 0) {
    const auto* kernel = reinterpret_cast<const void*>(persistent_kernel);
    // The opt-in covers dynamic memory only; the kernel's static variables count against the same limit.
    fb::fused::device::allow_large_smem(kernel,
                                        conv3d::mma_fp64::k_smem_max_bytes - conv3d::mma_fp64::k_persistent_static_bytes);
    const long long resident = fb::fused::resident_blocks(kernel, conv3d::mma_fp64::k_threads, pl.smem_bytes);
    const auto grid = static_cast<unsigned>(resident < pl.g.n_blocks ? resident : pl.g.n_blocks);
    persistent_kernel<<<grid, conv3d::mma_fp64::k_threads, pl.smem_bytes, s>>>(pl, a, x_box_map(prob, pl, x));
  } else {
    fb::fused::device::allow_large_smem(reinterpret_cast<const void*>(pass_kernel), conv3d::mma_fp64::k_smem_max_bytes);
    pass_kernel<<<static_cast<unsigned>(pl.g.n_blocks), conv3d::mma_fp64::k_threads, pl.smem_bytes, s>>>(pl, a);
  }
  FB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace fb::fused::convt3d_ln_gelu_scale
