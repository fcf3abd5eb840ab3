// CUDA path of convt2d_gap_bias_lse (KernelBench #42). Two launches, deterministic:
//   1. sums_kernel (persistent grid, one warp per work item): reads x once with 16-byte loads.
//      Items 0..n_wsum_items-1: Wsum[ci, co] = sum of the k*k weight taps for 32 (ci, co) pairs
//      (recomputed every call). Remaining items: one 4096-element chunk of one (b, ci) plane -> its
//      fp64 sum (8 float4 loads per lane in flight, 4 KB per warp).
//   2. lse_kernel (one 256-thread block per sample b): S[b, ci] from the chunk sums in fixed order,
//      z[b, co] = conv_bias + (1/H'W') sum_ci S Wsum + bias in fp64, then the max-subtracted
//      logsumexp with cub::BlockReduce (max, then sum of exp(z - max)); out[b] = 10 * lse.
// Precision: per float4 the 4 values are paired in fp32 (<= 2 roundings), everything after is fp64
// (lane partials, warp tree, chunk sums, dot, lse). The plane sums are never cancelled against each
// other, so this is ~1e-7 of the float4 magnitudes at worst, random across float4s; far under 1e-5.
// Determinism: no atomics, fixed owners and fixed-shape reductions independent of the grid size.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cuda/functional>

#include "fused/arch/warp_sums.cuh"
#include "fused/convt2d_gap_bias_lse/convt2d_gap_bias_lse.h"
#include "fused/convt2d_gap_bias_lse/plan.h"
#include "fused/math/convt_index.cuh"
#include "fused/math/logsumexp.cuh"
#include "fused/runtime/cuda_check.h"
#include "fused/runtime/device_info.h"
#include "fused/runtime/plan_util.h"

