#pragma once
/// convt3d_scale_bn_gap's gspec program: the weights' height transform G for every row pair.

#include "fused/convt3d_scale_bn_gap/params.cuh"

namespace fb::fused::convt3d_scale_bn_gap::detail {

/// Items (ci, fd, tw, c), c fastest: each reads its k values H1[ci][fd][:][tw][c] once and writes
/// G[ci][pair][tw][c] = sum_th H1[ci][fd][th][tw][c] e^{-2pi i th fh / H'} for every pair (fd, fh)
/// of depth plane fd (taps summed in order th = 0, 1, ...). The gemm then only copies G: computed
/// inside the gemm, every block formed it for all pairs it touched (~4.75x redundant at the default
/// config) and spent ~40% of its issue slots on it.
FB_HOST_DEVICE int64_t gspec_items(const params& p) { return p.training ? p.c_in * p.n_d_pairs * p.k * p.c_out : 0; }
FB_HOST_DEVICE int64_t gspec_blocks(const params& p) { return (gspec_items(p) + k_threads - 1) / k_threads; }
/// The twiddles of every (fh, th) pair, [fh][th], once per block in shared memory where k <=
/// k_tap_batch and the table is small (the default: 36 x 5): the taps' loop then reads its twiddle
/// (the same for the whole warp) instead of stepping th * fh mod H' per tap (a third of gspec's
/// instructions were that index and its wrap).
FB_HOST_DEVICE bool gspec_pair_table(const params& p) {
  return p.k <= k_tap_batch && static_cast<std::size_t>(p.dft_h) * static_cast<std::size_t>(p.k) * sizeof(cplx) <=
                                   16 * 1024;
}
FB_HOST_DEVICE std::size_t gspec_table_offset(const params& p) {
  return align16(static_cast<std::size_t>(p.dft_h) * sizeof(cplx));
}
FB_HOST_DEVICE std::size_t gspec_smem(const params& p) {
  return gspec_table_offset(p) +
         (gspec_pair_table(p) ? align16(static_cast<std::size_t>(p.dft_h) * static_cast<std::size_t>(p.k) * sizeof(cplx))
                              : 0);
}

/// The first pair of depth plane fd and the plane's pair count (math::dft::pair_at's numbering).
FB_HOST_DEVICE void plane_pairs(const math::dft::row_pairs& rp, int64_t fd, int64_t& first, int64_t& count) {
  if (fd == 0) {
    first = 0;
    count = rp.n_edge;
  } else if (fd <= rp.n_interior) {
    first = rp.n_edge + (fd - 1) * rp.nh;
    count = rp.nh;
  } else {  // fd = nd/2, nd even
    first = rp.n_edge + rp.n_interior * rp.nh;
    count = rp.n_edge;
  }
}

/// G of `count` pairs (fh = q) from the K taps v (th order) and the table twq[fh][th].
template <int K>
FB_HOST_DEVICE void gspec_pairs(const cplx (&v)[k_tap_batch], const cplx* twq, cplx* g, int64_t th_stride,
                                int64_t count) {
  static_assert(K <= k_tap_batch, "gspec_pairs: at most k_tap_batch taps");
  for (int64_t q = 0; q < count; ++q, twq += K) {
    cplx acc{0.0f, 0.0f};
    FB_UNROLL
    for (int th = 0; th < K; ++th) math::dft::cmac(acc, v[th], twq[th]);
    g[q * th_stride] = acc;
  }
}

FB_HOST_DEVICE void gspec_item(const params& p, unsigned char* smem, int64_t block, int t) {
  const int64_t i = block * k_threads + t;
  if (i >= gspec_items(p)) return;
  const cplx* twh = at<cplx>(smem, 0);
  const int64_t k = p.k;
  const int64_t c = i % p.c_out;
  int64_t rest = i / p.c_out;
  const int64_t tw = rest % k;
  rest /= k;
  const int64_t fd = rest % p.n_d_pairs;
  const int64_t ci = rest / p.n_d_pairs;
  const cplx* h = p.h1 + ((ci * p.n_d_pairs + fd) * k * k + tw) * p.c_out + c;  // + th * k * C_out
  int64_t first = 0, count = 0;
  plane_pairs(p.pairs, fd, first, count);
  cplx* g = p.G + ((ci * p.pairs.count + first) * k + tw) * p.c_out + c;  // + q * k * C_out
  const int64_t th_stride = k * p.c_out;
  if (gspec_pair_table(p)) {
    cplx v[k_tap_batch];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int th = 0; th < k_tap_batch; ++th) v[th] = th < p.k ? load_ro(h + th * th_stride) : cplx{0.0f, 0.0f};
    const cplx* twq = at<cplx>(smem, gspec_table_offset(p));
    switch (p.k) {  // the taps unrolled exactly (no predicated-off FMAs)
      case 1: gspec_pairs<1>(v, twq, g, th_stride, count); break;
      case 2: gspec_pairs<2>(v, twq, g, th_stride, count); break;
      case 3: gspec_pairs<3>(v, twq, g, th_stride, count); break;
      case 4: gspec_pairs<4>(v, twq, g, th_stride, count); break;
      case 5: gspec_pairs<5>(v, twq, g, th_stride, count); break;
      case 6: gspec_pairs<6>(v, twq, g, th_stride, count); break;
      case 7: gspec_pairs<7>(v, twq, g, th_stride, count); break;
      default: gspec_pairs<8>(v, twq, g, th_stride, count); break;
    }
    return;
  }
  // k > k_tap_batch, or a table too large for shared memory (H' k > 2048): taps reloaded per pair,
  // twiddles stepped th * fh mod H'.
  for (int64_t q = 0; q < count; ++q) {
    cplx acc{0.0f, 0.0f};
    int m = 0;
    for (int th = 0; th < p.k; ++th) {
      math::dft::cmac(acc, load_ro(h + th * th_stride), twh[m]);
      m += static_cast<int>(q);
      if (m >= p.dft_h) m -= p.dft_h;
    }
    g[q * th_stride] = acc;
  }
}

template <class Ex>
FB_HOST_DEVICE void gspec_program(Ex& ex, const params& p, int64_t block, unsigned char* smem) {
  static_assert(exec::is_block_executor_v<Ex>, "gspec_program needs a block executor");
  ex.threads([&](int t) {
    cplx* twh = at<cplx>(smem, 0);
    for (int m = t; m < p.dft_h; m += k_threads) twh[m] = math::dft::unit_root(m, p.dft_h);
    if (gspec_pair_table(p)) {
      cplx* twq = at<cplx>(smem, gspec_table_offset(p));
      for (int i = t; i < p.dft_h * p.k; i += k_threads) {
        const int q = i / p.k, th = i - q * p.k;
        twq[i] = math::dft::unit_root((th * q) % p.dft_h, p.dft_h);
      }
    }
  });
  ex.sync();
  ex.threads([&](int t) { gspec_item(p, smem, block, t); });
}

}  // namespace fb::fused::convt3d_scale_bn_gap::detail
