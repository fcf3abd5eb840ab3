#pragma once
/// The block programs of convt3d_scale_bn_gap (KernelBench #77), written once: each CUDA kernel is
/// `program(device executor, params, blockIdx.x, shared memory)` and the host executor runs the same
/// program for every block with a host executor that calls each phase for threads 0..255 in turn
/// (a barrier is then a no-op: every thread finished the phase before the next one starts). So the
/// CPU tests run the kernels' own tiling, indexing, shared-memory layouts and summation orders; only
/// scheduling differs, and no result depends on it (no atomics, every partial has one owner).
///
/// An executor `Ex` provides
///   ex.each_thread(f)  calls f(thread index t, State& thread's state) for the block's threads
///   ex.sync()          __syncthreads() on the device, nothing on the host
/// where State is the program's per-thread register state (registers on the device, an array of
/// 256 on the host). Global -> shared copies go through copy8_async / copy4_async (cp.async on the
/// device, completed by copy_wait* in the same thread before the next barrier; a plain copy on the
/// host), so the device can keep many in flight without registers.
///
/// Kernels, in launch order (training; eval runs prep without H1, x_program without the DFT, reduce
/// without m2, finish):
///   prep     Wsum[ci, c] (fp64) and H1[ci][fd][th][tw][c] = sum_td w[ci, c, td, th, tw] e^{-2pi i td fd/D'}
///            for fd in [0, D'/2] (the weights' depth DFT; the other half is its conjugate).
///   gspec    G[ci][pair][tw][c] = sum_th H1[ci][fd][th][tw][c] e^{-2pi i th fh/H'} for every row
///            pair (fd, fh) (the weights' height DFT), once.
///   x        per (ci, b, fw-chunk): x's 3-D DFT on the n' grid, half spectrum along w, separable and
///            direct (w: real -> complex; h and d: complex, two mirrored outputs per four products),
///            of x - c (c: the block's first-slab mean) plus c times the box spectrum (no fp32 sum
///            cancels an offset), into X[row = fd*H' + fh][ci][b][fw]; chunk 0 also sums x in fp64
///            (S[b, ci]).
///   gemm     per (8 units, 32 output channels, a batch tile): Z = sum_ci X W, accumulated in
///            registers, and sum over the units of w_f |Z|^2 (fp64) -> partial[group][b][c].
///            W(f) is never stored: per input-channel chunk the block copies the X and G tiles of
///            its units and row pairs into shared memory (double-buffered, the next chunk's copies
///            in flight during this chunk's products), and each thread finishes W(row, fw) and
///            W(conj row, fw) from G and its own twiddles (4 products per tap).
///   reduce   m2[b, c] = scale^2/N' * sum over groups (fixed slices, fixed order); ybar[b, c].
///   finish   per channel: batch statistics, out, running buffers, num_batches_tracked.
#include <cstddef>
#include <cstdint>

#include "fused/arch/host_device.cuh"
#include "fused/arch/read_only.cuh"
#include "fused/math/batch_norm.cuh"
#include "fused/math/dft.cuh"

namespace fb::fused::convt3d_scale_bn_gap::detail {

using dft::cplx;
using dft::cplx2;

constexpr int k_threads = 256;  ///< threads of every block
constexpr int k_units = 8;      ///< gemm: frequency units per block, one per warp
constexpr int k_lanes = 32;     ///< gemm: output channels per block, one per lane
constexpr int k_jmax = 8;       ///< x: fw columns of the w-stage register tile (chunks hold <= 8)
constexpr int k_jt = 4;         ///< x: fw columns per thread item of the h- and d-stages
constexpr int k_fh = 3;         ///< x: fh pairs per h-stage item (register tile k_jt x k_fh)
constexpr int k_fd = 4;         ///< x: fd pairs per d-stage item (register tile k_jt x k_fd)
static_assert(k_jt == 4 && k_fd == 4, "x_d_stage and load_jt spell out 4 columns and 4 pairs");
constexpr int k_slices = 8;     ///< reduce: warps, each summing 4 interleaved slices of the groups
constexpr int k_max_tb = 16;    ///< gemm: largest batch tile (accumulators: 2 rows x tb complex)

/// Everything the kernels read: pointers, sizes, the derived decomposition (fused/
/// convt3d_scale_bn_gap/plan.h fills it) and the scalars.
struct params {
  // inputs, parameters, in-place buffers, output
  const float* x;
  const float* weight;
  const float* conv_bias;
  const float* gamma;
  const float* beta;
  float* running_mean;
  float* running_var;
  int64_t* num_batches_tracked;
  float* out;
  // workspace
  double* S;        ///< [B][C_in] spatial sums of x
  double* wsum;     ///< [C_in][C_out] tap sums of w
  double* ybar;     ///< [B][C_out]
  double* m2;       ///< [B][C_out] centred sums of squares (training)
  double* partial;  ///< [n_groups][B][C_out] (training)
  cplx* h1;         ///< [C_in][NDP][k][k][C_out] (training)
  cplx* X;          ///< [D'*H'][C_in][B][Fw] (training)
  cplx* G;          ///< [C_in][pairs.count][k][C_out] (training)
  // sizes
  int64_t B, Ci, Co;
  int D, H, W, k;
  int Nd, Nh, Nw;  ///< DFT sizes = conv output sizes n + k - 1
  int Fw;          ///< half spectrum along w: Nw/2 + 1
  int NDP, NHP;    ///< Nd/2 + 1, Nh/2 + 1 (mirrored output pairs of the d- and h-stages)
  int64_t n_out;   ///< N' = Nd*Nh*Nw
  // gemm decomposition
  dft::row_pairs pairs;
  int64_t n_units;   ///< pairs.count * Fw: unit u = (pair u / Fw, column u % Fw)
  int64_t n_groups;  ///< ceil(n_units / k_units)
  int n_ctiles;      ///< ceil(C_out / k_lanes)
  int n_btiles;      ///< ceil(B / tb)
  int tb;            ///< batch tile (1, 2, 4, 8 or 16), the kernel's template argument
  int kc;            ///< input channels per staged chunk
  int npb;           ///< row pairs a group can touch (shared-memory rows of G)
  // x decomposition
  int js;          ///< fw columns per chunk (4 or 8): row stride of the w- and h-stage tiles
  int n_fwchunks;  ///< ceil(Fw / js)
  int slab_rows;   ///< input rows (d, h) per thread row slot, <= k_threads
  int xr;          ///< x: rows per thread in the w-stage (1 or 2): xr slabs are staged at once
  // scalars
  double scale, eps, momentum;
  bool training;
};

/// Read-only loads of data written before the kernel started (fused/arch/read_only.cuh; here
/// also for complex values).
using fb::fused::load_ro;
FB_HOST_DEVICE cplx load_ro(const cplx* p) {
#if defined(__CUDA_ARCH__)
  const float2 v = __ldg(reinterpret_cast<const float2*>(p));
  return {v.x, v.y};
#else
  return *p;
#endif
}

/// dst = (ok ? *src : 0) for an 8-byte value, global -> shared. On the device an asynchronous copy
/// (cp.async, zero-filled when !ok: src is then not read), completed by copy_wait() in the same
/// thread before the next barrier; on the host a plain copy. No registers hold the value, so a
/// thread can have all of its copies in flight at once.
FB_HOST_DEVICE void copy8_async(cplx* dst, const cplx* src, bool ok) {
#if defined(__CUDA_ARCH__)
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(d), "l"(src), "r"(ok ? 8 : 0) : "memory");
#else
  *dst = ok ? *src : cplx{0.0f, 0.0f};
#endif
}
/// dst = *src for a 4-byte value, global -> shared, likewise asynchronous on the device.
FB_HOST_DEVICE void copy4_async(float* dst, const float* src) {
#if defined(__CUDA_ARCH__)
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src) : "memory");
#else
  *dst = *src;
