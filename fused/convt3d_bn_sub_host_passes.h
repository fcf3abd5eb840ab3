// The host executor's passes of convt3d_bn_sub (fused/convt3d_bn_sub_host.cpp): blocks run thread by
// thread, several blocks on several CPU threads. Each J0 is instantiated in its own translation
// unit (fused/convt3d_bn_sub_pass_j<J0>_host.cpp), for the same reason as the CUDA passes
// (fused/convt3d_bn_sub_passes.cuh): one file took g++ 100-380 s here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "fused/common/convt3d_bn_sub_plan.h"

namespace fb::fused::convt3d_bn_sub::detail {

/// Runs body(lo, hi) over [0, n) split into contiguous ranges on up to hardware_concurrency threads.
template <class F>
void parallel_ranges(int64_t n, F&& body) {
  const int64_t workers =
      std::max<int64_t>(1, std::min<int64_t>(n / 4, static_cast<int64_t>(std::thread::hardware_concurrency())));
  if (workers <= 1) {
    body(int64_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  for (int64_t w = 0; w < workers; ++w) pool.emplace_back([&, w] { body(n * w / workers, n * (w + 1) / workers); });
  for (std::thread& t : pool) t.join();
}

/// Blocks [lo, hi) of a pass, each in NaN-filled shared memory.
template <int kJ0, bool kChunked, bool kStats>
inline void pass_blocks(const plan& pl, const args& a, int64_t lo, int64_t hi) {
  const std::size_t bytes = kStats ? pl.smem_stats_bytes : pl.smem_write_bytes;
  tile::host_exec ex;
  std::vector<float> smem(bytes / sizeof(float) + 4);
  for (int64_t block = lo; block < hi; ++block) {
    std::fill(smem.begin(), smem.end(), std::numeric_limits<float>::quiet_NaN());
    pass_block<kJ0, kChunked, kStats>(ex, pl, a, block, smem.data());
  }
}

template <int kJ0, bool kChunked, bool kStats>
void pass_blocks_portable(const plan& pl, const args& a, int64_t lo, int64_t hi) {
  pass_blocks<kJ0, kChunked, kStats>(pl, a, lo, hi);
}

// The same blocks compiled for CPUs with FMA, everything inlined into them (flatten), so that fmaf
// (fma32) is one instruction, not a call into libm: ~10x faster host executor, same bits (fmaf is
// correctly rounded either way). Chosen at run time; other CPUs and compilers run the portable one.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FB_HOST_FMA_CLONE 1
template <int kJ0, bool kChunked, bool kStats>
__attribute__((target("fma"), flatten)) void pass_blocks_fma(const plan& pl, const args& a, int64_t lo, int64_t hi) {
  pass_blocks<kJ0, kChunked, kStats>(pl, a, lo, hi);
}
#endif

template <int kJ0, bool kChunked, bool kStats>
void host_pass(const plan& pl, const args& a) {
  parallel_ranges(pl.g.n_blocks, [&](int64_t lo, int64_t hi) {
#if defined(FB_HOST_FMA_CLONE)
    if (__builtin_cpu_supports("fma")) {
      pass_blocks_fma<kJ0, kChunked, kStats>(pl, a, lo, hi);
      return;
    }
#endif
    pass_blocks_portable<kJ0, kChunked, kStats>(pl, a, lo, hi);
  });
}

/// Pass kStats of the variant with J0 = kJ0 on the host, one input-channel chunk or several.
template <int kJ0, bool kStats>
void host_pass_variant(const plan& pl, const args& a) {
  if (pl.g.n_ci_chunks > 1)
    host_pass<kJ0, true, kStats>(pl, a);
  else
    host_pass<kJ0, false, kStats>(pl, a);
}

// Instantiated in fused/convt3d_bn_sub_pass_j<J0>_host.cpp only.
extern template void host_pass_variant<0, true>(const plan&, const args&);
extern template void host_pass_variant<0, false>(const plan&, const args&);
extern template void host_pass_variant<1, true>(const plan&, const args&);
extern template void host_pass_variant<1, false>(const plan&, const args&);
extern template void host_pass_variant<2, true>(const plan&, const args&);
extern template void host_pass_variant<2, false>(const plan&, const args&);

}  // namespace fb::fused::convt3d_bn_sub::detail
