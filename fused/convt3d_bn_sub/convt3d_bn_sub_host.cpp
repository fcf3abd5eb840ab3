// Host executor of convt3d_bn_sub: the CUDA path's five launches, each block program run on the
// CPU thread by thread between its barriers (simt_fp32_tile.cuh host_exec), with the same plan,
// tiles, chunks, staging, unrolled variants and FMA order, so the device must agree with it to the
// last bit up to the fp64 contraction choices inside math::batch_norm:: (the self-test allows 1e-6).
//
// Shared memory is filled with NaN before every block: a block that read shared memory it did not
// stage itself (which on the GPU would read another block's leftovers) makes the output NaN, and
// the property tests fail. Blocks of a pass are independent (each writes only its own outputs and
// partials), so they run on several CPU threads; the result does not depend on how many.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "fused/convt3d_bn_sub/centring.cuh"
#include "fused/convt3d_bn_sub/convt3d_bn_sub.h"
#include "fused/convt3d_bn_sub/finalize.cuh"
#include "fused/convt3d_bn_sub/host_passes.h"
#include "fused/convt3d_bn_sub/prep.cuh"
#include "fused/convt3d_bn_sub/rows.cuh"
#include "fused/runtime/plan_util.h"

namespace fb::fused::convt3d_bn_sub {
namespace detail {
namespace {

/// rows_band_block's stager on the host: each piece copied at once.
struct host_stager {
  void copy(float* dst, const float* src, int floats) const {
    std::memcpy(dst, src, sizeof(float) * static_cast<std::size_t>(floats));
  }
  void arrive() const {}
  void wait() const {}
};

/// Pass kStats of the plan's variant (the passes live in fused/convt3d_bn_sub_pass_j*_host.cpp).
template <bool kStats>
void host_pass(const plan& pl, const args& a) {
  switch (pl.g.variant) {
    case 1: host_pass_variant<1, kStats>(pl, a); break;
    case 2: host_pass_variant<2, kStats>(pl, a); break;
    default: host_pass_variant<0, kStats>(pl, a); break;
  }
}

}  // namespace

void run_host_plan(const plan& pl, const args& a) {
  conv3d::simt_fp32::host_exec_n<k_prep_threads> prep_ex;
  for (int64_t block = 0; block < prep_blocks(pl); ++block) prep_block(prep_ex, pl, a, block);
  conv3d::simt_fp32::host_exec ex;
  double centring_smem[k_centring_smem_doubles];
  for (int64_t block = 0; block < centring_blocks(pl); ++block) centring_block(ex, pl, a, block, centring_smem);
  if (pl.training) host_pass<true>(pl, a);
  std::vector<double> finalize_smem(k_finalize_smem_doubles);
  for (int64_t c = 0; c < pl.g.c_out; ++c) finalize_block(ex, pl, a, c, finalize_smem.data());
  if (!pl.training) {
    host_pass<false>(pl, a);
    return;
  }
  if (pl.band_rows == 0) {
    for (int64_t slice = 0; slice < output_slices(pl); ++slice) rows_block<int64_t>(ex, pl, a, slice);
    return;
  }
  conv3d::simt_fp32::host_exec_n<k_band_threads> band_ex;
  host_stager stager;
  std::vector<float> stage(static_cast<std::size_t>(pl.band_stage_floats));
  std::vector<int> table(static_cast<std::size_t>(pl.g.dim[1].s * pl.g.dim[2].s));
  for (int64_t item = 0; item < band_items(pl); ++item) {
    std::fill(stage.begin(), stage.end(), std::numeric_limits<float>::quiet_NaN());
    rows_band_block(band_ex, stager, pl, a, item, stage.data(), table.data());
  }
}

}  // namespace detail

std::size_t workspace_bytes(const problem& prob) { return detail::make_plan(prob).workspace_bytes; }

void run_host(const problem& prob, const float* x, const float* weight, const float* conv_bias, const float* gamma,
              const float* beta, float* running_mean, float* running_var, int64_t* num_batches_tracked, float* out,
              void* workspace) {
  const detail::plan pl = detail::make_plan(prob);
  const detail::args a = detail::bind(x, weight, conv_bias, gamma, beta, running_mean, running_var,
                                      num_batches_tracked, out, workspace);
  detail::run_host_plan(pl, a);
}

}  // namespace fb::fused::convt3d_bn_sub
