// Host executor of convt3d_ln_gelu_scale (KernelBench #34): the CUDA path's three launches, each block
// program run on the CPU thread by thread between its barriers (convt3d_tile.cuh host_exec), with the
// same plan, tiles, chunks, staging, unrolled variants, FMA order and row math, so the device agrees
// with it bitwise up to the platforms' fp64 erf (fused/common/convt3d_ln_gelu_scale_plan.h gelu_erf).
//
// Shared memory is filled with NaN before every block: a block that read shared memory it did not
// write itself (which on the GPU would read another block's leftovers) makes the output NaN, and the
// property tests fail. Blocks are independent, so they run on several CPU threads.
#include <cstdint>

#include "fused/common/convt3d_ln_gelu_scale_plan.h"
#include "fused/common/host_parallel.h"
#include "fused/common/plan_util.h"
#include "fused/convt3d_ln_gelu_scale.h"

namespace fb::fused::convt3d_ln_gelu_scale {
namespace detail {
namespace {

template <int kJ0, bool kChunked>
void host_pass(const plan& pl, const args& a) {
  fb::fused::detail::run_blocks_on_host<tile::host_exec>(
      pl.g.n_blocks, pl.smem_bytes,
      [&](tile::host_exec& ex, int64_t block, float* smem) { pass_block<kJ0, kChunked>(ex, pl, a, block, smem); });
}

}  // namespace

void run_host_plan(const plan& pl, const args& a) {
  tile::host_exec ex;
  for (int64_t block = 0; block < prep_blocks(pl); ++block) prep_block(ex, pl, a, block);
  for (int64_t item = 0; item < share_items(pl); ++item) share_item(pl, a, item);
  for (int64_t item = 0; item < pl.ktab_items; ++item) class_share_item(pl, a, item);
  const bool chunked = pl.g.n_ci_chunks > 1;
  switch (pl.g.variant * 2 + (chunked ? 1 : 0)) {
    case 2: host_pass<1, false>(pl, a); break;
    case 3: host_pass<1, true>(pl, a); break;
    case 4: host_pass<2, false>(pl, a); break;
    case 5: host_pass<2, true>(pl, a); break;
    case 0: host_pass<0, false>(pl, a); break;
    default: host_pass<0, true>(pl, a); break;
  }
}

}  // namespace detail

std::size_t workspace_bytes(const problem& prob) { return detail::make_plan(prob).workspace_bytes; }

void run_host(const problem& prob, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* out, void* workspace) {
  (void)conv_bias;  // cancels in the LayerNorm
  const detail::plan pl = detail::make_plan(prob);
  const detail::args a = detail::bind(x, weight, gamma, beta, out, workspace);
  detail::run_host_plan(pl, a);
}

}  // namespace fb::fused::convt3d_ln_gelu_scale
