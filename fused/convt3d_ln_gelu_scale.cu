// CUDA path of convt3d_ln_gelu_scale (KernelBench #34): ConvTranspose3d -> LayerNorm over the last
// dim W' (== C_out) -> exact erf GELU -> * scaling_factor (SPEC 1.2).
//
// Launches (fused/common/convt3d_ln_gelu_scale_plan.h has the block programs, run identically by the
// host executor): prep (x's centre per (b, ci); weights arranged per channel block and phase) ->
// shares (the centre's share V per (b, co, tap)) -> class shares (K(o) per border class, J0 <= 2)
// -> pass (convolution of x - c with the LayerNorm/GELU/scale epilogue on chip, K(o) added back
// per output).
//
// The convolution is #15's block tile (fused/common/convt3d_tile.cuh): phase (sub-pixel)
// decomposition, a block of 2 x 8 x 32 bases (d, h, w) x 16 output channels over all s^3 phases,
// a thread on 4 h bases x 8 channels, fp32 FMAs with two-level accumulation (partial sums of
// channel groups, then added: never rounding worse than libtorch's GEMM-then-taps order), unrolled
// tap loops for ceil(k/s) <= 2 (the default, k 4 s 2). For #34 the w tiles are ranges of OUTPUTS
// (tile_options::by_outputs): 32 s w_sub of them, so that one tile holds whole W' rows (at the
// default 33 bases cover the 64 outputs of a row, which ranges of 32 bases would split). Along d
// and h the tiles stay boxes of 2 x 8 bases: at the default 17 x 33 bases in 9 x 5 tiles, 78% of
// the slots used (cutting d and h by outputs too needs a line more of x each, and then the 32
// input channels no longer fit beside the row buffer). No TF32, no tensor cores: SIMT fp32 (future
// work: split-precision tensor cores, 3xTF32 or FP16x3, and a d/h cut without the ragged edges).
//
// The epilogue: a phase's accumulators go to a row buffer in shared memory (256 rows: 16 channels
// x 2 d x 8 h outputs of one (d, h) phase pair, W' + 1 floats each); after the pair's last w phase
// the rows are complete: a thread per row takes the fp64 mean and the fp64 sum of centred squares
// (biased variance), then a warp per row normalises, applies gamma[w'] and beta[w'], exact GELU
// (fp64 erf) and the scale, and stores the row with coalesced stores. The conv bias cancels.
//
// Determinism: no atomics; every output has one owner and every sum a fixed order. 64-bit indices
// for x, out and the workspace; 32-bit only inside a block's shared memory and tile.
#include <cuda_runtime.h>

#include <cstdint>

#include "fused/common/convt3d_ln_gelu_scale_plan.h"
#include "fused/common/cuda_check.h"
#include "fused/common/device_exec.cuh"
#include "fused/common/plan_util.h"
#include "fused/convt3d_ln_gelu_scale.h"

namespace fb::fused::convt3d_ln_gelu_scale {
namespace {

namespace tile = fb::fused::convt3d_tile;
using detail::args;
using detail::plan;
using fb::fused::device::device_exec;

__global__ void __launch_bounds__(tile::k_threads) prep_kernel(const __grid_constant__ plan pl,
                                                               const __grid_constant__ args a) {
  device_exec ex;
  detail::prep_block(ex, pl, a, blockIdx.x);
}

__global__ void __launch_bounds__(tile::k_threads) shares_kernel(const __grid_constant__ plan pl,
                                                                 const __grid_constant__ args a) {
  const int64_t item = static_cast<int64_t>(blockIdx.x) * tile::k_threads + threadIdx.x;
  if (item < detail::share_items(pl)) detail::share_item(pl, a, item);
}

__global__ void __launch_bounds__(tile::k_threads) class_shares_kernel(const __grid_constant__ plan pl,
                                                                       const __grid_constant__ args a) {
  const int64_t item = static_cast<int64_t>(blockIdx.x) * tile::k_threads + threadIdx.x;
  if (item < pl.ktab_items) detail::class_share_item(pl, a, item);
}

// One block per SM at the default (~200 KB of shared memory: the x tile of all 32 input channels
// and the 256-row buffer), so the register limit is the tap loop's own.
template <int kJ0, bool kChunked>
__global__ void __launch_bounds__(tile::k_threads, 1) pass_kernel(const __grid_constant__ plan pl,
                                                                  const __grid_constant__ args a) {
  extern __shared__ float4 smem4[];
  device_exec ex;
  detail::pass_block<kJ0, kChunked>(ex, pl, a, blockIdx.x, reinterpret_cast<float*>(smem4));
}

void launch_pass(const plan& pl, const args& a, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>(pl.g.n_blocks);
  auto go = [&](auto kernel) {
    fb::fused::device::allow_large_smem(reinterpret_cast<const void*>(kernel), tile::k_smem_max_bytes);
    kernel<<<blocks, tile::k_threads, pl.smem_bytes, stream>>>(pl, a);
    FB_CUDA_CHECK(cudaGetLastError());
  };
  const bool chunked = pl.g.n_ci_chunks > 1;
  switch (pl.g.variant * 2 + (chunked ? 1 : 0)) {
    case 2: go(pass_kernel<1, false>); break;
    case 3: go(pass_kernel<1, true>); break;
    case 4: go(pass_kernel<2, false>); break;
    case 5: go(pass_kernel<2, true>); break;
    case 0: go(pass_kernel<0, false>); break;
    default: go(pass_kernel<0, true>); break;
  }
}

}  // namespace

void run_cuda(const problem& prob, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* out, void* workspace, stream_t stream) {
  (void)conv_bias;  // cancels in the LayerNorm
  const plan pl = detail::make_plan(prob);
  const args a = detail::bind(x, weight, gamma, beta, out, workspace);
  const auto s = static_cast<cudaStream_t>(stream);
  prep_kernel<<<static_cast<unsigned>(detail::prep_blocks(pl)), tile::k_threads, 0, s>>>(pl, a);
  FB_CUDA_CHECK(cudaGetLastError());
  const int64_t items = detail::share_items(pl);
  shares_kernel<<<static_cast<unsigned>((items + tile::k_threads - 1) / tile::k_threads), tile::k_threads, 0, s>>>(pl,
                                                                                                                   a);
  FB_CUDA_CHECK(cudaGetLastError());
  if (pl.ktab_items > 0) {
    class_shares_kernel<<<static_cast<unsigned>((pl.ktab_items + tile::k_threads - 1) / tile::k_threads),
                          tile::k_threads, 0, s>>>(pl, a);
    FB_CUDA_CHECK(cudaGetLastError());
  }
  launch_pass(pl, a, s);
}

}  // namespace fb::fused::convt3d_ln_gelu_scale