#endif
}
FB_HOST_DEVICE void copy_wait() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}
/// Closes the thread's current group of asynchronous copies.
FB_HOST_DEVICE void copy_commit() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
/// Waits for all of the thread's copy groups but the most recently committed one.
FB_HOST_DEVICE void copy_wait_all_but_last() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
#endif
}

FB_HOST_DEVICE std::size_t align16(std::size_t n) { return (n + 15) & ~static_cast<std::size_t>(15); }
FB_HOST_DEVICE int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

template <class T>
FB_HOST_DEVICE T* at(unsigned char* smem, std::size_t off) {
  return reinterpret_cast<T*>(smem + off);
}

/// No per-thread state.
struct no_state {};

// =============================================================================================
// prep: Wsum and H1
// =============================================================================================

/// Blocks of the prep kernel that compute Wsum (the rest compute H1 in training).
FB_HOST_DEVICE int64_t prep_wsum_blocks(const params& p) { return (p.Ci * p.Co + k_threads - 1) / k_threads; }
FB_HOST_DEVICE int64_t prep_h1_items(const params& p) {
  return p.training ? p.Ci * p.k * p.k * p.Co : 0;
}
FB_HOST_DEVICE int64_t prep_blocks(const params& p) {
  return prep_wsum_blocks(p) + (prep_h1_items(p) + k_threads - 1) / k_threads;
}
FB_HOST_DEVICE std::size_t prep_smem(const params& p) { return align16(static_cast<std::size_t>(p.Nd) * sizeof(cplx)); }

/// Wsum[ci, c] = sum over the k^3 taps of w[ci, c] in tap order (fp64: exact for k^3 <= 2^20 or so).
FB_HOST_DEVICE void prep_wsum(const params& p, int64_t block, int t) {
  const int64_t i = block * k_threads + t;  // ci * C_out + c
  if (i >= p.Ci * p.Co) return;
  const int64_t taps = static_cast<int64_t>(p.k) * p.k * p.k;
  const float* w = p.weight + i * taps;
  double s = 0.0;
  for (int64_t tap = 0; tap < taps; ++tap) s += static_cast<double>(load_ro(w + tap));
  p.wsum[i] = s;
}

FB_HOST_DEVICE void prep_tables(const params& p, unsigned char* smem, int t) {
  cplx* twd = at<cplx>(smem, 0);
  for (int m = t; m < p.Nd; m += k_threads) twd[m] = dft::unit_root(m, p.Nd);
}

/// Taps held in registers by the loops over a kernel dimension (prep's depth taps, the gemm's G
/// load batches).
constexpr int k_tap_batch = 8;

/// H1 item (ci, th, tw, c): the depth DFT of the k taps w[ci, c, :, th, tw] at fd = 0..NDP-1.
/// The taps are read once into registers (k <= 8; lanes are channels, k^3 floats apart, so each
/// read touches 32 lines: re-reading them for every fd kept L1 busy for the whole kernel).
FB_HOST_DEVICE void prep_h1(const params& p, unsigned char* smem, int64_t h1_block, int t) {
  const int64_t i = h1_block * k_threads + t;
  if (i >= prep_h1_items(p)) return;
  const cplx* twd = at<cplx>(smem, 0);
  const int64_t k = p.k;
  const int64_t c = i % p.Co;
  int64_t rest = i / p.Co;
  const int64_t tw = rest % k;
  rest /= k;
  const int64_t th = rest % k;
  const int64_t ci = rest / k;
  const float* w = p.weight + (ci * p.Co + c) * k * k * k + th * k + tw;  // + td * k * k
  cplx* dst = p.h1 + ((ci * p.NDP * k + th) * k + tw) * p.Co + c;        // + fd * k * k * C_out
  const int64_t fd_stride = k * k * p.Co;
  if (p.k <= k_tap_batch) {
    float wv[k_tap_batch];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int td = 0; td < k_tap_batch; ++td) wv[td] = td < p.k ? load_ro(w + td * k * k) : 0.0f;
    for (int fd = 0; fd < p.NDP; ++fd) {
      cplx acc{0.0f, 0.0f};
      int m = 0;  // (td * fd) mod Nd
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int td = 0; td < k_tap_batch; ++td) {
        if (td < p.k) {
          const cplx tv = twd[m];
          acc.re = dft::ffma(wv[td], tv.re, acc.re);
          acc.im = dft::ffma(wv[td], tv.im, acc.im);
          m += fd;
          if (m >= p.Nd) m -= p.Nd;
        }
      }
      dst[fd * fd_stride] = acc;
    }
    return;
  }
  for (int fd = 0; fd < p.NDP; ++fd) {
    cplx acc{0.0f, 0.0f};
    int m = 0;  // (td * fd) mod Nd
    for (int td = 0; td < p.k; ++td) {
      const float wv = load_ro(w + td * k * k);
      const cplx tv = twd[m];
      acc.re = dft::ffma(wv, tv.re, acc.re);
      acc.im = dft::ffma(wv, tv.im, acc.im);
      m += fd;
      if (m >= p.Nd) m -= p.Nd;
    }
    dst[fd * fd_stride] = acc;
  }
}

template <class Ex>
FB_HOST_DEVICE void prep_program(Ex& ex, const params& p, int64_t block, unsigned char* smem) {
  const int64_t nws = prep_wsum_blocks(p);
  if (block < nws) {
    ex.each_thread([&](int t, no_state&) { prep_wsum(p, block, t); });
    return;
  }
  ex.each_thread([&](int t, no_state&) { prep_tables(p, smem, t); });
  ex.sync();
  ex.each_thread([&](int t, no_state&) { prep_h1(p, smem, block - nws, t); });
}

// =============================================================================================
// x: the input spectrum and the spatial sums
// =============================================================================================

/// Shared-memory layout of x_program (byte offsets). The staged x rows and the h-stage output Th
/// share one region: the rows are dead once the w-stage is done.
///   Tw[d][h][j]:  plane stride x_tw_plane (H*js + 2: consecutive planes start 4 banks apart, so the
///                 h-stage's lanes, one plane each, read without bank conflicts)
///   Th[d][fh][j]: row stride x_th_row (js + 2: the d-stage's lanes, one row fh each, read without
///                 conflicts) and plane stride x_th_plane (likewise for the h-stage's writes)
///   mh[h][f]:     e^{-2pi i h f / H'} for f < x_nfh (zero past NHP): the h-stage's k_fh twiddles
///                 of a step are adjacent and the same for the whole warp
///   md[d][f]:     e^{-2pi i d f / D'} for f < x_nfd (zero past NDP), likewise for the d-stage
struct x_layout {
  std::size_t twd, twh, tww, boxd, boxh, boxw, mh, md, tw, uni, red, total;
};