namespace fb::fused::convt2d_gap_bias_lse {
namespace {

constexpr int k_block = 256;
constexpr int k_warps = k_block / 32;
constexpr int k_unroll = 8;

using warp_reduce = cub::WarpReduce<double>;
using block_reduce = cub::BlockReduce<double, k_block>;

struct sums_params {
  const float* x;
  const float* weight;
  double* part;
  double* wsum;
  int64_t plane_size, chunks_per_plane, n_wsum_items, n_items, n_pairs, n_taps;
};

__global__ void __launch_bounds__(k_block) sums_kernel(const sums_params prm) {
  __shared__ typename warp_reduce::TempStorage temp[k_warps];
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const int64_t warps_total = static_cast<int64_t>(gridDim.x) * k_warps;
  for (int64_t item = static_cast<int64_t>(blockIdx.x) * k_warps + warp; item < prm.n_items; item += warps_total) {
    if (item < prm.n_wsum_items) {
      const int64_t pair = item * detail::k_wsum_pairs_per_item + lane;
      if (pair < prm.n_pairs) prm.wsum[pair] = detail::weight_tap_sum(prm.weight + pair * prm.n_taps, prm.n_taps);
    } else {
      const int64_t c = item - prm.n_wsum_items;  // chunk index: plane * chunks_per_plane + q
      const int64_t plane = c / prm.chunks_per_plane;
      const detail::chunk_range r = detail::chunk_of(c - plane * prm.chunks_per_plane, prm.plane_size);
      double s =
          arch::warp_lane_range_sum<k_unroll, false>(prm.x + plane * prm.plane_size + r.begin, r.end - r.begin, lane);
      s = warp_reduce(temp[warp]).Sum(s);
      if (lane == 0) prm.part[c] = s;
      __syncwarp();
    }
  }
}

struct lse_params {
  const double* part;
  const double* wsum;
  const float* conv_bias;
  const float* bias;
  double* s;
  double* z;
  float* out;
  int64_t batch, c_in, c_out, chunks_per_plane;
  double inv_area;
};

__global__ void __launch_bounds__(k_block) lse_kernel(const lse_params prm) {
  __shared__ typename warp_reduce::TempStorage wtemp[k_warps];
  __shared__ typename block_reduce::TempStorage btemp;
  __shared__ double z_max_shared;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const int64_t cpp = prm.chunks_per_plane;
  for (int64_t b = blockIdx.x; b < prm.batch; b += gridDim.x) {
    double* sb = prm.s + b * prm.c_in;  // written and read back in this kernel: no __restrict__
    double* zb = prm.z + b * prm.c_out;
    // S[b, ci]: one warp per channel, chunks strided over lanes, fixed warp tree.
    for (int64_t ci = warp; ci < prm.c_in; ci += k_warps) {
      const double* __restrict__ pp = prm.part + (b * prm.c_in + ci) * cpp;
      double acc = 0.0;
      for (int64_t q = lane; q < cpp; q += 32) acc += pp[q];
      acc = warp_reduce(wtemp[warp]).Sum(acc);
      if (lane == 0) sb[ci] = acc;
      __syncwarp();
    }
    __syncthreads();  // S (global scratch) written by all warps is visible to the whole block
    double local_max = -INFINITY;
    for (int64_t co = threadIdx.x; co < prm.c_out; co += k_block) {
      const double zv = detail::channel_logit(sb, prm.wsum, prm.c_in, prm.c_out, co, prm.inv_area,
                                              __ldg(prm.conv_bias + co), __ldg(prm.bias + co));
      zb[co] = zv;
      local_max = fmax(local_max, zv);
    }
    const double block_max = block_reduce(btemp).Reduce(local_max, cuda::maximum<double>{});
    if (threadIdx.x == 0) z_max_shared = block_max;
    __syncthreads();
    const double z_max = z_max_shared;
    double local_sum = 0.0;
    for (int64_t co = threadIdx.x; co < prm.c_out; co += k_block) local_sum += math::lse_term(zb[co], z_max);
    const double sum = block_reduce(btemp).Sum(local_sum);
    if (threadIdx.x == 0) prm.out[b] = static_cast<float>(detail::k_output_scale * math::lse_finish(z_max, sum));
    __syncthreads();  // btemp, z_max_shared and S are reused for the next sample
  }
}

}  // namespace

void run_cuda(const problem& prob, const float* x, const float* weight, const float* conv_bias, const float* bias,
              float* out, void* workspace, stream_t stream) {
  using fb::fused::detail::require_ptr;
  const detail::plan pl = detail::make_plan(prob);
  constexpr const char* m = "convt2d_gap_bias_lse::run_cuda";
  require_ptr(x, m, "x");
  require_ptr(weight, m, "weight");
  require_ptr(conv_bias, m, "conv_bias");
  require_ptr(bias, m, "bias");
  require_ptr(out, m, "out");
  require_ptr(workspace, m, "workspace");
  double* ws = fb::fused::detail::aligned_workspace(workspace);

  sums_params sp{};
  sp.x = x;
  sp.weight = weight;
  sp.part = ws + pl.off_part;
  sp.wsum = ws + pl.off_wsum;
  sp.plane_size = pl.plane_size;
  sp.chunks_per_plane = pl.chunks_per_plane;
  sp.n_wsum_items = pl.n_wsum_items;
  sp.n_items = pl.n_wsum_items + pl.n_chunk_items;
  sp.n_pairs = pl.c_in * pl.c_out;
  sp.n_taps = pl.n_taps;
  // Persistent grid: as many blocks as stay resident (a chip property, remembered per device:
  // fused/runtime/device_info.h).
  const int64_t resident = fb::fused::resident_blocks(reinterpret_cast<const void*>(sums_kernel), k_block);
  const int64_t needed = std::max<int64_t>(1, (sp.n_items + k_warps - 1) / k_warps);
  sums_kernel<<<static_cast<unsigned>(std::min(needed, resident)), k_block, 0, stream>>>(sp);
  FB_CUDA_CHECK(cudaGetLastError());

  lse_params lp{};
  lp.part = sp.part;
  lp.wsum = sp.wsum;
  lp.conv_bias = conv_bias;
  lp.bias = bias;
  lp.s = ws + pl.off_s;
  lp.z = ws + pl.off_z;
  lp.out = out;
  lp.batch = pl.batch;
  lp.c_in = pl.c_in;
  lp.c_out = pl.c_out;
  lp.chunks_per_plane = pl.chunks_per_plane;
  lp.inv_area = pl.inv_area;
  // One block per sample (capped; the kernel strides over samples beyond the grid).
  const int64_t lse_blocks = std::min<int64_t>(pl.batch, resident);
  lse_kernel<<<static_cast<unsigned>(lse_blocks), k_block, 0, stream>>>(lp);
  FB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace fb::fused::convt2d_gap_bias_lse
