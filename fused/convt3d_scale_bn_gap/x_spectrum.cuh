#pragma once
/// convt3d_scale_bn_gap's x program: the input spectrum and the spatial sums.

#include "fused/convt3d_scale_bn_gap/params.cuh"

namespace fb::fused::convt3d_scale_bn_gap::detail {

/// Shared-memory layout of x_program (byte offsets). The staged x rows and the h-stage output Th
/// share one region: the rows are dead once the w-stage is done.
///   Tw[d][h][j]:  plane stride x_tw_plane (H*chunk_columns + 2: consecutive planes start 4 banks apart, so the
///                 h-stage's lanes, one plane each, read without bank conflicts)
///   Th[d][fh][j]: row stride x_th_row (chunk_columns + 2: the d-stage's lanes, one row fh each, read without
///                 conflicts) and plane stride x_th_plane (likewise for the h-stage's writes)
///   mh[h][f]:     e^{-2pi i h f / H'} for f < x_nfh (zero past n_h_pairs): the h-stage's k_fh twiddles
///                 of a step are adjacent and the same for the whole warp
///   md[d][f]:     e^{-2pi i d f / D'} for f < x_nfd (zero past n_d_pairs), likewise for the d-stage
struct x_layout {
  std::size_t twd, twh, tww, boxd, boxh, boxw, mh, md, tw, rows_or_th, reduction, total;
};

FB_HOST_DEVICE int x_nfh(const params& p) { return (p.n_h_pairs + k_fh - 1) / k_fh * k_fh; }
FB_HOST_DEVICE int x_nfd(const params& p) { return (p.n_d_pairs + k_fd - 1) / k_fd * k_fd; }
FB_HOST_DEVICE int64_t x_tw_plane(const params& p) { return static_cast<int64_t>(p.H) * p.chunk_columns + 2; }
FB_HOST_DEVICE int64_t x_th_row(const params& p) { return p.chunk_columns + 2; }
FB_HOST_DEVICE int64_t x_th_plane(const params& p) {
  const int64_t n = static_cast<int64_t>(p.dft_h) * x_th_row(p);  // even
  return n % 4 == 0 ? n + 2 : n;
}

/// Bytes of the region that holds the staged x rows, then Th.
FB_HOST_DEVICE std::size_t x_union_bytes(const params& p, bool dft) {
  const std::size_t rows = static_cast<std::size_t>(p.w_stage_rows) * static_cast<std::size_t>(p.slab_rows) *
                           static_cast<std::size_t>(p.W + 1) * sizeof(float);
  const std::size_t th =
      dft ? static_cast<std::size_t>(p.D) * static_cast<std::size_t>(x_th_plane(p)) * sizeof(cplx) : 0;
  return align16(rows > th ? rows : th);
}

FB_HOST_DEVICE x_layout make_x_layout(const params& p, bool dft) {
  x_layout L{};
  std::size_t o = 0;
  L.twd = o;
  o += dft ? align16(static_cast<std::size_t>(p.dft_d) * sizeof(cplx)) : 0;
  L.twh = o;
  o += dft ? align16(static_cast<std::size_t>(p.dft_h) * sizeof(cplx)) : 0;
  L.tww = o;
  o += dft ? align16(static_cast<std::size_t>(p.W) * k_jmax * sizeof(cplx)) : 0;
  L.boxd = o;
  o += dft ? align16(static_cast<std::size_t>(p.dft_d) * sizeof(cplx)) : 0;
  L.boxh = o;
  o += dft ? align16(static_cast<std::size_t>(p.dft_h) * sizeof(cplx)) : 0;
  L.boxw = o;
  o += dft ? align16(k_jmax * sizeof(cplx)) : 0;
  L.mh = o;
  o += dft ? align16(static_cast<std::size_t>(p.H) * static_cast<std::size_t>(x_nfh(p)) * sizeof(cplx)) : 0;
  L.md = o;
  o += dft ? align16(static_cast<std::size_t>(p.D) * static_cast<std::size_t>(x_nfd(p)) * sizeof(cplx)) : 0;
  L.tw = o;
  o += dft ? align16(static_cast<std::size_t>(p.D) * static_cast<std::size_t>(x_tw_plane(p)) * sizeof(cplx)) : 0;
  L.rows_or_th = o;
  o += x_union_bytes(p, dft);
  L.reduction = o;
  o += align16((k_threads + k_threads / 32) * sizeof(double));
  L.total = o;
  return L;
}

/// Per-thread state of x_program: the thread's share of S[b, ci], and the block's centring constant.
struct x_state {
  double sum;
  float c;
};

/// The chunk's fw columns: [first_fw, first_fw + n_columns).
struct fw_chunk {
  int first_fw;
  int n_columns;
};
FB_HOST_DEVICE fw_chunk chunk_of(const params& p, int q) {
  const int fw0 = q * p.chunk_columns;
  const int left = p.n_fw - fw0;
  return {fw0, left < p.chunk_columns ? left : p.chunk_columns};
}

/// Twiddle tables: e^{-2pi i m/D'}, e^{-2pi i m/H'}, and per input column w the chunk's
/// e^{-2pi i w fw/W'} (zero for columns past the chunk, so the w-stage's fixed tile adds nothing);
/// the box spectra of the three dimensions (math::dft::box_dft) for the chunk's frequencies.
FB_HOST_DEVICE void x_tables(const params& p, const x_layout& L, unsigned char* smem, fw_chunk ch, int t) {
  cplx* twd = at<cplx>(smem, L.twd);
  cplx* twh = at<cplx>(smem, L.twh);
  cplx* tww = at<cplx>(smem, L.tww);
  cplx* boxd = at<cplx>(smem, L.boxd);
  cplx* boxh = at<cplx>(smem, L.boxh);
  cplx* boxw = at<cplx>(smem, L.boxw);
  for (int m = t; m < p.dft_d; m += k_threads) {
    twd[m] = math::dft::unit_root(m, p.dft_d);
    boxd[m] = math::dft::box_dft(p.D, m, p.dft_d);
  }
  for (int m = t; m < p.dft_h; m += k_threads) {
    twh[m] = math::dft::unit_root(m, p.dft_h);
    boxh[m] = math::dft::box_dft(p.H, m, p.dft_h);
  }
  for (int j = t; j < k_jmax; j += k_threads)
    boxw[j] = j < ch.n_columns ? math::dft::box_dft(p.W, ch.first_fw + j, p.dft_w) : cplx{0.0f, 0.0f};
  for (int i = t; i < p.W * k_jmax; i += k_threads) {
    const int w = i / k_jmax;
    const int j = i % k_jmax;
    tww[i] = j < ch.n_columns ? math::dft::unit_root((static_cast<int64_t>(w) * (ch.first_fw + j)) % p.dft_w, p.dft_w)
                              : cplx{0.0f, 0.0f};
  }
}

/// The twiddle matrices mh and md from the tables (after x_tables' barrier).
FB_HOST_DEVICE void x_matrices(const params& p, const x_layout& L, unsigned char* smem, int t) {
  const cplx* twd = at<cplx>(smem, L.twd);
  const cplx* twh = at<cplx>(smem, L.twh);
  cplx* mh = at<cplx>(smem, L.mh);
  cplx* md = at<cplx>(smem, L.md);
  const int nfh = x_nfh(p);
  const int nfd = x_nfd(p);
  for (int i = t; i < p.H * nfh; i += k_threads) {
    const int h = i / nfh;
    const int f = i - h * nfh;
    mh[i] = f < p.n_h_pairs ? twh[static_cast<int>((static_cast<int64_t>(h) * f) % p.dft_h)] : cplx{0.0f, 0.0f};
  }
  for (int i = t; i < p.D * nfd; i += k_threads) {
    const int d = i / nfd;
    const int f = i - d * nfd;
    md[i] = f < p.n_d_pairs ? twd[static_cast<int>((static_cast<int64_t>(d) * f) % p.dft_d)] : cplx{0.0f, 0.0f};
  }
}

/// Bytes of x_program's tables (twd .. md: the shared-memory layout's head, up to Tw).
FB_HOST_DEVICE std::size_t x_tables_bytes(const params& p) { return make_x_layout(p, true).tw; }

/// Bytes of all fw chunks' table images (p.xtab).
FB_HOST_DEVICE std::size_t x_table_images_bytes(const params& p) {
  return static_cast<std::size_t>(p.n_fw_chunks) * x_tables_bytes(p);
}

/// Block program (run by prep, before x): chunk q's tables, x_tables then x_matrices, written into
/// its image p.xtab + q * x_tables_bytes at their shared-memory offsets. Every x block of a chunk
/// needs the same tables; computed in each block, their fp64 roots and box spectra (a few threads'
/// serial chains) kept the other warps of the block waiting at the first barrier for ~28% of the
/// x kernel's warp samples (ncu, 2026-11-29).
template <class Ex>
FB_HOST_DEVICE void x_tables_image_program(Ex& ex, const params& p, int q) {
  const x_layout L = make_x_layout(p, true);
  unsigned char* image = p.xtab + static_cast<std::size_t>(q) * L.tw;
  const fw_chunk ch = chunk_of(p, q);
  // Zeroed first: the regions' 16-byte alignment leaves gaps no table writes, and x blocks copy the
  // whole image (an uninitialised read under compute-sanitizer's initcheck otherwise).
  ex.threads([&](int t) {
    for (std::size_t i = t; i < L.tw; i += k_threads) image[i] = 0;
  });
  ex.sync();
  ex.threads([&](int t) { x_tables(p, L, image, ch, t); });
  ex.sync();  // x_matrices reads the roots other threads wrote (global memory, this block's)
  ex.threads([&](int t) { x_matrices(p, L, image, t); });
}

/// Copies chunk q's table image into shared memory (16-byte copies: the layout's regions are
/// 16-byte aligned), completed by this thread's wait; the caller's barrier publishes it.
FB_HOST_DEVICE void x_load_tables(const params& p, const x_layout& L, unsigned char* smem, int q, int t) {
  const float* image = reinterpret_cast<const float*>(p.xtab + static_cast<std::size_t>(q) * L.tw);
  float* dst = at<float>(smem, 0);
  for (std::size_t i = t; i < L.tw / 16; i += k_threads) arch::cp_async_16(dst + 4 * i, image + 4 * i);
  arch::cp_async_wait_all();
}

/// Stages input rows [r0, r0 + nr) of the (b, ci) volume (rows are (d, h), contiguous in x) into
/// shared memory with a padded row stride W + 1 (odd: a warp's threads, one row each, hit distinct
/// banks in the w-stage). Asynchronous copies, all of a thread's in flight at once.
FB_HOST_DEVICE void x_stage_rows(const params& p, const x_layout& L, unsigned char* smem, const float* xvol, int64_t r0,
                                 int nr, int t) {
  float* xs = at<float>(smem, L.rows_or_th);
  const float* src = xvol + r0 * p.W;
  if (k_threads % p.W == 0) {
    // W divides the block (W = 32 at the default): thread t copies column t % W of every
    // (k_threads / W)-th row, so its source and destination step by constants.
    // Four copies per step from one source pointer (constant offsets), then the rest one by one.
    const int n = nr * p.W;
    const int ds = k_threads / p.W * (p.W + 1);
    float* dst = xs + (t / p.W) * (p.W + 1) + t % p.W;
    int i = t;
    for (; i + 3 * k_threads < n; i += 4 * k_threads, dst += 4 * ds) {
      const float* s4 = src + i;
      arch::cp_async_4(dst, s4);
      arch::cp_async_4(dst + ds, s4 + k_threads);
      arch::cp_async_4(dst + 2 * ds, s4 + 2 * k_threads);
      arch::cp_async_4(dst + 3 * ds, s4 + 3 * k_threads);
    }
    for (; i < n; i += k_threads, dst += ds) arch::cp_async_4(dst, src + i);
    arch::cp_async_wait_all();
    return;
  }
  int rr = t / p.W;  // i = rr * W + w, stepped rather than divided
  int w = t - rr * p.W;
  const int step_r = k_threads / p.W;
  const int step_w = k_threads - step_r * p.W;
  for (int i = t; i < nr * p.W; i += k_threads) {
    arch::cp_async_4(xs + rr * (p.W + 1) + w, src + i);
    rr += step_r;
    w += step_w;
    if (w >= p.W) {
      w -= p.W;
      ++rr;
    }
  }
  arch::cp_async_wait_all();
}

/// Thread t's staged row: its fp64 sum into red[t] (0 past the slab), and into the thread's share of
/// S[b, ci] in chunk 0.
/// With w_stage_rows slabs staged, thread t takes row t of each (slab order, as if staged one by one); red[t]
/// gets the first slab's. Only chunk 0 needs the sums past the first slab.
FB_HOST_DEVICE void x_row_sums(const params& p, const x_layout& L, unsigned char* smem, int nr, bool with_sum,
                               bool first, int t, x_state& st) {
  double s0 = 0.0;
  for (int q = 0; q < p.w_stage_rows; ++q) {
    const int rr = q * p.slab_rows + t;
    if (t >= p.slab_rows || rr >= nr || !(with_sum || (first && q == 0))) continue;
    double s = 0.0;
    const float* row = at<float>(smem, L.rows_or_th) + rr * (p.W + 1);
    for (int w = 0; w < p.W; ++w) s += static_cast<double>(row[w]);
    if (with_sum) st.sum += s;
    if (q == 0) s0 = s;
  }
  at<double>(smem, L.reduction)[t] = s0;
}

/// red[k_threads + i] = red[32 i .. 32 i + 31] summed in order (8 threads).
FB_HOST_DEVICE void x_sum_warps(const x_layout& L, unsigned char* smem, int t) {
  if (t >= k_threads / 32) return;
  double* red = at<double>(smem, L.reduction);
  double s = 0.0;
  for (int i = 0; i < 32; ++i) s += red[32 * t + i];
  red[k_threads + t] = s;
}

/// The 8 partial sums of red in order.
FB_HOST_DEVICE double x_block_sum(const x_layout& L, unsigned char* smem) {
  const double* red = at<double>(smem, L.reduction) + k_threads;
  double s = 0.0;
  for (int i = 0; i < k_threads / 32; ++i) s += red[i];
  return s;
}

/// Thread t owns staged row t: its w-stage (real -> complex) for the chunk's columns,
/// Tw[row][j] = sum_w (x[row][w] - c) e^{-2pi i w fw_j / W'}. In the first slab every thread first
/// takes the centring constant c = the mean of that slab (from the row sums), rounded to fp32: for
/// offset data (x ~ 100 + u) the transform then sums values of size u, and the constant's spectrum
/// c * box is added back exactly at the end (x_d_stage), so no fp32 sum cancels a large constant
/// (without it, the centred variance lost ~1e-5 relative at +100). Any c is exact algebra; the
/// mean of the first slab is merely a good one, and for x ~ c the subtraction is exact (Sterbenz).
FB_HOST_DEVICE void x_rows(const params& p, const x_layout& L, unsigned char* smem, int64_t r0, int nr, int nr_first,
                           bool first, int t, x_state& st) {
  if (first)
    st.c = static_cast<float>(x_block_sum(L, smem) / (static_cast<double>(nr_first) * static_cast<double>(p.W)));
  if (t >= p.slab_rows || t >= nr) return;
  // w_stage_rows = 2 (second row present): both rows share every twiddle load (the w-stage was bound by
  // shared-memory bandwidth: 8 broadcast twiddles per 16 FMAs); each row's sums are unchanged.
  const int nrow = (p.w_stage_rows == 2 && p.slab_rows + t < nr) ? 2 : 1;
  const float* row0 = at<float>(smem, L.rows_or_th) + t * (p.W + 1);
  const float* row1 = row0 + static_cast<int64_t>(p.slab_rows) * (p.W + 1);
  const float c = st.c;
  const cplx2* tww = at<cplx2>(smem, L.tww);
  cplx acc0[k_jmax], acc1[k_jmax];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int j = 0; j < k_jmax; ++j) acc0[j] = acc1[j] = cplx{0.0f, 0.0f};
  if (nrow == 2) {
    for (int w = 0; w < p.W; ++w) {
      const float xv0 = row0[w] - c;
      const float xv1 = row1[w] - c;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int jj = 0; jj < k_jmax / 2; ++jj) {
        const cplx2 tv = tww[w * (k_jmax / 2) + jj];
        acc0[2 * jj].re = math::dft::ffma(xv0, tv.a.re, acc0[2 * jj].re);
        acc0[2 * jj].im = math::dft::ffma(xv0, tv.a.im, acc0[2 * jj].im);
        acc0[2 * jj + 1].re = math::dft::ffma(xv0, tv.b.re, acc0[2 * jj + 1].re);
        acc0[2 * jj + 1].im = math::dft::ffma(xv0, tv.b.im, acc0[2 * jj + 1].im);
        acc1[2 * jj].re = math::dft::ffma(xv1, tv.a.re, acc1[2 * jj].re);
        acc1[2 * jj].im = math::dft::ffma(xv1, tv.a.im, acc1[2 * jj].im);
        acc1[2 * jj + 1].re = math::dft::ffma(xv1, tv.b.re, acc1[2 * jj + 1].re);
        acc1[2 * jj + 1].im = math::dft::ffma(xv1, tv.b.im, acc1[2 * jj + 1].im);
      }
    }
  } else {
    for (int w = 0; w < p.W; ++w) {
      const float xv0 = row0[w] - c;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int jj = 0; jj < k_jmax / 2; ++jj) {
        const cplx2 tv = tww[w * (k_jmax / 2) + jj];
        acc0[2 * jj].re = math::dft::ffma(xv0, tv.a.re, acc0[2 * jj].re);
        acc0[2 * jj].im = math::dft::ffma(xv0, tv.a.im, acc0[2 * jj].im);
        acc0[2 * jj + 1].re = math::dft::ffma(xv0, tv.b.re, acc0[2 * jj + 1].re);
        acc0[2 * jj + 1].im = math::dft::ffma(xv0, tv.b.im, acc0[2 * jj + 1].im);
      }
    }
  }
  for (int q = 0; q < nrow; ++q) {
    const int64_t r = r0 + static_cast<int64_t>(q) * p.slab_rows + t;
    const int64_t d = r / p.H;
    cplx2* dst = reinterpret_cast<cplx2*>(at<cplx>(smem, L.tw) + d * x_tw_plane(p) + (r - d * p.H) * p.chunk_columns);
    const cplx* acc = q == 0 ? acc0 : acc1;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int jj = 0; jj < k_jmax / 2; ++jj)
      if (2 * jj < p.chunk_columns) dst[jj] = cplx2{acc[2 * jj], acc[2 * jj + 1]};
  }
}