FB_HOST_DEVICE int x_nfh(const params& p) { return (p.NHP + k_fh - 1) / k_fh * k_fh; }
FB_HOST_DEVICE int x_nfd(const params& p) { return (p.NDP + k_fd - 1) / k_fd * k_fd; }
FB_HOST_DEVICE int64_t x_tw_plane(const params& p) { return static_cast<int64_t>(p.H) * p.js + 2; }
FB_HOST_DEVICE int64_t x_th_row(const params& p) { return p.js + 2; }
FB_HOST_DEVICE int64_t x_th_plane(const params& p) {
  const int64_t n = static_cast<int64_t>(p.Nh) * x_th_row(p);  // even
  return n % 4 == 0 ? n + 2 : n;
}

/// Bytes of the region that holds the staged x rows, then Th.
FB_HOST_DEVICE std::size_t x_union_bytes(const params& p, bool dft) {
  const std::size_t rows = static_cast<std::size_t>(p.xr) * static_cast<std::size_t>(p.slab_rows) *
                           static_cast<std::size_t>(p.W + 1) * sizeof(float);
  const std::size_t th =
      dft ? static_cast<std::size_t>(p.D) * static_cast<std::size_t>(x_th_plane(p)) * sizeof(cplx) : 0;
  return align16(rows > th ? rows : th);
}

FB_HOST_DEVICE x_layout make_x_layout(const params& p, bool dft) {
  x_layout L{};
  std::size_t o = 0;
  L.twd = o;
  o += dft ? align16(static_cast<std::size_t>(p.Nd) * sizeof(cplx)) : 0;
  L.twh = o;
  o += dft ? align16(static_cast<std::size_t>(p.Nh) * sizeof(cplx)) : 0;
  L.tww = o;
  o += dft ? align16(static_cast<std::size_t>(p.W) * k_jmax * sizeof(cplx)) : 0;
  L.boxd = o;
  o += dft ? align16(static_cast<std::size_t>(p.Nd) * sizeof(cplx)) : 0;
  L.boxh = o;
  o += dft ? align16(static_cast<std::size_t>(p.Nh) * sizeof(cplx)) : 0;
  L.boxw = o;
  o += dft ? align16(k_jmax * sizeof(cplx)) : 0;
  L.mh = o;
  o += dft ? align16(static_cast<std::size_t>(p.H) * static_cast<std::size_t>(x_nfh(p)) * sizeof(cplx)) : 0;
  L.md = o;
  o += dft ? align16(static_cast<std::size_t>(p.D) * static_cast<std::size_t>(x_nfd(p)) * sizeof(cplx)) : 0;
  L.tw = o;
  o += dft ? align16(static_cast<std::size_t>(p.D) * static_cast<std::size_t>(x_tw_plane(p)) * sizeof(cplx)) : 0;
  L.uni = o;
  o += x_union_bytes(p, dft);
  L.red = o;
  o += align16((k_threads + k_threads / 32) * sizeof(double));
  L.total = o;
  return L;
}

/// Per-thread state of x_program: the thread's share of S[b, ci], and the block's centring constant.
struct x_state {
  double sum;
  float c;
};

/// The chunk's fw columns: [fw0, fw0 + nj).
struct fw_chunk {
  int fw0;
  int nj;
};
FB_HOST_DEVICE fw_chunk chunk_of(const params& p, int q) {
  const int fw0 = q * p.js;
  const int left = p.Fw - fw0;
  return {fw0, left < p.js ? left : p.js};
}

/// Twiddle tables: e^{-2pi i m/D'}, e^{-2pi i m/H'}, and per input column w the chunk's
/// e^{-2pi i w fw/W'} (zero for columns past the chunk, so the w-stage's fixed tile adds nothing);
/// the box spectra of the three dimensions (dft::box_dft) for the chunk's frequencies.
FB_HOST_DEVICE void x_tables(const params& p, const x_layout& L, unsigned char* smem, fw_chunk ch, int t) {
  cplx* twd = at<cplx>(smem, L.twd);
  cplx* twh = at<cplx>(smem, L.twh);
  cplx* tww = at<cplx>(smem, L.tww);
  cplx* boxd = at<cplx>(smem, L.boxd);
  cplx* boxh = at<cplx>(smem, L.boxh);
  cplx* boxw = at<cplx>(smem, L.boxw);
  for (int m = t; m < p.Nd; m += k_threads) {
    twd[m] = dft::unit_root(m, p.Nd);
    boxd[m] = dft::box_dft(p.D, m, p.Nd);
  }
  for (int m = t; m < p.Nh; m += k_threads) {
    twh[m] = dft::unit_root(m, p.Nh);
    boxh[m] = dft::box_dft(p.H, m, p.Nh);
  }
  for (int j = t; j < k_jmax; j += k_threads)
    boxw[j] = j < ch.nj ? dft::box_dft(p.W, ch.fw0 + j, p.Nw) : cplx{0.0f, 0.0f};
  for (int i = t; i < p.W * k_jmax; i += k_threads) {
    const int w = i / k_jmax;
    const int j = i % k_jmax;
    tww[i] = j < ch.nj ? dft::unit_root((static_cast<int64_t>(w) * (ch.fw0 + j)) % p.Nw, p.Nw) : cplx{0.0f, 0.0f};
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
    mh[i] = f < p.NHP ? twh[static_cast<int>((static_cast<int64_t>(h) * f) % p.Nh)] : cplx{0.0f, 0.0f};
  }
  for (int i = t; i < p.D * nfd; i += k_threads) {
    const int d = i / nfd;
    const int f = i - d * nfd;
    md[i] = f < p.NDP ? twd[static_cast<int>((static_cast<int64_t>(d) * f) % p.Nd)] : cplx{0.0f, 0.0f};
  }
}

/// Stages input rows [r0, r0 + nr) of the (b, ci) volume (rows are (d, h), contiguous in x) into
/// shared memory with a padded row stride W + 1 (odd: a warp's threads, one row each, hit distinct
/// banks in the w-stage). Asynchronous copies, all of a thread's in flight at once.
FB_HOST_DEVICE void x_stage_rows(const params& p, const x_layout& L, unsigned char* smem, const float* xvol, int64_t r0,
                                 int nr, int t) {
  float* xs = at<float>(smem, L.uni);
  const float* src = xvol + r0 * p.W;
  int rr = t / p.W;  // i = rr * W + w, stepped rather than divided
  int w = t - rr * p.W;
  const int step_r = k_threads / p.W;
  const int step_w = k_threads - step_r * p.W;
  for (int i = t; i < nr * p.W; i += k_threads) {
    copy4_async(xs + rr * (p.W + 1) + w, src + i);
    rr += step_r;
    w += step_w;
    if (w >= p.W) {
      w -= p.W;
      ++rr;
    }
  }
  copy_wait();
}

