#pragma once
/// convt3d_bn_sub's prep launch: the tap-box sums of each (b, ci) volume and x's centres, then the
/// weights arranged per (channel block, phase) for the passes.

#include "fused/convt3d_bn_sub/plan.h"

namespace fb::fused::convt3d_bn_sub::detail {

/// Threads of a prep block. Prep's volume steps are chains of dependent loads and fp64 additions per
/// thread, and its 272 blocks (default config) run 2 per SM: at 256 threads a warp issued every
/// ~12 cycles (ncu, H100, 2026-11-25) and the launch took 25 us for 17 MB. More warps per volume
/// shorten each thread's chain.
constexpr int k_prep_threads = 512;

/// Blocks of the prep launch: one per (b, ci) volume, then one per (channel block, phase).
FB_HOST_DEVICE int64_t prep_blocks(const plan& pl) {
  return pl.g.batch * pl.g.c_in + pl.g.n_co_blocks * pl.g.n_phases;
}

/// Prep block (k_prep_threads threads): the tap-box sums of one (b, ci) volume, or one (channel
/// block, phase) of weights.
template <class Exec>
FB_HOST_DEVICE void prep_block(Exec& ex, const plan& pl, const args& a, int64_t block) {
  static_assert(exec::is_block_executor_v<Exec>, "prep_block needs a block executor");
  const conv3d::simt_fp32::geometry& g = pl.g;
  const int64_t volumes = g.batch * g.c_in;
  if (block >= volumes) {
    conv3d::simt_fp32::arrange_weights_block(ex, g, a.weight, arranged_weights(pl, a), block - volumes, k_prep_threads);
    return;
  }
  const float* xv = a.x + block * g.dim[0].n_in * g.dim[1].n_in * g.dim[2].n_in;
  double* sa = a.workspace + pl.off_box_a + block * pl.box_a;
  double* sb = a.workspace + pl.off_box_b + block * pl.box_b;
  double* r = a.workspace + pl.off_box_r + block * pl.k3;
  ex.threads([&](int tid) {
    // The floats after y's end up to the next 16 bytes: rows_band_block's last copy reads them.
    if (block == 0 && tid < (4 - pl.y_floats % 4) % 4) materialised(pl, a)[pl.y_floats + tid] = 0.0f;
    math::box_sums::step_h(g.dim[0], g.dim[1], g.dim[2], xv, sa, tid, k_prep_threads);
  });
  ex.sync();
  ex.threads([&](int tid) { math::box_sums::step_w(g.dim[0], g.dim[2], sa, sb, tid, k_prep_threads); });
  ex.sync();
  ex.threads([&](int tid) { math::box_sums::step_d(g.dim[0], sb, r, tid, k_prep_threads); });
  ex.sync();
  ex.threads([&](int tid) {
    if (tid != 0) return;
    centres(pl, a)[block] =
        pl.centre_count > 0.0 ? static_cast<float>(r[pl.centre_tap] / pl.centre_count) : 0.0f;
  });
  ex.sync();
  // The volume minus its centre (centred_x), 4 floats at a time where the volumes are 16-byte aligned.
  const int64_t n = g.dim[0].n_in * g.dim[1].n_in * g.dim[2].n_in;
  float* xc = centred_x(pl, a) + block * n;
  ex.threads([&](int tid) {
    const float c = centres(pl, a)[block];
    const bool vec = n % 4 == 0 && reinterpret_cast<std::uintptr_t>(a.x) % 16 == 0;
    const int64_t n4 = vec ? n / 4 : 0;
    for (int64_t e = tid; e < n4; e += k_prep_threads) {
      float v[4];
      conv3d::simt_fp32::load_ro4(xv + 4 * e, v);
      FB_UNROLL
      for (int u = 0; u < 4; ++u) v[u] = v[u] - c;
      conv3d::simt_fp32::store4(xc + 4 * e, v);
    }
    for (int64_t e = 4 * n4 + tid; e < n; e += k_prep_threads) xc[e] = conv3d::simt_fp32::load_ro(xv + e) - c;
  });
}

}  // namespace fb::fused::convt3d_bn_sub::detail