/// a * b with explicit fused operations.
FB_HOST_DEVICE cplx cmul(cplx a, cplx b) {
  return {math::dft::ffma(a.re, b.re, -(a.im * b.im)), math::dft::ffma(a.re, b.im, a.im * b.re)};
}

/// v + c * box (the constant's spectrum added back).
FB_HOST_DEVICE cplx add_box(cplx v, float c, cplx box) {
  return {math::dft::ffma(c, box.re, v.re), math::dft::ffma(c, box.im, v.im)};
}

/// One mirrored-pair DFT accumulation over a line: for input v and twiddle t = e^{-i theta},
///   sum v t       = (A1 - A2, A3 + A4)   (frequency f)
///   sum v conj(t) = (A1 + A2, A4 - A3)   (frequency -f)
/// with A1 = sum v.re t.re, A2 = sum v.im t.im, A3 = sum v.re t.im, A4 = sum v.im t.re: four
/// products give both outputs. k_jt columns at a time.
struct pair_acc {
  float a1[k_jt], a2[k_jt], a3[k_jt], a4[k_jt];
  FB_HOST_DEVICE void zero() {
    for (int j = 0; j < k_jt; ++j) a1[j] = a2[j] = a3[j] = a4[j] = 0.0f;
  }
  /// Adds v[0..k_jt) * t (v: 16-byte aligned, two cplx2).
  FB_HOST_DEVICE void add(const cplx2* v, cplx tv) {
    const cplx2 v01 = v[0];
    const cplx2 v23 = v[1];
    const cplx vv[k_jt] = {v01.a, v01.b, v23.a, v23.b};
    add(vv, tv);
  }
  /// Adds vv[0..k_jt) * t.
  FB_HOST_DEVICE void add(const cplx (&vv)[k_jt], cplx tv) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int j = 0; j < k_jt; ++j) {
      a1[j] = math::dft::ffma(vv[j].re, tv.re, a1[j]);
      a2[j] = math::dft::ffma(vv[j].im, tv.im, a2[j]);
      a3[j] = math::dft::ffma(vv[j].re, tv.im, a3[j]);
      a4[j] = math::dft::ffma(vv[j].im, tv.re, a4[j]);
    }
  }
  FB_HOST_DEVICE cplx plus(int j) const { return {a1[j] - a2[j], a3[j] + a4[j]}; }
  FB_HOST_DEVICE cplx minus(int j) const { return {a1[j] + a2[j], a4[j] - a3[j]}; }
};