/// Thread t's staged row: its fp64 sum into red[t] (0 past the slab), and into the thread's share of
/// S[b, ci] in chunk 0.
/// With xr slabs staged, thread t takes row t of each (slab order, as if staged one by one); red[t]
/// gets the first slab's. Only chunk 0 needs the sums past the first slab.
FB_HOST_DEVICE void x_row_sums(const params& p, const x_layout& L, unsigned char* smem, int nr, bool with_sum,
                               bool first, int t, x_state& st) {
  double s0 = 0.0;
  for (int q = 0; q < p.xr; ++q) {
    const int rr = q * p.slab_rows + t;
    if (t >= p.slab_rows || rr >= nr || !(with_sum || (first && q == 0))) continue;
    double s = 0.0;
    const float* row = at<float>(smem, L.uni) + rr * (p.W + 1);
    for (int w = 0; w < p.W; ++w) s += static_cast<double>(row[w]);
    if (with_sum) st.sum += s;
    if (q == 0) s0 = s;
  }
  at<double>(smem, L.red)[t] = s0;
}

/// red[k_threads + i] = red[32 i .. 32 i + 31] summed in order (8 threads).
FB_HOST_DEVICE void x_sum_warps(const x_layout& L, unsigned char* smem, int t) {
  if (t >= k_threads / 32) return;
  double* red = at<double>(smem, L.red);
  double s = 0.0;
  for (int i = 0; i < 32; ++i) s += red[32 * t + i];
  red[k_threads + t] = s;
}

/// The 8 partial sums of red in order.
FB_HOST_DEVICE double x_block_sum(const x_layout& L, unsigned char* smem) {
  const double* red = at<double>(smem, L.red) + k_threads;
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
  // xr = 2 (second row present): both rows share every twiddle load (the w-stage was bound by
  // shared-memory bandwidth: 8 broadcast twiddles per 16 FMAs); each row's sums are unchanged.
  const int nrow = (p.xr == 2 && p.slab_rows + t < nr) ? 2 : 1;
  const float* row0 = at<float>(smem, L.uni) + t * (p.W + 1);
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
        acc0[2 * jj].re = dft::ffma(xv0, tv.a.re, acc0[2 * jj].re);
        acc0[2 * jj].im = dft::ffma(xv0, tv.a.im, acc0[2 * jj].im);
        acc0[2 * jj + 1].re = dft::ffma(xv0, tv.b.re, acc0[2 * jj + 1].re);
        acc0[2 * jj + 1].im = dft::ffma(xv0, tv.b.im, acc0[2 * jj + 1].im);
        acc1[2 * jj].re = dft::ffma(xv1, tv.a.re, acc1[2 * jj].re);
        acc1[2 * jj].im = dft::ffma(xv1, tv.a.im, acc1[2 * jj].im);
        acc1[2 * jj + 1].re = dft::ffma(xv1, tv.b.re, acc1[2 * jj + 1].re);
        acc1[2 * jj + 1].im = dft::ffma(xv1, tv.b.im, acc1[2 * jj + 1].im);
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
        acc0[2 * jj].re = dft::ffma(xv0, tv.a.re, acc0[2 * jj].re);
        acc0[2 * jj].im = dft::ffma(xv0, tv.a.im, acc0[2 * jj].im);
        acc0[2 * jj + 1].re = dft::ffma(xv0, tv.b.re, acc0[2 * jj + 1].re);
        acc0[2 * jj + 1].im = dft::ffma(xv0, tv.b.im, acc0[2 * jj + 1].im);
      }
    }
  }
  for (int q = 0; q < nrow; ++q) {
    const int64_t r = r0 + static_cast<int64_t>(q) * p.slab_rows + t;
    const int64_t d = r / p.H;
    cplx2* dst = reinterpret_cast<cplx2*>(at<cplx>(smem, L.tw) + d * x_tw_plane(p) + (r - d * p.H) * p.js);
    const cplx* acc = q == 0 ? acc0 : acc1;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int jj = 0; jj < k_jmax / 2; ++jj)
      if (2 * jj < p.js) dst[jj] = cplx2{acc[2 * jj], acc[2 * jj + 1]};
  }
}

/// a * b with explicit fused operations.
FB_HOST_DEVICE cplx cmul(cplx a, cplx b) {
  return {dft::ffma(a.re, b.re, -(a.im * b.im)), dft::ffma(a.re, b.im, a.im * b.re)};
}

/// v + c * box (the constant's spectrum added back).
FB_HOST_DEVICE cplx add_box(cplx v, float c, cplx box) { return {dft::ffma(c, box.re, v.re), dft::ffma(c, box.im, v.im)}; }

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
      a1[j] = dft::ffma(vv[j].re, tv.re, a1[j]);
      a2[j] = dft::ffma(vv[j].im, tv.im, a2[j]);
      a3[j] = dft::ffma(vv[j].re, tv.im, a3[j]);
      a4[j] = dft::ffma(vv[j].im, tv.re, a4[j]);
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
  cplx* th = at<cplx>(smem, L.uni);
  const int njt = (ch.nj + k_jt - 1) / k_jt;
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
    const cplx* src = tw + d * tw_plane + jt * k_jt;  // + h * js
    const cplx* tv = mh + fq * k_fh;                 // + h * nfh
    for (int h = 0; h < p.H; ++h) {
      cplx vv[k_jt];
      load_jt(src + static_cast<int64_t>(h) * p.js, vv);
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
      if (fh >= p.NHP) break;
      const int fh2 = fh == 0 ? 0 : p.Nh - fh;
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
  const cplx* th = at<cplx>(smem, L.uni);
  const int njt = (ch.nj + k_jt - 1) / k_jt;
  const int nfd = x_nfd(p);
  const int nfq = nfd / k_fd;
  const int items = njt * p.Nh * nfq;
  const int64_t th_row = x_th_row(p), th_plane = x_th_plane(p);
  const int64_t row_stride = p.Ci * p.B * p.Fw;
  for (int item = t; item < items; item += k_threads) {
    const int fh = item % p.Nh;
    const int rest = item / p.Nh;
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
    const int64_t col = ((ci * p.B + b) * p.Fw) + ch.fw0 + jt * k_jt;  // within a row: [ci][b][fw]
    const cplx bh = boxh[fh];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int f = 0; f < k_fd; ++f) {
      const int fd = fq * k_fd + f;
      if (fd >= p.NDP) break;
      const int fd2 = fd == 0 ? 0 : p.Nd - fd;
      cplx* dst = p.X + (static_cast<int64_t>(fd) * p.Nh + fh) * row_stride + col;
      cplx* dst2 = p.X + (static_cast<int64_t>(fd2) * p.Nh + fh) * row_stride + col;
      const cplx bdh = cmul(boxd[fd], bh);
      const cplx bdh2 = cmul(boxd[fd2], bh);
      for (int j = 0; j < k_jt; ++j) {
        if (jt * k_jt + j >= ch.nj) break;
        dst[j] = add_box(acc[f].plus(j), c, cmul(bdh, boxw[jt * k_jt + j]));
        if (fd2 != fd) dst2[j] = add_box(acc[f].minus(j), c, cmul(bdh2, boxw[jt * k_jt + j]));
      }
    }
  }
}

