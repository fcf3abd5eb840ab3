// Host executor of convt3d_ln_gelu_scale (KernelBench #34): the CUDA path's two launches, each block
// program run on the CPU (fused/conv3d/mma_fp64_tile.cuh mma_host_exec: threads one after another,
// warps with all 32 lanes and the fp64 MMA emulated from its fragment layout), with the same plan,
// tiles, chunks, staging, operand offsets and row math. The device agrees with it up to the order
// of the fp64 additions inside one MMA instruction (absorbed by the rounding of y to fp32 but for
// rare ties) and the platforms' exp2 in gelu_erf (the GPU's ex2.approx, the host's std::exp2).
//
// Shared memory is filled with NaN before every block: a block that read shared memory it did not
// write itself (which on the GPU would read another block's leftovers) makes the output NaN, and the
// property tests fail. Blocks are independent, so they run on several CPU threads.
#include <cstdint>

#include "fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale.h"
#include "fused/convt3d_ln_gelu_scale/epilogue.cuh"
#include "fused/exec/host_parallel.h"
#include "fused/runtime/plan_util.h"

namespace fb::fused::convt3d_ln_gelu_scale {
namespace detail {

void run_host_plan(const plan& pl, const args& a) {
  for (int64_t item = 0; item < arrange_items(pl); ++item) arrange_item(pl, a, item);
  if (pl.persistent) {
    // Programs of k_tiles_per_program consecutive tiles, as the GPU's resident blocks run theirs
    // (which tiles a program gets does not change any output).
    constexpr int64_t k_tiles_per_program = 16;
    const int64_t programs = (pl.g.n_blocks + k_tiles_per_program - 1) / k_tiles_per_program;
    fb::fused::detail::run_blocks_on_host<conv3d::mma_fp64::mma_host_tiles_exec>(
        programs, pl.smem_bytes, [&](conv3d::mma_fp64::mma_host_tiles_exec& ex, int64_t program, float* smem) {
          ex.lo = program * k_tiles_per_program;
          ex.hi = ex.lo + k_tiles_per_program < pl.g.n_blocks ? ex.lo + k_tiles_per_program : pl.g.n_blocks;
          persistent_program(ex, pl, a, reinterpret_cast<unsigned char*>(smem));
        });
    return;
  }
  fb::fused::detail::run_blocks_on_host<conv3d::mma_fp64::mma_host_exec>(
      pl.g.n_blocks, pl.smem_bytes, [&](conv3d::mma_fp64::mma_host_exec& ex, int64_t block, float* smem) {
        pass_block(ex, pl, a, block, reinterpret_cast<unsigned char*>(smem));
      });
}

}  // namespace detail

std::size_t workspace_bytes(const problem& prob) { return detail::make_plan(prob).workspace_bytes; }

void run_host(const problem& prob, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* out, void* workspace) {
  const detail::plan pl = detail::make_plan(prob);
  const detail::args a = detail::bind(x, weight, conv_bias, gamma, beta, out, workspace);
  detail::run_host_plan(pl, a);
}

}  // namespace fb::fused::convt3d_ln_gelu_scale