/// The k_jt values at v (16-byte aligned: two cplx2 loads).
FB_HOST_DEVICE void load_jt(const cplx* v, cplx (&vv)[k_jt]) {
  const cplx2 v01 = reinterpret_cast<const cplx2*>(v)[0];
  const cplx2 v23 = reinterpret_cast<const cplx2*>(v)[1];
  vv[0] = v01.a;
  vv[1] = v01.b;
  vv[2] = v23.a;
  vv[3] = v23.b;
}

/// h-stage: Th[d][fh][j] = sum_h Tw[d, h][j] e^{-2pi i h fh / H'}. Item (d, column tile jt, group
/// fq of k_fh pairs), d fastest: a thread's k_jt x k_fh register tile reuses each Tw load for k_fh
/// pairs; the lanes of a warp read distinct planes (padded: no bank conflicts) and the same
/// twiddles (broadcast). Each output sums h = 0, 1, ... in order.
FB_HOST_DEVICE void x_h_stage(const params& p, const x_layout& L, unsigned char* smem, fw_chunk ch, int t) {
  const cplx* mh = at<cplx>(smem, L.mh);
  const cplx* tw = at<cplx>(smem, L.tw);
  cplx* th = at<cplx>(smem, L.rows_or_th);
  const int njt = (ch.n_columns + k_jt - 1) / k_jt;
  const int nfh = x_nfh(p);
  const int nfq = nfh / k_fh;
  const int items = njt * p.D * nfq;
  const int64_t tw_plane = x_tw_plane(p), th_row = x_th_row(p), th_plane = x_th_plane(p);
  for (int item = t; item < items; item += k_threads) {
    const int d = item % p.D;
    const int rest = item / p.D;
    const int jt = rest % njt;
    const int fq = rest / njt;
    pair_acc acc[k_fh];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int f = 0; f < k_fh; ++f) acc[f].zero();
    const cplx* src = tw + d * tw_plane + jt * k_jt;  // + h * chunk_columns
    const cplx* tv = mh + fq * k_fh;                 // + h * nfh
    for (int h = 0; h < p.H; ++h) {
      cplx vv[k_jt];
      load_jt(src + static_cast<int64_t>(h) * p.chunk_columns, vv);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int f = 0; f < k_fh; ++f) acc[f].add(vv, tv[h * nfh + f]);
    }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int f = 0; f < k_fh; ++f) {
      const int fh = fq * k_fh + f;
      if (fh >= p.n_h_pairs) break;
      const int fh2 = fh == 0 ? 0 : p.dft_h - fh;
      cplx2* dst = reinterpret_cast<cplx2*>(th + d * th_plane + fh * th_row + jt * k_jt);
      dst[0] = cplx2{acc[f].plus(0), acc[f].plus(1)};
      dst[1] = cplx2{acc[f].plus(2), acc[f].plus(3)};
      if (fh2 != fh) {
        cplx2* dst2 = reinterpret_cast<cplx2*>(th + d * th_plane + fh2 * th_row + jt * k_jt);
        dst2[0] = cplx2{acc[f].minus(0), acc[f].minus(1)};
        dst2[1] = cplx2{acc[f].minus(2), acc[f].minus(3)};
      }
    }
  }
}