/// The block's S[b, ci]: the threads' fp64 shares, 32 at a time by 8 threads (x_sum_warps), then
/// those 8 in order.
FB_HOST_DEVICE void x_sum_store(const x_layout& L, unsigned char* smem, int t, const x_state& st) {
  at<double>(smem, L.red)[t] = st.sum;
}
FB_HOST_DEVICE void x_sum_final(const params& p, const x_layout& L, unsigned char* smem, int64_t ci, int64_t b, int t) {
  if (t == 0) p.S[b * p.Ci + ci] = x_block_sum(L, smem);
}

/// Blocks of x_program: (ci, b, chunk), chunk fastest, then b (neighbouring blocks write
/// neighbouring X columns), then ci. Without the DFT (eval): one block per (ci, b), sums only.
FB_HOST_DEVICE int64_t x_blocks(const params& p, bool dft) { return p.Ci * p.B * (dft ? p.n_fwchunks : 1); }

template <class Ex>
FB_HOST_DEVICE void x_program(Ex& ex, const params& p, int64_t block, unsigned char* smem, bool dft) {
  const x_layout L = make_x_layout(p, dft);
  const int nq = dft ? p.n_fwchunks : 1;
  const int q = static_cast<int>(block % nq);
  const int64_t cb = block / nq;
  const int64_t ci = cb / p.B;
  const int64_t b = cb % p.B;
  const float* xvol = p.x + (b * p.Ci + ci) * (static_cast<int64_t>(p.D) * p.H * p.W);
  const fw_chunk ch = chunk_of(p, q);
  const bool with_sum = q == 0;
  ex.each_thread([&](int t, x_state& st) {
    st.sum = 0.0;
    st.c = 0.0f;
    if (dft) x_tables(p, L, smem, ch, t);
  });
  ex.sync();
  const int64_t rows = static_cast<int64_t>(p.D) * p.H;
  const int nr_first = static_cast<int>(min64(p.slab_rows, rows));  // the centring slab
  const int64_t group = static_cast<int64_t>(p.xr) * p.slab_rows;   // rows staged at once
  for (int64_t r0 = 0; r0 < rows; r0 += group) {
    const int nr = static_cast<int>(min64(group, rows - r0));
    ex.each_thread([&](int t, x_state&) {
      if (dft && r0 == 0) x_matrices(p, L, smem, t);
      x_stage_rows(p, L, smem, xvol, r0, nr, t);
    });
    ex.sync();
    ex.each_thread([&](int t, x_state& st) { x_row_sums(p, L, smem, nr, with_sum, dft && r0 == 0, t, st); });
    ex.sync();
    if (dft) {
      if (r0 == 0) {
        ex.each_thread([&](int t, x_state&) { x_sum_warps(L, smem, t); });
        ex.sync();
      }
      ex.each_thread([&](int t, x_state& st) { x_rows(p, L, smem, r0, nr, nr_first, r0 == 0, t, st); });
      ex.sync();
    }
  }
  if (dft) {
    ex.each_thread([&](int t, x_state&) { x_h_stage(p, L, smem, ch, t); });
    ex.sync();
    ex.each_thread([&](int t, x_state& st) { x_d_stage(p, L, smem, ch, ci, b, t, st.c); });
  }
  if (with_sum) {
    ex.each_thread([&](int t, x_state& st) { x_sum_store(L, smem, t, st); });
    ex.sync();
    ex.each_thread([&](int t, x_state&) { x_sum_warps(L, smem, t); });
    ex.sync();
    ex.each_thread([&](int t, x_state&) { x_sum_final(p, L, smem, ci, b, t); });
  }
}

// =============================================================================================
// gspec: the weights' height transform G for every row pair
// =============================================================================================

/// Items (ci, fd, tw, c), c fastest: each reads its k values H1[ci][fd][:][tw][c] once and writes
/// G[ci][pair][tw][c] = sum_th H1[ci][fd][th][tw][c] e^{-2pi i th fh / H'} for every pair (fd, fh)
/// of depth plane fd (taps summed in order th = 0, 1, ...). The gemm then only copies G: computed
/// inside the gemm, every block formed it for all pairs it touched (~4.75x redundant at the default
/// config) and spent ~40% of its issue slots on it.
FB_HOST_DEVICE int64_t gspec_items(const params& p) { return p.training ? p.Ci * p.NDP * p.k * p.Co : 0; }
FB_HOST_DEVICE int64_t gspec_blocks(const params& p) { return (gspec_items(p) + k_threads - 1) / k_threads; }
FB_HOST_DEVICE std::size_t gspec_smem(const params& p) { return align16(static_cast<std::size_t>(p.Nh) * sizeof(cplx)); }

/// The first pair of depth plane fd and the plane's pair count (dft::pair_at's numbering).
FB_HOST_DEVICE void plane_pairs(const dft::row_pairs& rp, int64_t fd, int64_t& first, int64_t& count) {
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

FB_HOST_DEVICE void gspec_item(const params& p, unsigned char* smem, int64_t block, int t) {
  const int64_t i = block * k_threads + t;
  if (i >= gspec_items(p)) return;
  const cplx* twh = at<cplx>(smem, 0);
  const int64_t k = p.k;
  const int64_t c = i % p.Co;
  int64_t rest = i / p.Co;
  const int64_t tw = rest % k;
  rest /= k;
  const int64_t fd = rest % p.NDP;
  const int64_t ci = rest / p.NDP;
  const cplx* h = p.h1 + ((ci * p.NDP + fd) * k * k + tw) * p.Co + c;  // + th * k * C_out
  int64_t first = 0, count = 0;
  plane_pairs(p.pairs, fd, first, count);
  cplx* g = p.G + ((ci * p.pairs.count + first) * k + tw) * p.Co + c;  // + q * k * C_out
  const int64_t th_stride = k * p.Co;
  if (p.k <= k_tap_batch) {
    cplx v[k_tap_batch];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int th = 0; th < k_tap_batch; ++th) v[th] = th < p.k ? load_ro(h + th * th_stride) : cplx{0.0f, 0.0f};
    for (int64_t q = 0; q < count; ++q) {  // fh = q
      cplx acc{0.0f, 0.0f};
      int m = 0;  // (th * fh) mod Nh
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int th = 0; th < k_tap_batch; ++th) {
        if (th < p.k) {
          dft::cmac(acc, v[th], twh[m]);
          m += static_cast<int>(q);
          if (m >= p.Nh) m -= p.Nh;
        }
      }
      g[q * th_stride] = acc;
    }
    return;
  }
  for (int64_t q = 0; q < count; ++q) {
    cplx acc{0.0f, 0.0f};
    int m = 0;
    for (int th = 0; th < p.k; ++th) {
      dft::cmac(acc, load_ro(h + th * th_stride), twh[m]);
      m += static_cast<int>(q);
      if (m >= p.Nh) m -= p.Nh;
    }
    g[q * th_stride] = acc;
  }
}

