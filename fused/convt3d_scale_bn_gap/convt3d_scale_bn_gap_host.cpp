// Host executor of convt3d_scale_bn_gap (KernelBench #77): the CUDA kernels' block programs
// (fused/convt3d_scale_bn_gap/programs.cuh) run block by block on the CPU. Each phase between
// two barriers runs for threads 0..255 in turn, with each thread's register state kept in an array,
// so the CPU executes the kernels' own tiling, indexing, shared-memory layouts and summation orders.
// Shared memory is a host buffer poisoned with 0xFF bytes (NaN as floats and doubles) before every
// block, so a read of anything the block did not write first shows up as NaN in the results.
//
// Speed: the programs spell every fp32 multiply-add as an explicit fma (host and device then round
// identically). glibc's software fmaf costs ~25 ns, so on x86-64 the block loop is compiled twice
// (flatten inlines the whole program into it): once with the FMA instruction set, used when the CPU
// has it, and once without, for CPUs that lack it; both give the same bits. Blocks are independent
// (each writes its own outputs), so they are spread over the hardware threads; which thread runs
// which block changes nothing in the results.
#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "fused/convt3d_scale_bn_gap/convt3d_scale_bn_gap.h"
#include "fused/convt3d_scale_bn_gap/plan.h"
#include "fused/convt3d_scale_bn_gap/programs.cuh"
#include "fused/exec/block_program.cuh"

namespace fb::fused::convt3d_scale_bn_gap {
namespace {

using namespace detail;

/// The host executor (fused/exec/block_program.cuh): phases run thread by thread; barriers are no-ops.
template <class State>
using host_exec = fb::fused::exec::host_executor<k_threads, State>;

/// Blocks first, first + step, ... < n_blocks, each with freshly poisoned shared memory.
template <class State, class Program>
inline void run_range_body(const Program& prog, int64_t first, int64_t n_blocks, int64_t step,
                           std::size_t smem_bytes) {
  std::vector<unsigned char> buf(smem_bytes + 16);
  auto* smem = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(buf.data()) + 15) &
                                                ~static_cast<std::uintptr_t>(15));
  host_exec<State> ex;
  for (int64_t blk = first; blk < n_blocks; blk += step) {
    std::memset(smem, 0xFF, smem_bytes);
    prog(ex, blk, smem);
  }
}

template <class State, class Program>
__attribute__((flatten)) void run_range_plain(const Program& prog, int64_t first, int64_t n_blocks, int64_t step,
                                              std::size_t smem_bytes) {
  run_range_body<State>(prog, first, n_blocks, step, smem_bytes);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define FB_K77_FMA_CLONE 1
template <class State, class Program>
__attribute__((target("fma"), flatten)) void run_range_fma(const Program& prog, int64_t first, int64_t n_blocks,
                                                           int64_t step, std::size_t smem_bytes) {
  run_range_body<State>(prog, first, n_blocks, step, smem_bytes);
}
bool cpu_has_fma() {
  static const bool has = __builtin_cpu_supports("fma");
  return has;
}
#endif

/// Runs `prog(executor, block, smem)` for blocks [0, n_blocks), spread over the hardware threads.
template <class State, class Program>
void run_blocks(int64_t n_blocks, std::size_t smem_bytes, const Program& prog) {
  const auto range = [&](int64_t first, int64_t step) {
#if defined(FB_K77_FMA_CLONE)
    if (cpu_has_fma()) {
      run_range_fma<State>(prog, first, n_blocks, step, smem_bytes);
      return;
    }
#endif
    run_range_plain<State>(prog, first, n_blocks, step, smem_bytes);
  };
  const int64_t hw = std::max<unsigned>(1u, std::thread::hardware_concurrency());
  const int64_t workers = std::min<int64_t>({hw, 64, n_blocks / 4});
  if (workers <= 1) {
    range(0, 1);
    return;
  }
  std::vector<std::thread> pool;
  for (int64_t w = 1; w < workers; ++w) pool.emplace_back(range, w, workers);
  range(0, workers);
  for (std::thread& th : pool) th.join();
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
    switch (p.tb) {
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