/// d-stage: X[fd, fh][ci][b][fw0 + j] = sum_d Th[d][fh][j] e^{-2pi i d fd / D'} + c box(fd, fh, fw).
/// Item (fh, column tile jt, group fq of k_fd pairs), fh fastest: the lanes read distinct rows
/// (padded: no bank conflicts) and the same twiddles; both mirrored planes fd and D' - fd are
/// written to global memory. Each output sums d = 0, 1, ... in order.
FB_HOST_DEVICE void x_d_stage(const params& p, const x_layout& L, unsigned char* smem, fw_chunk ch, int64_t ci,
                              int64_t b, int t, float c) {
  const cplx* md = at<cplx>(smem, L.md);
  const cplx* boxd = at<cplx>(smem, L.boxd);
  const cplx* boxh = at<cplx>(smem, L.boxh);
  const cplx* boxw = at<cplx>(smem, L.boxw);
  const cplx* th = at<cplx>(smem, L.rows_or_th);
  const int njt = (ch.n_columns + k_jt - 1) / k_jt;
  const int nfd = x_nfd(p);
  const int nfq = nfd / k_fd;
  const int items = njt * p.dft_h * nfq;
  const int64_t th_row = x_th_row(p), th_plane = x_th_plane(p);
  const int64_t row_stride = p.c_in * p.B * p.n_fw;
  for (int item = t; item < items; item += k_threads) {
    const int fh = item % p.dft_h;
    const int rest = item / p.dft_h;
    const int jt = rest % njt;
    const int fq = rest / njt;
    pair_acc acc[k_fd];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int f = 0; f < k_fd; ++f) acc[f].zero();
    const cplx* src = th + fh * th_row + jt * k_jt;  // + d * th_plane
    const cplx* tv = md + fq * k_fd;                 // + d * nfd
    for (int d = 0; d < p.D; ++d) {
      cplx vv[k_jt];
      load_jt(src + d * th_plane, vv);
      const cplx2 t01 = reinterpret_cast<const cplx2*>(tv + d * nfd)[0];
      const cplx2 t23 = reinterpret_cast<const cplx2*>(tv + d * nfd)[1];
      acc[0].add(vv, t01.a);
      acc[1].add(vv, t01.b);
      acc[2].add(vv, t23.a);
      acc[3].add(vv, t23.b);
    }
    const int64_t col = ((ci * p.B + b) * p.n_fw) + ch.first_fw + jt * k_jt;  // within a row: [ci][b][fw]
    const cplx bh = boxh[fh];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int f = 0; f < k_fd; ++f) {
      const int fd = fq * k_fd + f;
      if (fd >= p.n_d_pairs) break;
      const int fd2 = fd == 0 ? 0 : p.dft_d - fd;
      cplx* dst = p.X + (static_cast<int64_t>(fd) * p.dft_h + fh) * row_stride + col;
      cplx* dst2 = p.X + (static_cast<int64_t>(fd2) * p.dft_h + fh) * row_stride + col;
      const cplx bdh = cmul(boxd[fd], bh);
      const cplx bdh2 = cmul(boxd[fd2], bh);
      for (int j = 0; j < k_jt; ++j) {
        if (jt * k_jt + j >= ch.n_columns) break;
        dst[j] = add_box(acc[f].plus(j), c, cmul(bdh, boxw[jt * k_jt + j]));
        if (fd2 != fd) dst2[j] = add_box(acc[f].minus(j), c, cmul(bdh2, boxw[jt * k_jt + j]));
      }
    }
  }
}