template <class Ex>
FB_HOST_DEVICE void gspec_program(Ex& ex, const params& p, int64_t block, unsigned char* smem) {
  ex.each_thread([&](int t, no_state&) {
    cplx* twh = at<cplx>(smem, 0);
    for (int m = t; m < p.Nh; m += k_threads) twh[m] = dft::unit_root(m, p.Nh);
  });
  ex.sync();
  ex.each_thread([&](int t, no_state&) { gspec_item(p, smem, block, t); });
}

// =============================================================================================
// gemm: sum over frequencies of |sum_ci X W|^2
// =============================================================================================

/// Per-unit facts of a block (one unit per warp), computed once per block.
struct unit_info {
  int64_t xr;  ///< X offset (complex elements) of (row, ci 0, b 0, fw)
  int64_t xc;  ///< the same for the conjugate row
  int pl;      ///< the unit's row pair, relative to the block's first pair
  int valid;   ///< 0 past the last unit
  double wr;   ///< Parseval weight of (row, fw): 0 for the mean (f = 0)
  double wc;   ///< weight of (conjugate row, fw): 0 when the row is its own conjugate
};

/// Shared-memory layout of gemm_program. The staged X and G tiles are double-buffered (buffer b
/// at + b * stage: the next chunk is copied while this one is multiplied); the final reduction rows
/// reuse the region (the tiles are dead after the last chunk).
struct gemm_layout {
  std::size_t twu, uinfo, xs, gs, stage, red, total;
};

FB_HOST_DEVICE std::size_t gemm_stage_bytes(const params& p, int kc) {
  const std::size_t xs = static_cast<std::size_t>(kc) * k_units * 2 * static_cast<std::size_t>(p.tb) * sizeof(cplx);
  const std::size_t gs = static_cast<std::size_t>(kc) * static_cast<std::size_t>(p.npb) *
                         static_cast<std::size_t>(p.k) * k_lanes * sizeof(cplx);
  return align16(xs) + align16(gs);
}

FB_HOST_DEVICE gemm_layout make_gemm_layout(const params& p) {
  gemm_layout L{};
  std::size_t o = 0;
  L.twu = o;
  o += align16(static_cast<std::size_t>(k_units) * static_cast<std::size_t>(p.k) * sizeof(cplx));
  L.uinfo = o;
  o += align16(k_units * sizeof(unit_info));
  L.xs = o;
  L.gs = o + align16(static_cast<std::size_t>(p.kc) * k_units * 2 * static_cast<std::size_t>(p.tb) * sizeof(cplx));
  L.red = o;
  L.stage = gemm_stage_bytes(p, p.kc);
  const std::size_t red = align16(static_cast<std::size_t>(k_units) * static_cast<std::size_t>(p.tb) * k_lanes *
                                  sizeof(double));
  o += 2 * L.stage > red ? 2 * L.stage : red;
  L.total = o;
  return L;
}

/// Per-thread accumulators: Z of the unit's row (z0) and conjugate row (z1) for the batch tile.
template <int TB>
struct gemm_state {
  cplx z0[TB];
  cplx z1[TB];
};

/// Blocks: (group, batch tile, channel tile), channel tile fastest, so the blocks that read the same
/// X slice run side by side (L2 reuse), and consecutive groups share H1's depth plane.
FB_HOST_DEVICE int64_t gemm_blocks(const params& p) {
  return p.n_groups * p.n_btiles * p.n_ctiles;
}

struct gemm_block_id {
  int64_t g;  ///< unit group
  int bt;     ///< batch tile
  int ct;     ///< channel tile
  int64_t p_lo;
  int npb;  ///< row pairs this group touches
};

FB_HOST_DEVICE gemm_block_id gemm_block_of(const params& p, int64_t block) {
  gemm_block_id id{};
  id.ct = static_cast<int>(block % p.n_ctiles);
  const int64_t rest = block / p.n_ctiles;
  id.bt = static_cast<int>(rest % p.n_btiles);
  id.g = rest / p.n_btiles;
  const int64_t u_lo = id.g * k_units;
  const int64_t u_hi = min64(u_lo + k_units, p.n_units) - 1;
  id.p_lo = u_lo / p.Fw;
  id.npb = static_cast<int>(u_hi / p.Fw - id.p_lo + 1);
  return id;
}

/// Tables, pair and unit facts; zero accumulators.
template <int TB>
FB_HOST_DEVICE void gemm_setup(const params& p, const gemm_layout& L, unsigned char* smem, const gemm_block_id& id,
                               int t, gemm_state<TB>& st) {
  cplx* twu = at<cplx>(smem, L.twu);
  unit_info* uinfo = at<unit_info>(smem, L.uinfo);
  for (int i = t; i < k_units * p.k; i += k_threads) {
    const int w = i / p.k;
    const int tw = i - w * p.k;
    const int64_t u = id.g * k_units + w;
    const int64_t fw = u < p.n_units ? u % p.Fw : 0;
    twu[i] = u < p.n_units ? dft::unit_root((tw * fw) % p.Nw, p.Nw) : cplx{0.0f, 0.0f};
  }
  if (t < k_units) {
    const int64_t u = id.g * k_units + t;
    unit_info ui{0, 0, 0, 0, 0.0, 0.0};
    if (u < p.n_units) {
      const int64_t pidx = u / p.Fw;
      const int64_t fw = u - pidx * p.Fw;
      const dft::row_pair pr = dft::pair_at(p.pairs, pidx);
      const int64_t row_stride = p.Ci * p.B * p.Fw;
      const double hw = dft::half_weight(fw, p.Nw);
      ui.xr = pr.row * row_stride + fw;
      ui.xc = pr.conj_row * row_stride + fw;
      ui.pl = static_cast<int>(pidx - id.p_lo);
      ui.valid = 1;
      ui.wr = (pr.row == 0 && fw == 0) ? 0.0 : hw;
      ui.wc = pr.conj_row == pr.row ? 0.0 : hw;
    }
    uinfo[t] = ui;
  }
  for (int b = 0; b < TB; ++b) st.z0[b] = st.z1[b] = cplx{0.0f, 0.0f};
}

/// Steps a G combination (kc, pair, tw), numbered (kc * npb + pl) * k + tw, forward by `by`.
FB_HOST_DEVICE void gemm_combo_step(int& kc, int& pl, int& tw, int by, int k, int npb) {
  tw += by;
  while (tw >= k) {
    tw -= k;
    if (++pl == npb) {
      pl = 0;
      ++kc;
    }
  }
}

