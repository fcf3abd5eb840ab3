#pragma once
/// One block of convt3d_bn_sub's convolution pass: the tile loop with pass 1's or pass 2's
/// epilogue policy.

#include "fused/convt3d_bn_sub/epilogue.cuh"

namespace fb::fused::convt3d_bn_sub::detail {

/// One block of pass 1 (kStats) or pass 2, in shared memory `smem` (plan's smem_*_bytes).
/// kChunked must equal pl.g.n_ci_chunks > 1.
template <int kJ0, bool kChunked, bool kStats, class Exec>
FB_HOST_DEVICE void pass_block(Exec& ex, const plan& pl, const args& a, int64_t block, float* smem) {
  static_assert(exec::is_block_executor_v<Exec>, "pass_block needs a block executor");
  if constexpr (kStats) {
    const stats_policy<kJ0 != 0> pol{pl, a};
    conv3d::simt_fp32::conv_tile_block<kJ0, kChunked>(ex, pl.g, centred_x(pl, a), nullptr, arranged_weights(pl, a),
                                                      block, smem, pol);
  } else {
    const write_policy<kJ0 != 0> pol{pl, a};
    conv3d::simt_fp32::conv_tile_block<kJ0, kChunked>(ex, pl.g, centred_x(pl, a), nullptr, arranged_weights(pl, a),
                                                      block, smem, pol);
  }
}

}  // namespace fb::fused::convt3d_bn_sub::detail
