// CUDA path of convt3d_bn_sub (KernelBench #15): ConvTranspose3d -> BatchNorm3d -> subtract the
// per-(b, c) spatial mean. Out = gamma_c * (y - ybar_bc) / sqrt(var_c + eps) (SPEC 1.1), where the
// batch variance var_c needs the whole batch before any output can be written.
//
// Launches (fused/convt3d_bn_sub/plan.h has the block programs, run identically by the host
// executor): prep (tap-box sums of x; weights arranged per phase) -> centring (the means, and the
// centres' class tables when J0 <= 2) -> then
//   training: pass 1 (the convolution: centred statistics, and y - ybar stored in the workspace)
//             -> finalize -> rows (out = scale_c * (y - ybar), read back in the output's order:
//             bands of rows staged in shared memory by bulk copies, rows_staged_kernel; rows too wide
//             for a band read straight from the buffer, rows_kernel);
//   eval:     finalize -> pass 2 (the convolution, out = scale_c * (y - ybar) from the accumulators).
//
// Two passes, which? Training MATERIALISES y - ybar (the output's size, fp32, in the workspace)
// rather than convolving twice: a second convolution's stores (a warp's lanes write every s-th
// float of a row, one phase at a time) reach DRAM as read-modify-writes of partial sectors, where
// pass 1 stores a phase's outputs as consecutive floats (phase-major: whole sectors) and the rows
// launch reads them back and writes the output in its own order. Cost: 252 MB + 16 MB more
// workspace at the default (convt3d_bn_sub.h). The measurements behind this and every later step:
// reports/nvidia-h100-80gb-hbm3/NOTES.md (2026-11-25 sessions; 2026-11-28 holds what this comment
// used to say).
//
// Statistics scheme: EXACT MEANS FIRST, then centred sums. Why this and not per-tile (count, mean,
// M2) merged with Chan's formula: the mean of every (b, c) follows exactly and cheaply from the
// input (the 3-D form of #44's border identity: sum_o y = sum_ci sum_tap W * R, R = the sum of x
// over the tap's box, fp64; one read of x, 17 MB at the default), and pass 2 needs ybar_bc anyway. With ybar known
// before pass 1, the pass-1 epilogue per output is two subtractions and one FMA into a per-thread
// fp32 partial of k_rows = 4 terms, added to an fp64 slot: no cancellation (a sum of squares of
// centred values), no per-tile mean (which would need two block-wide reductions per phase tile) and
// no fp64 divisions. The mean is subtracted as an fp32 pair hi + lo, so it costs nothing to
// rounding even for offset inputs. var_c = (sum_b M2_bc + S * sum_b (ybar_bc - mean_c)^2)/(B*S)
// (math::batch_norm::combine_sample_moments, fp64).
//
// The convolution (fused/conv3d/simt_fp32_tile.cuh): phase (sub-pixel) decomposition; a block tile is
// 2 x 8 x 32 bases (d, h, w) x 16 output channels over all s^3 phases; every warp works on one
// phase at a time, its lanes on 32 consecutive w bases (uniform tap loop, broadcast weights,
// conflict-free x reads), a thread on 4 h bases x 8 channels: 32 fp32 accumulators and 32 for the
// partial sum of the current channel group (two-level accumulation: each output's products are
// summed in groups of at most group_products, then the groups added; its rounding is never above
// that of libtorch's GEMM-then-taps order, where one accumulator for all C_in x taps products was
// up to 5x worse). The x tile (with halo, zero-filled outside the input) is staged once per block
// when all input channels fit (at the default 16 channels: 57 KB), a phase's weights per phase
// (pre-arranged per phase in the workspace: one float4 copy). For J0 = ceil(k/s) <= 2 (the
// default) the layout is compile-time and each phase's taps are unrolled (8 variants): per tap,
// 4 x loads and 2 float4 weight loads for 32 FMAs, every offset an immediate; a group's first
// products start from 0 (no zeroing) and its end costs 32 FADDs. fp32 FMAs, no TF32, no tensor
// cores.
//
// Threads whose phase has no output (tile edges, padded channels) skip the tap loop.
// Resources: two blocks per SM (the register limit of __launch_bounds__(256, 2)); dynamic shared
// memory per the plan (smem_stats_bytes, smem_write_bytes). Registers and spills of each
// instantiation (ptxas -v) and the timings of earlier versions: NOTES.md, as above.
//
// Determinism: no atomics at all. Every partial has one owner (thread slot, block slice, tile,
// channel) and every reduction a fixed order that does not depend on the grid or the SM count;
// running buffers and num_batches_tracked are written by one thread each. 64-bit indices wherever
// sizes multiply (x, out, workspace); 32-bit only inside a block's shared memory.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "fused/arch/bulk_copy.cuh"
#include "fused/convt3d_bn_sub/centring.cuh"
#include "fused/convt3d_bn_sub/convt3d_bn_sub.h"
#include "fused/convt3d_bn_sub/finalize.cuh"
#include "fused/convt3d_bn_sub/passes.cuh"
#include "fused/convt3d_bn_sub/prep.cuh"
#include "fused/convt3d_bn_sub/rows.cuh"
#include "fused/exec/device_exec.cuh"
#include "fused/runtime/cuda_check.h"
#include "fused/runtime/plan_util.h"