/// Starts the copies of chunk [ci0, ci0 + nkc) into buffer buf: the X tile xs[kc][unit][row, conj
/// row][b] and the G tile gs[kc][pair][tw][lane] (zero outside the problem), then closes the
/// thread's copy group. Nothing waits here: the copies land while the previous chunk is multiplied.
template <int TB>
FB_HOST_DEVICE void gemm_stage(const params& p, const gemm_layout& L, unsigned char* smem, const gemm_block_id& id,
                               int64_t ci0, int nkc, int buf, int t) {
  const unit_info* uinfo = at<unit_info>(smem, L.uinfo);
  cplx* xs = at<cplx>(smem, L.xs + static_cast<std::size_t>(buf) * L.stage);
  cplx* gs = at<cplx>(smem, L.gs + static_cast<std::size_t>(buf) * L.stage);
  // X: unit fastest, so 8 consecutive columns fw of one row are read together.
  const int nx = nkc * k_units * 2 * TB;
  for (int i = t; i < nx; i += k_threads) {
    const int w = i % k_units;
    int rest = i / k_units;
    const int b = rest % TB;
    rest /= TB;
    const int r = rest % 2;
    const int kc = rest / 2;
    const unit_info& ui = uinfo[w];
    const int64_t bg = static_cast<int64_t>(id.bt) * TB + b;
    const bool ok = ui.valid && bg < p.B;
    const int64_t off = ok ? (r ? ui.xc : ui.xr) + ((ci0 + kc) * p.B + bg) * p.Fw : 0;
    copy8_async(xs + ((kc * k_units + w) * 2 + r) * TB + b, p.X + off, ok);
  }
  // G: warp w takes the rows (kc, pair, tw) w, w + 8, ... (counters stepped, not divided); the lane
  // is the output channel, so a warp copies 32 consecutive values.
  const int w = t / k_lanes;
  const int lane = t % k_lanes;
  const int64_t cg = static_cast<int64_t>(id.ct) * k_lanes + lane;
  const bool cok = cg < p.Co;
  constexpr int kstep = k_threads / k_lanes;
  const int rows = nkc * id.npb * p.k;
  int tw = w % p.k;  // row w = (kc * npb + pl) * k + tw
  int pl = (w / p.k) % id.npb;
  int kc = w / (p.k * id.npb);
  for (int row = w; row < rows; row += kstep) {
    const int64_t off = cok ? (((ci0 + kc) * p.pairs.count + id.p_lo + pl) * p.k + tw) * p.Co + cg : 0;
    copy8_async(gs + ((kc * p.npb + pl) * p.k + tw) * k_lanes + lane, p.G + off, cok);
    gemm_combo_step(kc, pl, tw, kstep, p.k, id.npb);
  }
  copy_commit();
}

/// Thread (warp = unit, lane = output channel): for each staged input channel, W of its row and
/// conjugate row from G and the unit's twiddles e^{-2pi i tw fw / W'}:
///   W(row, fw)      = sum_tw G[tw] t_tw       = (A1 - A2, A3 + A4)
///   W(conj row, fw) = sum_tw conj(G[tw]) t_tw = (A1 + A2, A3 - A4)
/// (A1 = sum G.re t.re, A2 = sum G.im t.im, A3 = sum G.re t.im, A4 = sum G.im t.re), then
/// Z[b] += X[b] W for the batch tile, both rows.
template <int TB>
FB_HOST_DEVICE void gemm_main(const params& p, const gemm_layout& L, unsigned char* smem, int nkc, int buf, int t,
                              gemm_state<TB>& st) {
  const int w = t / 32;
  const int lane = t % 32;
  const unit_info* uinfo = at<unit_info>(smem, L.uinfo);
  if (!uinfo[w].valid) return;
  const int pl = uinfo[w].pl;
  const cplx* twu = at<cplx>(smem, L.twu) + w * p.k;
  // Running pointers (the kc loop steps them; index products were recomputed every step).
  const cplx* g = at<cplx>(smem, L.gs + static_cast<std::size_t>(buf) * L.stage) + pl * p.k * k_lanes + lane;
  const cplx* xr = at<cplx>(smem, L.xs + static_cast<std::size_t>(buf) * L.stage) + w * 2 * TB;
  const int gstep = p.npb * p.k * k_lanes;
  for (int kc = 0; kc < nkc; ++kc, g += gstep, xr += k_units * 2 * TB) {
    float a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f;
    const cplx* gt = g;
    for (int tw = 0; tw < p.k; ++tw, gt += k_lanes) {
      const cplx gv = *gt;
      const cplx tv = twu[tw];
      a1 = dft::ffma(gv.re, tv.re, a1);
      a2 = dft::ffma(gv.im, tv.im, a2);
      a3 = dft::ffma(gv.re, tv.im, a3);
      a4 = dft::ffma(gv.im, tv.re, a4);
    }
    const cplx wr{a1 - a2, a3 + a4};
    const cplx wc{a1 + a2, a3 - a4};
    const cplx* xc = xr + TB;
    if constexpr (TB == 1) {
      dft::cmac(st.z0[0], xr[0], wr);
      dft::cmac(st.z1[0], xc[0], wc);
    } else {
      const cplx2* xr2 = reinterpret_cast<const cplx2*>(xr);
      const cplx2* xc2 = reinterpret_cast<const cplx2*>(xc);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int bb = 0; bb < TB / 2; ++bb) {
        const cplx2 vr = xr2[bb];
        const cplx2 vc = xc2[bb];
        dft::cmac(st.z0[2 * bb], vr.a, wr);
        dft::cmac(st.z0[2 * bb + 1], vr.b, wr);
        dft::cmac(st.z1[2 * bb], vc.a, wc);
        dft::cmac(st.z1[2 * bb + 1], vc.b, wc);
      }
    }
  }
}

/// red[unit][b][lane] = w_row |Z_row|^2 + w_conj |Z_conj|^2 (fp64).
template <int TB>
FB_HOST_DEVICE void gemm_store(const gemm_layout& L, unsigned char* smem, int t, const gemm_state<TB>& st) {
  const int w = t / 32;
  const int lane = t % 32;
  const unit_info& ui = at<unit_info>(smem, L.uinfo)[w];
  double* red = at<double>(smem, L.red);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int b = 0; b < TB; ++b)
    red[(w * TB + b) * k_lanes + lane] = dft::dfma(ui.wr, dft::norm2(st.z0[b]), ui.wc * dft::norm2(st.z1[b]));
}

/// partial[g][b][c] = the block's units summed in unit order.
template <int TB>
FB_HOST_DEVICE void gemm_reduce(const params& p, const gemm_layout& L, unsigned char* smem, const gemm_block_id& id,
                                int t) {
  const double* red = at<double>(smem, L.red);
  for (int i = t; i < TB * k_lanes; i += k_threads) {
    const int b = i / k_lanes;
    const int c = i % k_lanes;
    double s = 0.0;
    for (int w = 0; w < k_units; ++w) s += red[(w * TB + b) * k_lanes + c];
    const int64_t bg = static_cast<int64_t>(id.bt) * TB + b;
    const int64_t cg = static_cast<int64_t>(id.ct) * k_lanes + c;
    if (bg < p.B && cg < p.Co) p.partial[(id.g * p.B + bg) * p.Co + cg] = s;
  }
}

