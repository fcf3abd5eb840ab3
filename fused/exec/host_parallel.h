#pragma once
/// Host executors run the independent blocks of a launch on several CPU threads; the results do not
/// depend on how many (every block writes only its own outputs and partials). Each block runs on a
/// block executor (fused/exec/block_program.cuh's host_executor) in shared memory of its own.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace fb::fused::detail {

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

namespace host_blocks {

/// 16 bytes of a block's shared memory, aligned as the GPU's dynamic shared memory is.
struct alignas(16) smem_chunk {
  unsigned char bytes[16];
};

/// Blocks [lo, hi) of a launch, each in shared memory filled with 0xFF bytes (NaN as float and as
/// double): a block that reads shared memory it did not write itself (on the GPU: another block's
/// leftovers) makes its output NaN, and the property tests fail.
template <class Exec, class Program>
inline void in_nan_smem(const Program& program, std::size_t smem_bytes, int64_t lo, int64_t hi) {
  Exec ex;
  std::vector<smem_chunk> smem(smem_bytes / sizeof(smem_chunk) + 2);
  for (int64_t block = lo; block < hi; ++block) {
    std::memset(smem.data(), 0xFF, smem.size() * sizeof(smem_chunk));
    program(ex, block, reinterpret_cast<float*>(smem.data()));
  }
}

template <class Exec, class Program>
void portable(const Program& program, std::size_t smem_bytes, int64_t lo, int64_t hi) {
  in_nan_smem<Exec>(program, smem_bytes, lo, hi);
}

// The same blocks compiled for CPUs with FMA, everything inlined into them (flatten), so that fmaf
// is one instruction, not a call into libm: ~10x faster host executor, same bits (fmaf and fma are
// correctly rounded either way). Chosen at run time; other CPUs and compilers run the portable one.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FB_HOST_FMA_CLONE 1
template <class Exec, class Program>
__attribute__((target("fma"), flatten)) void fma(const Program& program, std::size_t smem_bytes, int64_t lo,
                                                 int64_t hi) {
  in_nan_smem<Exec>(program, smem_bytes, lo, hi);
}
#endif

}  // namespace host_blocks

/// Runs program(ex, block, smem) for every block of a launch of n_blocks blocks on the CPU: blocks
/// on several threads (one Exec per thread), each block in its own NaN-filled, 16-byte aligned
/// shared memory of smem_bytes, in the FMA clone where the CPU has FMA.
template <class Exec, class Program>
void run_blocks_on_host(int64_t n_blocks, std::size_t smem_bytes, const Program& program) {
  parallel_ranges(n_blocks, [&](int64_t lo, int64_t hi) {
#if defined(FB_HOST_FMA_CLONE)
    if (__builtin_cpu_supports("fma")) {
      host_blocks::fma<Exec>(program, smem_bytes, lo, hi);
      return;
    }
#endif
    host_blocks::portable<Exec>(program, smem_bytes, lo, hi);
  });
}

}  // namespace fb::fused::detail
