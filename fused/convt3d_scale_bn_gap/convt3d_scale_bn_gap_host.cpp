// Host executor of convt3d_scale_bn_gap (KernelBench #77): the CUDA kernels' block programs
// (fused/convt3d_scale_bn_gap/programs.cuh) run block by block on the CPU. Each phase between
// two barriers runs for threads 0..255 in turn, with each thread's register state kept in an array
// (fused/exec/block_program.cuh's host_executor), so the CPU executes the kernels' own tiling,
// indexing, shared-memory layouts and summation orders. Shared memory is filled with 0xFF bytes
// (NaN as floats and doubles) before every block, so a read of anything the block did not write
// first shows up as NaN in the results.
//
// Speed: the programs spell every fp32 multiply-add as an explicit fma (host and device then round
// identically); fused/exec/host_parallel.h runs the blocks in a clone compiled with the FMA
// instruction set where the CPU has it (glibc's software fmaf costs ~25 ns), and spreads them over
// the hardware threads: blocks are independent (each writes its own outputs), so which thread runs
// which block changes nothing in the results.
#include <cstddef>
#include <cstdint>

#include "fused/convt3d_scale_bn_gap/convt3d_scale_bn_gap.h"
#include "fused/convt3d_scale_bn_gap/plan.h"
#include "fused/convt3d_scale_bn_gap/programs.cuh"
#include "fused/exec/block_program.cuh"
#include "fused/exec/host_parallel.h"

namespace fb::fused::convt3d_scale_bn_gap {
namespace {

using namespace detail;

/// The host executor (fused/exec/block_program.cuh): phases run thread by thread; barriers are no-ops.
template <class State>
using host_exec = fb::fused::exec::host_executor<k_threads, State>;

/// Runs `prog(executor, block, smem)` for blocks [0, n_blocks) on the CPU
/// (fused/exec/host_parallel.h: spread over the hardware threads, each block in poisoned shared
/// memory, in the FMA clone where the CPU has FMA).
template <class State, class Program>
void run_blocks(int64_t n_blocks, std::size_t smem_bytes, const Program& prog) {
  fb::fused::detail::run_blocks_on_host<host_exec<State>>(
      n_blocks, smem_bytes,
      [&](host_exec<State>& ex, int64_t blk, float* smem) { prog(ex, blk, reinterpret_cast<unsigned char*>(smem)); });
}

template <int TB>
void run_gemm(const plan& pl, const params& p) {
  run_blocks<gemm_state<TB>>(gemm_blocks(p), pl.gemm_smem, [&](auto& ex, int64_t blk, unsigned char* smem) {
    gemm_program<TB>(ex, p, blk, smem);
  });
}

}  // namespace

std::size_t workspace_bytes(const problem& prob) { return detail::make_plan(prob).workspace_bytes; }

void run_host(const problem& prob, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* running_mean, float* running_var, int64_t* num_batches_tracked, float* out,
              void* workspace) {
  const plan pl = make_plan(prob);
  const params p = bind(pl, x, weight, conv_bias, gamma, beta, running_mean, running_var, num_batches_tracked, out,
                        workspace);
  run_blocks<no_state>(prep_blocks(p), prep_smem(p), [&](auto& ex, int64_t blk, unsigned char* smem) {
    prep_program(ex, p, blk, smem);
  });
  run_blocks<no_state>(gspec_blocks(p), gspec_smem(p), [&](auto& ex, int64_t blk, unsigned char* smem) {
    gspec_program(ex, p, blk, smem);
  });
  run_blocks<x_state>(x_blocks(p, p.training), pl.x_smem, [&](auto& ex, int64_t blk, unsigned char* smem) {
    x_program(ex, p, blk, smem, p.training);
  });
  if (p.training) {
    switch (p.batch_tile) {
      case 1: run_gemm<1>(pl, p); break;
      case 2: run_gemm<2>(pl, p); break;
      case 4: run_gemm<4>(pl, p); break;
      case 8: run_gemm<8>(pl, p); break;
      default: run_gemm<16>(pl, p); break;
    }
  }
  run_blocks<no_state>(reduce_blocks(p), k_reduce_smem, [&](auto& ex, int64_t blk, unsigned char* smem) {
    reduce_program(ex, p, blk, smem);
  });
  run_blocks<no_state>(finish_blocks(p), 0, [&](auto& ex, int64_t blk, unsigned char*) {
    finish_program(ex, p, blk);
  });
}

}  // namespace fb::fused::convt3d_scale_bn_gap
