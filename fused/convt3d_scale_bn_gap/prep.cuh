#pragma once
/// convt3d_scale_bn_gap's prep program: Wsum and H1 (the weights' depth DFT).

#include "fused/convt3d_scale_bn_gap/params.cuh"
#include "fused/convt3d_scale_bn_gap/x_spectrum.cuh"

namespace fb::fused::convt3d_scale_bn_gap::detail {

/// Blocks of the prep kernel: in training first one per x fw chunk (its tables' image, the longest
/// serial work, so it starts first), then those that compute Wsum, then H1 (training).
FB_HOST_DEVICE int64_t prep_table_blocks(const params& p) { return p.training ? p.n_fw_chunks : 0; }
FB_HOST_DEVICE int64_t prep_wsum_blocks(const params& p) { return (p.c_in * p.c_out + k_threads - 1) / k_threads; }
FB_HOST_DEVICE int64_t prep_h1_items(const params& p) { return p.training ? p.c_in * p.k * p.k * p.c_out : 0; }
FB_HOST_DEVICE int64_t prep_blocks(const params& p) {
  return prep_table_blocks(p) + prep_wsum_blocks(p) + (prep_h1_items(p) + k_threads - 1) / k_threads;
}
FB_HOST_DEVICE std::size_t prep_smem(const params& p) {
  return align16(static_cast<std::size_t>(p.dft_d) * sizeof(cplx));
}

/// Wsum[ci, c] = sum over the k^3 taps of w[ci, c] in tap order (fp64: exact for k^3 <= 2^20 or so).
FB_HOST_DEVICE void prep_wsum(const params& p, int64_t block, int t) {
  const int64_t i = block * k_threads + t;  // ci * C_out + c
  if (i >= p.c_in * p.c_out) return;
  const int64_t taps = static_cast<int64_t>(p.k) * p.k * p.k;
  const float* w = p.weight + i * taps;
  double s = 0.0;
  for (int64_t tap = 0; tap < taps; ++tap) s += static_cast<double>(load_ro(w + tap));
  p.wsum[i] = s;
}

FB_HOST_DEVICE void prep_tables(const params& p, unsigned char* smem, int t) {
  cplx* twd = at<cplx>(smem, 0);
  for (int m = t; m < p.dft_d; m += k_threads) twd[m] = math::dft::unit_root(m, p.dft_d);
}

/// H1 item (ci, th, tw, c): the depth DFT of the k taps w[ci, c, :, th, tw] at fd = 0..n_d_pairs-1.
/// The taps are read once into registers (k <= 8; lanes are channels, k^3 floats apart, so each
/// read touches 32 lines: re-reading them for every fd kept L1 busy for the whole kernel).
FB_HOST_DEVICE void prep_h1(const params& p, unsigned char* smem, int64_t h1_block, int t) {
  const int64_t i = h1_block * k_threads + t;
  if (i >= prep_h1_items(p)) return;
  const cplx* twd = at<cplx>(smem, 0);
  const int64_t k = p.k;
  const int64_t c = i % p.c_out;
  int64_t rest = i / p.c_out;
  const int64_t tw = rest % k;
  rest /= k;
  const int64_t th = rest % k;
  const int64_t ci = rest / k;
  const float* w = p.weight + (ci * p.c_out + c) * k * k * k + th * k + tw;  // + td * k * k
  cplx* dst = p.h1 + ((ci * p.n_d_pairs * k + th) * k + tw) * p.c_out + c;   // + fd * k * k * C_out
  const int64_t fd_stride = k * k * p.c_out;
  if (p.k <= k_tap_batch) {
    float wv[k_tap_batch];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int td = 0; td < k_tap_batch; ++td) wv[td] = td < p.k ? load_ro(w + td * k * k) : 0.0f;
    for (int fd = 0; fd < p.n_d_pairs; ++fd) {
      cplx acc{0.0f, 0.0f};
      int m = 0;  // (td * fd) mod dft_d
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int td = 0; td < k_tap_batch; ++td) {
        if (td < p.k) {
          const cplx tv = twd[m];
          acc.re = math::dft::ffma(wv[td], tv.re, acc.re);
          acc.im = math::dft::ffma(wv[td], tv.im, acc.im);
          m += fd;
          if (m >= p.dft_d) m -= p.dft_d;
        }
      }
      dst[fd * fd_stride] = acc;
    }
    return;
  }
  for (int fd = 0; fd < p.n_d_pairs; ++fd) {
    cplx acc{0.0f, 0.0f};
    int m = 0;  // (td * fd) mod dft_d
    for (int td = 0; td < p.k; ++td) {
      const float wv = load_ro(w + td * k * k);
      const cplx tv = twd[m];
      acc.re = math::dft::ffma(wv, tv.re, acc.re);
      acc.im = math::dft::ffma(wv, tv.im, acc.im);
      m += fd;
      if (m >= p.dft_d) m -= p.dft_d;
    }
    dst[fd * fd_stride] = acc;
  }
}

template <class Ex>
FB_HOST_DEVICE void prep_program(Ex& ex, const params& p, int64_t block, unsigned char* smem) {
  static_assert(exec::is_block_executor_v<Ex>, "prep_program needs a block executor");
  const int64_t ntab = prep_table_blocks(p);
  if (block < ntab) {
    x_tables_image_program(ex, p, static_cast<int>(block));
    return;
  }
  block -= ntab;
  const int64_t nws = prep_wsum_blocks(p);
  if (block < nws) {
    ex.threads([&](int t) { prep_wsum(p, block, t); });
    return;
  }
  ex.threads([&](int t) { prep_tables(p, smem, t); });
  ex.sync();
  ex.threads([&](int t) { prep_h1(p, smem, block - nws, t); });
}

}  // namespace fb::fused::convt3d_scale_bn_gap::detail
