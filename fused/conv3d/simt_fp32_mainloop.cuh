#pragma once
/// The fp32 CUDA-core tile loop's mainloop: a thread's register tiles and the tap loops of a
/// phase and input-channel chunk (unrolled for J0 <= 2, generic otherwise), two-level.

#include "fused/conv3d/simt_fp32_staging.cuh"

namespace fb::fused::conv3d::simt_fp32 {

/// A register tile of a thread: k_rows bases along h x k_co_thread channels. A thread holds two:
/// the outputs' accumulators (acc) and the partial sum of the current channel group (part).
struct acc_tile {
  float v[k_rows][k_co_thread];
  FB_HOST_DEVICE void zero() {
    FB_UNROLL
    for (int r = 0; r < k_rows; ++r)
      FB_UNROLL
      for (int c = 0; c < k_co_thread; ++c) v[r][c] = 0.0f;
  }
  /// Ends a group: adds its partial sum p (one FADD per accumulator).
  FB_HOST_DEVICE void add_group(const acc_tile& p) {
    FB_UNROLL
    for (int r = 0; r < k_rows; ++r)
      FB_UNROLL
      for (int c = 0; c < k_co_thread; ++c) v[r][c] = add32(v[r][c], p.v[r][c]);
  }
};

/// The k_co_thread weights of one (ci, tap) for this thread's channels (warp-uniform: broadcast).
FB_HOST_DEVICE void load_weights(const float* p, float (&w)[k_co_thread]) {
#if defined(__CUDA_ARCH__)
  FB_UNROLL
  for (int u = 0; u < k_co_thread / 4; ++u) {
    const float4 q = reinterpret_cast<const float4*>(p)[u];
    w[4 * u] = q.x;
    w[4 * u + 1] = q.y;
    w[4 * u + 2] = q.z;
    w[4 * u + 3] = q.w;
  }
#else
  for (int c = 0; c < k_co_thread; ++c) w[c] = p[c];
#endif
}

/// The thread's x pointer: tile element (ci 0, base row warp_d, first base row warp_h*k_rows, lane) with
/// tap 0; tap j reads j lines lower (input index q - j).
template <class XL>
FB_HOST_DEVICE const float* x_base(const XL& xl, const thread_pos& t, const float* xs) {
  return xs + (t.base_d + xl.j0 - 1) * xl.plane + (t.base_h + xl.j0 - 1) * xl.x_tile_w + t.base_w + xl.j0 - 1;
}

/// One input channel's taps of a phase with JD x JH x JW taps known at compile time, added to the
/// partial sum p (fully unrolled; consecutive h taps reuse the x values in registers). kFirst: the
/// channel opens a group, so p holds nothing yet and the first product's addend is 0 (the same bits
/// as zeroing p first, without the zeroing).
template <int JD, int JH, int JW, bool kFirst, class XL>
FB_HOST_DEVICE void channel_fixed(acc_tile& p, const XL& xl, const float* xc, const float* wc) {
  constexpr int kWin = k_rows + JH - 1;
  FB_UNROLL
  for (int jd = 0; jd < JD; ++jd) {
    FB_UNROLL
    for (int jw = 0; jw < JW; ++jw) {
      // x rows base-1 .. base+k_rows-1 relative to tap jh = JH-1: window u = r - jh + JH - 1.
      float xv[kWin];
      FB_UNROLL
      for (int u = 0; u < kWin; ++u) xv[u] = xc[-jd * xl.plane + (u - (JH - 1)) * xl.x_tile_w - jw];
      FB_UNROLL
      for (int jh = 0; jh < JH; ++jh) {
        float w[k_co_thread];
        load_weights(wc + ((jd * JH + jh) * JW + jw) * k_co_block, w);
        const bool open = kFirst && jd == 0 && jw == 0 && jh == 0;
        FB_UNROLL
        for (int r = 0; r < k_rows; ++r)
          FB_UNROLL
          for (int c = 0; c < k_co_thread; ++c)
            p.v[r][c] = fma32(xv[r - jh + JH - 1], w[c], open ? 0.0f : p.v[r][c]);
      }
    }
  }
}

/// The same with run-time tap counts (any k and s), in the same FMA order, for the d-slabs
/// [jd0, jd1) of the channel; p must hold the group's sum so far (zero when a group opens).
template <class XL>
FB_HOST_DEVICE void channel_any(acc_tile& p, const XL& xl, const float* xc, const float* wc, const phase_pos& pp,
                                int jd0, int jd1) {
  for (int jd = jd0; jd < jd1; ++jd)
    for (int jw = 0; jw < pp.jw; ++jw)
      for (int jh = 0; jh < pp.jh; ++jh) {
        float w[k_co_thread];
        load_weights(wc + ((jd * pp.jh + jh) * pp.jw + jw) * k_co_block, w);
        const float* xp = xc - jd * xl.plane - jh * xl.x_tile_w - jw;
        FB_UNROLL
        for (int r = 0; r < k_rows; ++r) {
          const float xv = xp[r * xl.x_tile_w];
          FB_UNROLL
          for (int c = 0; c < k_co_thread; ++c) p.v[r][c] = fma32(xv, w[c], p.v[r][c]);
        }
      }
}

/// Accumulates the n_ci input channels [ci0, ci0 + n_ci) of one staged chunk (generic loop) with
/// groups of pp.slabs d-slabs inside each channel (group_of: channels with more taps than a group
/// holds). No group spans two channels, so nothing carries over between chunks.
template <class XL>
FB_HOST_DEVICE void accumulate_slab_groups(acc_tile& acc, const XL& xl, const float* xb, const float* wb, int ci0,
                                           int n_ci, const phase_pos& pp) {
  acc_tile a = acc;  // see accumulate_groups
  acc_tile p;
  FB_NO_UNROLL
  for (int ci = 0; ci < n_ci; ++ci) {
    const float* xc = xb + ci * xl.ci;
    const float* wc = wb + ci * pp.taps * k_co_block;
    for (int jd0 = 0; jd0 < pp.jd; jd0 += pp.slabs) {
      p.zero();
      channel_any(p, xl, xc, wc, pp, jd0, jd0 + pp.slabs < pp.jd ? jd0 + pp.slabs : pp.jd);
      a.add_group(p);
    }
  }
  acc = a;
}

/// Accumulates the n_ci input channels [ci0, ci0 + n_ci) of one staged chunk, two-level: the
/// channels of each group (group_of: pp.group consecutive channels, counted from channel 0 of the
/// whole input, not of the chunk) are summed into part, and a completed group's part is added to
/// acc. A group may span two chunks: part then carries over to the next chunk's call (chunked
/// path), so the sums do not depend on the chunking. The unrolled variant (JD, JH, JW >= 1 known at
/// compile time) and the generic one (JD = 0: pp's tap counts) give the same bits.
template <int JD, int JH, int JW, class XL>
FB_HOST_DEVICE void accumulate_groups(acc_tile& acc, acc_tile& part, const XL& xl, const float* xb, const float* wb,
                                      int ci0, int n_ci, int c_in, const phase_pos& pp) {
  const int taps = JD > 0 ? JD * JH * JW : pp.taps;
  if (JD == 0 && pp.group == 0) {
    accumulate_slab_groups(acc, xl, xb, wb, ci0, n_ci, pp);
    return;
  }
  const int group = pp.group;
  acc_tile a = acc;  // local copies: on the host the compiler may then keep them out of memory (the
  acc_tile p = part; // shared-memory pointers are floats too and could alias); on the GPU a no-op
  int pos = ci0 % group;  // position of channel ci0 inside its group
  FB_NO_UNROLL
  for (int ci = 0; ci < n_ci;) {
    const int end = (n_ci - ci < group - pos) ? n_ci : ci + (group - pos);  // this group's channels here
    const bool opens = pos == 0;
    int e = ci;
    if constexpr (JD > 0) {
      if (opens) {
        channel_fixed<JD, JH, JW, true>(p, xl, xb + e * xl.ci, wb + e * taps * k_co_block);
        ++e;
      }
      FB_NO_UNROLL
      for (; e < end; ++e) channel_fixed<JD, JH, JW, false>(p, xl, xb + e * xl.ci, wb + e * taps * k_co_block);
    } else {
      if (opens) p.zero();
      FB_NO_UNROLL
      for (; e < end; ++e) channel_any(p, xl, xb + e * xl.ci, wb + e * taps * k_co_block, pp, 0, pp.jd);
    }
    pos += end - ci;
    ci = end;
    if (pos == group || ci0 + ci == c_in) a.add_group(p);  // the group is complete
    pos = 0;
  }
  acc = a;
  part = p;
}

/// One thread's share of a phase and input-channel chunk: the unrolled variant of the phase's tap
/// counts when the layout is compile-time and taps per dimension are 1 or 2, else the generic loop.
/// A phase without taps (k < s) leaves acc at zero.
template <int kJ0>
FB_HOST_DEVICE void accumulate(const geometry& g, const phase_pos& pp, int64_t cc, const thread_pos& t,
                               const float* xs, const float* ws, acc_tile& acc, acc_tile& part) {
  if (cc == 0) acc.zero();
  if (pp.taps == 0) return;
  const x_layout<kJ0> xl(g);
  const int ci0 = static_cast<int>(cc * g.ci_chunk);
  const int n_ci = static_cast<int>(min_i64(g.ci_chunk, g.c_in - ci0));
  const int c_in = static_cast<int>(g.c_in);
  const float* xb = x_base(xl, t, xs);
  const float* wb = ws + t.warp_c * k_co_thread;
  if constexpr (kJ0 == 1) {
    accumulate_groups<1, 1, 1>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp);
  } else if constexpr (kJ0 == 2) {
    switch ((pp.jd - 1) * 4 + (pp.jh - 1) * 2 + (pp.jw - 1)) {
      case 0: accumulate_groups<1, 1, 1>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      case 1: accumulate_groups<1, 1, 2>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      case 2: accumulate_groups<1, 2, 1>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      case 3: accumulate_groups<1, 2, 2>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      case 4: accumulate_groups<2, 1, 1>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      case 5: accumulate_groups<2, 1, 2>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      case 6: accumulate_groups<2, 2, 1>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
      default: accumulate_groups<2, 2, 2>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp); break;
    }
  } else {
    accumulate_groups<0, 0, 0>(acc, part, xl, xb, wb, ci0, n_ci, c_in, pp);
  }
}

}  // namespace fb::fused::conv3d::simt_fp32
