#pragma once
/// Host executors run the independent blocks of a launch on several CPU threads; the results do not
/// depend on how many (every block writes only its own outputs and partials).
#include <algorithm>
#include <cstdint>
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

}  // namespace fb::fused::detail
