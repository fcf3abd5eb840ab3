// Host executor of convt3d_bn_sub: the CUDA path's five launches, each block program run on the
// CPU thread by thread between its barriers (convt3d_tile.cuh host_exec), with the same plan,
// tiles, chunks, staging, unrolled variants and FMA order, so the device must agree with it to the
// last bit up to the fp64 contraction choices inside bn:: (the self-test allows 1e-6).
//
// Shared memory is filled with NaN before every block: a block that read shared memory it did not
// stage itself (which on the GPU would read another block's leftovers) makes the output NaN, and
// the property tests fail. Blocks of a pass are independent (each writes only its own outputs and
// partials), so they run on several CPU threads; the result does not depend on how many.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "fused/common/convt3d_bn_sub_plan.h"
#include "fused/common/host_parallel.h"
#include "fused/common/plan_util.h"
#include "fused/convt3d_bn_sub.h"

namespace fb::fused::convt3d_bn_sub {
namespace detail {
namespace {

using fb::fused::detail::parallel_ranges;

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

template <bool kStats>
void host_pass_variant(const plan& pl, const args& a) {
  const bool chunked = pl.g.n_ci_chunks > 1;
  switch (pl.g.variant * 2 + (chunked ? 1 : 0)) {
    case 2: host_pass<1, false, kStats>(pl, a); break;
    case 3: host_pass<1, true, kStats>(pl, a); break;
    case 4: host_pass<2, false, kStats>(pl, a); break;
    case 5: host_pass<2, true, kStats>(pl, a); break;
    case 0: host_pass<0, false, kStats>(pl, a); break;
    default: host_pass<0, true, kStats>(pl, a); break;
  }
}

}  // namespace

void run_host_plan(const plan& pl, const args& a) {
  tile::host_exec ex;
  for (int64_t block = 0; block < prep_blocks(pl); ++block) prep_block(ex, pl, a, block);
  for (int64_t item = 0; item < pl.g.batch * pl.g.c_out; ++item) {
    double lanes[k_mean_lanes];
    for (int lane = 0; lane < k_mean_lanes; ++lane) lanes[lane] = mean_lane_sum(pl, a, item, lane);
    a.ws[pl.off_ybar + item] = mean_from_lanes(pl, lanes);
  }
  for (int64_t item = 0; item < ptab_items(pl); ++item) ptab_item(pl, a, item);
  if (pl.training) host_pass_variant<true>(pl, a);
  for (int64_t c = 0; c < pl.g.c_out; ++c) finalize_block(ex, pl, a, c);
  host_pass_variant<false>(pl, a);
}

}  // namespace detail

std::size_t workspace_bytes(const problem& prob) { return detail::make_plan(prob).workspace_bytes; }

void run_host(const problem& prob, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* running_mean, float* running_var, int64_t* num_batches_tracked, float* out,
              void* workspace) {
  using fb::fused::detail::require_ptr;
  const detail::plan pl = detail::make_plan(prob);
  constexpr const char* m = "convt3d_bn_sub::run_host";
  require_ptr(x, m, "x");
  require_ptr(weight, m, "weight");
  require_ptr(gamma, m, "gamma");
  require_ptr(beta, m, "beta");
  require_ptr(running_mean, m, "running_mean");
  require_ptr(running_var, m, "running_var");
  require_ptr(num_batches_tracked, m, "num_batches_tracked");
  require_ptr(out, m, "out");
  require_ptr(workspace, m, "workspace");
  const detail::args a{x,           weight,      conv_bias, gamma, running_mean,
                       running_var, num_batches_tracked, out,       fb::fused::detail::aligned_workspace(workspace)};
  detail::run_host_plan(pl, a);
}

}  // namespace fb::fused::convt3d_bn_sub