/// The block's S[b, ci]: the threads' fp64 shares, 32 at a time by 8 threads (x_sum_warps), then
/// those 8 in order.
FB_HOST_DEVICE void x_sum_store(const x_layout& L, unsigned char* smem, int t, const x_state& st) {
  at<double>(smem, L.reduction)[t] = st.sum;
}
FB_HOST_DEVICE void x_sum_final(const params& p, const x_layout& L, unsigned char* smem, int64_t ci, int64_t b, int t) {
  if (t == 0) p.S[b * p.c_in + ci] = x_block_sum(L, smem);
}

/// Blocks of x_program: (ci, b, chunk), chunk fastest, then b (neighbouring blocks write
/// neighbouring X columns), then ci. Without the DFT (eval): one block per (ci, b), sums only.
FB_HOST_DEVICE int64_t x_blocks(const params& p, bool dft) { return p.c_in * p.B * (dft ? p.n_fw_chunks : 1); }

template <class Ex>
FB_HOST_DEVICE void x_program(Ex& ex, const params& p, int64_t block, unsigned char* smem, bool dft) {
  static_assert(exec::is_block_executor_v<Ex, x_state>, "x_program needs a block executor with x_state");
  const x_layout L = make_x_layout(p, dft);
  const int nq = dft ? p.n_fw_chunks : 1;
  const int q = static_cast<int>(block % nq);
  const int64_t cb = block / nq;
  const int64_t ci = cb / p.B;
  const int64_t b = cb % p.B;
  const float* xvol = p.x + (b * p.c_in + ci) * (static_cast<int64_t>(p.D) * p.H * p.W);
  const fw_chunk ch = chunk_of(p, q);
  const bool with_sum = q == 0;
  ex.threads([&](int t, x_state& st) {
    st.sum = 0.0;
    st.c = 0.0f;
    if (dft) x_load_tables(p, L, smem, q, t);
  });
  ex.sync();
  const int64_t rows = static_cast<int64_t>(p.D) * p.H;
  const int nr_first = static_cast<int>(min64(p.slab_rows, rows));  // the centring slab
  const int64_t group = static_cast<int64_t>(p.w_stage_rows) * p.slab_rows;  // rows staged at once
  for (int64_t r0 = 0; r0 < rows; r0 += group) {
    const int nr = static_cast<int>(min64(group, rows - r0));
    ex.threads([&](int t, x_state&) {
      x_stage_rows(p, L, smem, xvol, r0, nr, t);
    });
    ex.sync();
    ex.threads([&](int t, x_state& st) { x_row_sums(p, L, smem, nr, with_sum, dft && r0 == 0, t, st); });
    ex.sync();
    if (dft) {
      if (r0 == 0) {
        ex.threads([&](int t, x_state&) { x_sum_warps(L, smem, t); });
        ex.sync();
      }
      ex.threads([&](int t, x_state& st) { x_rows(p, L, smem, r0, nr, nr_first, r0 == 0, t, st); });
      ex.sync();
    }
  }
  if (dft) {
    ex.threads([&](int t, x_state&) { x_h_stage(p, L, smem, ch, t); });
    ex.sync();
    ex.threads([&](int t, x_state& st) { x_d_stage(p, L, smem, ch, ci, b, t, st.c); });
  }
  if (with_sum) {
    ex.threads([&](int t, x_state& st) { x_sum_store(L, smem, t, st); });
    ex.sync();
    ex.threads([&](int t, x_state&) { x_sum_warps(L, smem, t); });
    ex.sync();
    ex.threads([&](int t, x_state&) { x_sum_final(p, L, smem, ci, b, t); });
  }
}

}  // namespace fb::fused::convt3d_scale_bn_gap::detail