namespace fb::fused::convt3d_bn_sub {
namespace {

using conv3d::simt_fp32::device_exec;
using detail::args;
using detail::plan;

__global__ void __launch_bounds__(detail::k_prep_threads, 2) prep_kernel(const __grid_constant__ plan pl,
                                                               const __grid_constant__ args a) {
  device_exec ex;
  detail::prep_block(ex, pl, a, blockIdx.x);
}

// The centring launch (a block per (b, channel slot): ybar, the prefix tables, the class tables).
__global__ void __launch_bounds__(conv3d::simt_fp32::k_threads)
    centring_kernel(const __grid_constant__ plan pl, const __grid_constant__ args a) {
  __shared__ double smem[detail::k_centring_smem_doubles];
  // A dependent launch of prep (the box sums and centres come from it; prep allows it only as its
  // blocks exit). Pass 1, a dependent launch of this one, stages prep's x - c before it waits: so
  // this launch allows it only after its own wait, when prep is complete (pdl.cuh).
  arch::wait_for_preceding_launch();
  arch::allow_dependent_launch();
  device_exec ex;
  detail::centring_block(ex, pl, a, blockIdx.x, smem);
}

__global__ void __launch_bounds__(conv3d::simt_fp32::k_threads)
    finalize_kernel(const __grid_constant__ plan pl, const __grid_constant__ args a) {
  __shared__ double smem[detail::k_finalize_smem_doubles];
  arch::allow_dependent_launch();  // the rows launch or pass 2 (dependent launches) may start while this runs
  // A dependent launch of pass 1 (training) or centring (eval). Pass 1 does not allow it early (its
  // waiting blocks would hold SMs that pass 1 needs, NOTES 2026-11-25): it is scheduled as pass 1's
  // blocks exit.
  arch::wait_for_preceding_launch();
  device_exec ex;
  detail::finalize_block(ex, pl, a, blockIdx.x, smem);
}

/// The unstaged rows launch (training, rows too wide for a band: pl.band_rows == 0): a block per
/// (b, co, od) slice, in grid-stride order (the grid is capped: output_slices can pass 2^31).
constexpr int64_t k_rows_max_blocks = int64_t{1} << 20;

// Three blocks per SM: 80 registers hold 8 rows' loads in flight per thread (k_rows_in_flight).
// Measured on the H100 (default config, whole pipeline): 8 rows x 3 blocks 647 us, 4 rows x 4
// blocks 660, 8 rows squeezed into 64 registers (spills) 707, 16 rows x 2 blocks 673.
template <class Index>
__global__ void __launch_bounds__(conv3d::simt_fp32::k_threads, 3)
    rows_kernel(const __grid_constant__ plan pl, const __grid_constant__ args a) {
  device_exec ex;
  arch::wait_for_preceding_launch();  // a dependent launch of finalize: the scale comes from it
  // Last slice first: pass 1 wrote the last samples' planes last, and the tail of what it wrote is
  // still in L2.
  const int64_t n = detail::output_slices(pl);
  for (int64_t slice = blockIdx.x; slice < n; slice += gridDim.x) detail::rows_block<Index>(ex, pl, a, n - 1 - slice);
}

/// The staged rows launch (training, pl.band_rows > 0): a block per (slice, band) item, in
/// grid-stride order, last item first (as rows_kernel). Shared memory: the band's stage and the
/// pieces' table (dynamic), the bulk copies' barrier. 16.3 KB and 48 registers at the default: 10
/// blocks per SM. Measured on the H100 (default config, 2026-11-25; ncu, kernel alone): 178.7 us
/// against rows_kernel's 189.7 (the floor, 504 MB at ~2.98 TB/s: ~169 us), DRAM 81% busy; the
/// training pipeline 544.1 -> 533.4 us (3 alternations, beside cd13c7b's binary).
__global__ void __launch_bounds__(detail::k_band_threads) rows_staged_kernel(const __grid_constant__ plan pl,
                                                                          const __grid_constant__ args a) {
  extern __shared__ float4 band_smem[];
  __shared__ std::uint64_t barrier;
  float* stage = reinterpret_cast<float*>(band_smem);
  int* table = reinterpret_cast<int*>(stage + pl.band_stage_floats);
  fb::fused::device::bulk_stager stager{&barrier};
  if (threadIdx.x == 0) stager.init();
  __syncthreads();
  arch::wait_for_preceding_launch();  // a dependent launch of finalize: the scale comes from it
  device_exec ex;
  const int64_t n = detail::band_items(pl);
  for (int64_t item = blockIdx.x; item < n; item += gridDim.x)
    detail::rows_band_block(ex, stager, pl, a, n - 1 - item, stage, table);
}

/// Pass kStats of the plan's variant (the kernels live in fused/convt3d_bn_sub_pass_j*_*.cu).
template <bool kStats>
void launch_pass(const plan& pl, const args& a, cudaStream_t stream) {
  switch (pl.g.variant) {
    case 1: detail::launch_pass_variant<1, kStats>(pl, a, stream); break;
    case 2: detail::launch_pass_variant<2, kStats>(pl, a, stream); break;
    default: detail::launch_pass_variant<0, kStats>(pl, a, stream); break;
  }
}

}  // namespace

void run_cuda(const problem& prob, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* running_mean, float* running_var, int64_t* num_batches_tracked, float* out,
              void* workspace, stream_t stream) {
  const plan pl = detail::make_plan(prob);
  const args a = detail::bind(x, weight, conv_bias, gamma, beta, running_mean, running_var, num_batches_tracked, out,
                              workspace);
  fb::fused::detail::require(detail::prep_blocks(pl) < (int64_t{1} << 31), "convt3d_bn_sub::run_cuda",
                             "batch*in_channels", "too large (prep blocks must be < 2^31)", detail::prep_blocks(pl));
  const auto s = static_cast<cudaStream_t>(stream);
  prep_kernel<<<static_cast<unsigned>(detail::prep_blocks(pl)), detail::k_prep_threads, 0, s>>>(pl, a);
  FB_CUDA_CHECK(cudaGetLastError());
  // Every launch after prep is a programmatic dependent of the one before it (fused/arch/pdl.cuh):
  // it waits before it reads what that one wrote; its launch overlaps that one's last blocks.
  fb::fused::device::launch_dependent(centring_kernel, static_cast<unsigned>(detail::centring_blocks(pl)),
                                      conv3d::simt_fp32::k_threads, 0, s, pl, a);
  if (pl.training) launch_pass<true>(pl, a, s);
  fb::fused::device::launch_dependent(finalize_kernel, static_cast<unsigned>(pl.g.c_out), conv3d::simt_fp32::k_threads,
                                      0, s, pl, a);
  if (pl.training && pl.band_rows > 0) {
    const int64_t blocks = std::min(k_rows_max_blocks, detail::band_items(pl));
    const std::size_t smem = sizeof(float) * static_cast<std::size_t>(pl.band_stage_floats) +
                             sizeof(int) * static_cast<std::size_t>(pl.g.dim[1].s * pl.g.dim[2].s);
    fb::fused::device::launch_dependent(rows_staged_kernel, static_cast<unsigned>(blocks), detail::k_band_threads,
                                        smem, s, pl, a);
  } else if (pl.training) {
    const int64_t blocks = std::min(k_rows_max_blocks, detail::output_slices(pl));
    if (pl.spatial < (int64_t{1} << 31))
      fb::fused::device::launch_dependent(rows_kernel<int>, static_cast<unsigned>(blocks), conv3d::simt_fp32::k_threads,
                                          0, s, pl, a);
    else
      fb::fused::device::launch_dependent(rows_kernel<int64_t>, static_cast<unsigned>(blocks),
                                          conv3d::simt_fp32::k_threads, 0, s, pl, a);
  } else {
    launch_pass<false>(pl, a, s);
  }
}

}  // namespace fb::fused::convt3d_bn_sub
