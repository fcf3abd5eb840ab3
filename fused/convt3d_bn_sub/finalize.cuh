#pragma once
/// convt3d_bn_sub's finalize launch: per channel the batch statistics from the passes' partial
/// sums, the running buffers and the scale.

#include "fused/convt3d_bn_sub/plan.h"

namespace fb::fused::convt3d_bn_sub::detail {

/// Finalize's shared memory [doubles]: k_finalize_samples lane sums per warp lane, then the
/// channel's ybar and m2 of up to k_finalize_samples samples.
constexpr int k_finalize_samples = 32;  ///< samples per round of the tile sums (4 per warp)
constexpr int k_finalize_smem_doubles =
    k_threads * (k_finalize_samples / conv3d::simt_fp32::k_warps) + 2 * k_finalize_samples;

/// Finalize block c: the channel's per-sample centred sums, its batch statistics, running buffers
/// and scale (training); the scale from running_var (eval). smem: k_finalize_smem_doubles.
/// m2[b, c] = sum over tiles of m2_part[b, tile, c]: in rounds of k_finalize_samples samples, warp
/// w takes 4 of them, lane l sums the tiles l, l + 32, ... of each (in order) and lane 0 adds the
/// 32 lane sums in order. (A thread per sample adding all its tiles, and one thread combining the
/// samples from global memory, was a chain of dependent L2 round trips: 21 us, ncu, H100.)
template <class Exec>
FB_HOST_DEVICE void finalize_block(Exec& ex, const plan& pl, const args& a, int64_t c, double* smem) {
  static_assert(exec::is_block_executor_v<Exec>, "finalize_block needs a block executor");
  const conv3d::simt_fp32::geometry& g = pl.g;
  constexpr int kPerWarp = k_finalize_samples / conv3d::simt_fp32::k_warps;
  double* lanes = smem;                              // [warp][sample of the warp][lane]
  double* ybar_s = smem + k_threads * kPerWarp;      // the round's samples (kept when B fits one round)
  double* m2_s = ybar_s + k_finalize_samples;
  const bool one_round = g.batch <= k_finalize_samples;
  if (pl.training) {
    for (int64_t b0 = 0; b0 < g.batch; b0 += k_finalize_samples) {
      ex.threads([&](int tid) {
        const int warp = tid / 32, lane = tid % 32;
        FB_UNROLL
        for (int u = 0; u < kPerWarp; ++u) {
          const int64_t b = b0 + warp * kPerWarp + u;
          double acc = 0.0;
          if (b < g.batch) {
            const double* part = a.workspace + pl.off_m2_part + b * g.tiles_per_sample * g.c_out + c;
            for (int64_t t = lane; t < g.tiles_per_sample; t += 32) acc += part[t * g.c_out];
          }
          lanes[(warp * kPerWarp + u) * 32 + lane] = acc;
        }
      });
      ex.sync();
      ex.threads([&](int tid) {
        if (tid >= k_finalize_samples) return;
        const int64_t b = b0 + tid;
        if (b >= g.batch) return;
        double acc = 0.0;
        for (int l = 0; l < 32; ++l) acc += lanes[tid * 32 + l];
        a.workspace[pl.off_m2_bc + b * g.c_out + c] = acc;
        if (one_round) {
          m2_s[tid] = acc;
          ybar_s[tid] = a.workspace[pl.off_ybar + b * g.c_out + c];
        }
      });
      ex.sync();
    }
  }
  ex.threads([&](int tid) {
    if (tid != 0) return;
    const double gamma = static_cast<double>(a.gamma[c]);
    double var = 0.0;
    if (pl.training) {
      // From shared memory when the batch fits one round (the default), else from the workspace.
      math::batch_norm::channel_moments mo =
          one_round
              ? math::batch_norm::combine_sample_moments(ybar_s, m2_s, g.batch, 1, static_cast<double>(pl.spatial))
              : math::batch_norm::combine_sample_moments(a.workspace + pl.off_ybar + c, a.workspace + pl.off_m2_bc + c,
                                                         g.batch, g.c_out, static_cast<double>(pl.spatial));
      var = mo.var_biased;
      if (a.conv_bias != nullptr) mo.mean += static_cast<double>(a.conv_bias[c]);  // the true batch mean
      math::batch_norm::update_running(a.running_mean, a.running_var, c, mo, static_cast<double>(g.batch * pl.spatial),
                                       pl.momentum);
      if (c == 0) *a.num_batches_tracked += 1;
    } else {
      var = static_cast<double>(a.running_var[c]);
    }
    // Only the scale is needed: beta and the mean cancel against the per-(b, c) mean subtraction.
    a.workspace[pl.off_scale + c] = math::batch_norm::normalisation(0.0, var, gamma, 0.0, pl.eps).scale;
  });
}

}  // namespace fb::fused::convt3d_bn_sub::detail