template <int TB, class Ex>
FB_HOST_DEVICE void gemm_program(Ex& ex, const params& p, int64_t block, unsigned char* smem) {
  const gemm_layout L = make_gemm_layout(p);
  const gemm_block_id id = gemm_block_of(p, block);
  ex.each_thread([&](int t, gemm_state<TB>& st) { gemm_setup<TB>(p, L, smem, id, t, st); });
  ex.sync();
  ex.each_thread([&](int t, gemm_state<TB>&) {
    gemm_stage<TB>(p, L, smem, id, 0, static_cast<int>(min64(p.kc, p.Ci)), 0, t);
  });
  int buf = 0;
  for (int64_t ci0 = 0; ci0 < p.Ci; ci0 += p.kc) {
    const int nkc = static_cast<int>(min64(p.kc, p.Ci - ci0));
    const int64_t next = ci0 + p.kc;
    ex.each_thread([&](int t, gemm_state<TB>&) {
      if (next < p.Ci) {  // the next chunk's copies go out before this chunk's are awaited
        gemm_stage<TB>(p, L, smem, id, next, static_cast<int>(min64(p.kc, p.Ci - next)), buf ^ 1, t);
        copy_wait_all_but_last();
      } else {
        copy_wait();
      }
    });
    ex.sync();
    ex.each_thread([&](int t, gemm_state<TB>& st) { gemm_main<TB>(p, L, smem, nkc, buf, t, st); });
    ex.sync();
    buf ^= 1;
  }
  ex.each_thread([&](int t, gemm_state<TB>& st) { gemm_store<TB>(L, smem, t, st); });
  ex.sync();
  ex.each_thread([&](int t, gemm_state<TB>&) { gemm_reduce<TB>(p, L, smem, id, t); });
}

// =============================================================================================
// reduce: m2 and ybar per (b, c)
// =============================================================================================

FB_HOST_DEVICE int64_t reduce_ctiles(const params& p) { return (p.Co + k_lanes - 1) / k_lanes; }
FB_HOST_DEVICE int64_t reduce_blocks(const params& p) { return p.B * reduce_ctiles(p); }
constexpr std::size_t k_reduce_smem = k_slices * k_lanes * sizeof(double);

/// Warp s's share of the group sum for 32 channels: 4 interleaved slices q = s + 8j (j = 0..3) of
/// the 32, slice q summing groups q, q + 32, ... in order, then the 4 in order. Four independent
/// accumulators and 16 loads in flight per thread: only B * C_out/32 blocks run (64 at the
/// default), and a single chain per thread would wait for ~100 L2/DRAM round trips in a row.
FB_HOST_DEVICE void reduce_slices(const params& p, unsigned char* smem, int64_t b, int64_t ct, int t) {
  const int s = t / k_lanes;
  const int c = t % k_lanes;
  const int64_t cg = ct * k_lanes + c;
  constexpr int k_sub = 4;
  double acc[k_sub] = {0.0, 0.0, 0.0, 0.0};
  if (cg < p.Co) {
    const double* col = p.partial + b * p.Co + cg;  // + g * B * C_out
    const int64_t stride = p.B * p.Co;
    // k_rounds rounds of loads go out before any is added (16 in flight per thread: the kernel is
    // latency-bound); each accumulator still adds its groups in increasing order.
    constexpr int k_rounds = 4;
    for (int64_t g0 = 0; g0 < p.n_groups; g0 += k_slices * k_sub * k_rounds) {
      double v[k_rounds][k_sub];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int r = 0; r < k_rounds; ++r)
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
        for (int j = 0; j < k_sub; ++j) {
          const int64_t g = g0 + k_slices * k_sub * r + s + k_slices * j;
          v[r][j] = g < p.n_groups ? load_ro(col + g * stride) : 0.0;
        }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int r = 0; r < k_rounds; ++r)
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
        for (int j = 0; j < k_sub; ++j)
          if (g0 + k_slices * k_sub * r + s + k_slices * j < p.n_groups) acc[j] += v[r][j];
    }
  }
  at<double>(smem, 0)[s * k_lanes + c] = ((acc[0] + acc[1]) + acc[2]) + acc[3];
}

/// m2[b, c] = scale^2 / N' * (slices in order) (training); ybar[b, c] = scale * (bias_c + (1/N')
/// sum_ci S[b, ci] Wsum[ci, c]).
FB_HOST_DEVICE void reduce_finish(const params& p, unsigned char* smem, int64_t b, int64_t ct, int t) {
  if (t >= k_lanes) return;
  const int64_t c = ct * k_lanes + t;
  if (c >= p.Co) return;
  const double n = static_cast<double>(p.n_out);
  if (p.training) {
    const double* red = at<double>(smem, 0);
    double tot = 0.0;
    for (int s = 0; s < k_slices; ++s) tot += red[s * k_lanes + t];
    p.m2[b * p.Co + c] = p.scale * p.scale * (tot / n);
  }
  double acc = 0.0;
  for (int64_t ci = 0; ci < p.Ci; ++ci) acc = dft::dfma(load_ro(p.S + b * p.Ci + ci), load_ro(p.wsum + ci * p.Co + c), acc);
  p.ybar[b * p.Co + c] = p.scale * (static_cast<double>(load_ro(p.conv_bias + c)) + acc / n);
}

template <class Ex>
FB_HOST_DEVICE void reduce_program(Ex& ex, const params& p, int64_t block, unsigned char* smem) {
  const int64_t ct = block % reduce_ctiles(p);
  const int64_t b = block / reduce_ctiles(p);
  if (p.training) {
    ex.each_thread([&](int t, no_state&) { reduce_slices(p, smem, b, ct, t); });
    ex.sync();
  }
  ex.each_thread([&](int t, no_state&) { reduce_finish(p, smem, b, ct, t); });
}

// =============================================================================================
// finish: per channel
// =============================================================================================

FB_HOST_DEVICE int64_t finish_blocks(const params& p) { return (p.Co + k_threads - 1) / k_threads; }

/// out[:, c] = A_c ybar + (beta_c - A_c mean_c); training also updates the running buffers (and
/// block 0's thread 0 the batch counter); eval normalises with the running buffers.
FB_HOST_DEVICE void finish_channel(const params& p, int64_t block, int t) {
  const int64_t c = block * k_threads + t;
  if (p.training && block == 0 && t == 0) *p.num_batches_tracked += 1;
  if (c >= p.Co) return;
  const double gamma = static_cast<double>(p.gamma[c]);
  const double beta = static_cast<double>(p.beta[c]);
  bn::affine a;
  if (p.training) {
    const bn::channel_moments mom =
        bn::combine_sample_moments(p.ybar + c, p.m2 + c, p.B, p.Co, static_cast<double>(p.n_out));
    a = bn::normalisation(mom.mean, mom.var_biased, gamma, beta, p.eps);
    bn::update_running(p.running_mean, p.running_var, c, mom, static_cast<double>(p.B) * static_cast<double>(p.n_out),
                       p.momentum);
  } else {
    a = bn::normalisation(static_cast<double>(p.running_mean[c]), static_cast<double>(p.running_var[c]), gamma, beta,
                          p.eps);
  }
  for (int64_t b = 0; b < p.B; ++b)
    p.out[b * p.Co + c] = static_cast<float>(dft::dfma(a.scale, p.ybar[b * p.Co + c], a.shift));
}

template <class Ex>
FB_HOST_DEVICE void finish_program(Ex& ex, const params& p, int64_t block) {
  ex.each_thread([&](int t, no_state&) { finish_channel(p, block, t); });
}

}  // namespace fb::fused::convt3d_scale_bn_gap::detail
