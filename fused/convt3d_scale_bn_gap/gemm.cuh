#pragma once
/// convt3d_scale_bn_gap's gemm program: sum over frequencies of |sum_ci X W|^2.

#include "fused/convt3d_scale_bn_gap/params.cuh"

namespace fb::fused::convt3d_scale_bn_gap::detail {

/// Per-unit facts of a block (one unit per warp), computed once per block.
struct unit_info {
  int64_t x_offset;       ///< X offset (complex elements) of (row, ci 0, b 0, fw)
  int64_t x_conj_offset;  ///< the same for the conjugate row
  int pair;               ///< the unit's row pair, relative to the block's first pair
  int valid;              ///< 0 past the last unit
  double weight;          ///< Parseval weight of (row, fw): 0 for the mean (f = 0)
  double conj_weight;     ///< weight of (conjugate row, fw): 0 when the row is its own conjugate
};

/// Shared-memory layout of gemm_program. The staged X and G tiles are double-buffered (buffer b
/// at + b * stage: the next chunk is copied while this one is multiplied); the final reduction rows
/// reuse the region (the tiles are dead after the last chunk).
struct gemm_layout {
  std::size_t unit_roots, uinfo, x_tiles, g_tiles, stage, reduction, total;
};

FB_HOST_DEVICE std::size_t gemm_stage_bytes(const params& p, int kc) {
  const std::size_t xs =
      static_cast<std::size_t>(kc) * k_units * 2 * static_cast<std::size_t>(p.batch_tile) * sizeof(cplx);
  const std::size_t gs = static_cast<std::size_t>(kc) * static_cast<std::size_t>(p.pair_rows) *
                         static_cast<std::size_t>(p.k) * k_lanes * sizeof(cplx);
  return align16(xs) + align16(gs);
}

FB_HOST_DEVICE gemm_layout make_gemm_layout(const params& p) {
  gemm_layout L{};
  std::size_t o = 0;
  L.unit_roots = o;
  o += align16(static_cast<std::size_t>(k_units) * static_cast<std::size_t>(p.k) * sizeof(cplx));
  L.uinfo = o;
  o += align16(k_units * sizeof(unit_info));
  L.x_tiles = o;
  L.g_tiles = o + align16(static_cast<std::size_t>(p.chunk_channels) * k_units * 2 *
                          static_cast<std::size_t>(p.batch_tile) * sizeof(cplx));
  L.reduction = o;
  L.stage = gemm_stage_bytes(p, p.chunk_channels);
  const std::size_t red =
      align16(static_cast<std::size_t>(k_units) * static_cast<std::size_t>(p.batch_tile) * k_lanes * sizeof(double));
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
  int64_t group;           ///< unit group
  int batch_tile_index;    ///< batch tile
  int channel_tile_index;  ///< channel tile
  int64_t first_pair;      ///< the row pair of the group's first unit
  int pair_rows;           ///< row pairs this group touches
};

FB_HOST_DEVICE gemm_block_id gemm_block_of(const params& p, int64_t block) {
  gemm_block_id id{};
  id.channel_tile_index = static_cast<int>(block % p.n_ctiles);
  const int64_t rest = block / p.n_ctiles;
  id.batch_tile_index = static_cast<int>(rest % p.n_btiles);
  id.group = rest / p.n_btiles;
  const int64_t u_lo = id.group * k_units;
  const int64_t u_hi = min64(u_lo + k_units, p.n_units) - 1;
  id.first_pair = u_lo / p.n_fw;
  id.pair_rows = static_cast<int>(u_hi / p.n_fw - id.first_pair + 1);
  return id;
}

/// Tables, pair and unit facts; zero accumulators.
template <int TB>
FB_HOST_DEVICE void gemm_setup(const params& p, const gemm_layout& L, unsigned char* smem, const gemm_block_id& id,
                               int t, gemm_state<TB>& st) {
  cplx* twu = at<cplx>(smem, L.unit_roots);
  unit_info* uinfo = at<unit_info>(smem, L.uinfo);
  for (int i = t; i < k_units * p.k; i += k_threads) {
    const int w = i / p.k;
    const int tw = i - w * p.k;
    const int64_t u = id.group * k_units + w;
    const int64_t fw = u < p.n_units ? u % p.n_fw : 0;
    twu[i] = u < p.n_units ? math::dft::unit_root((tw * fw) % p.dft_w, p.dft_w) : cplx{0.0f, 0.0f};
  }
  if (t < k_units) {
    const int64_t u = id.group * k_units + t;
    unit_info ui{0, 0, 0, 0, 0.0, 0.0};
    if (u < p.n_units) {
      const int64_t pidx = u / p.n_fw;
      const int64_t fw = u - pidx * p.n_fw;
      const math::dft::row_pair pr = math::dft::pair_at(p.pairs, pidx);
      const int64_t row_stride = p.c_in * p.B * p.n_fw;
      const double hw = math::dft::half_weight(fw, p.dft_w);
      ui.x_offset = pr.row * row_stride + fw;
      ui.x_conj_offset = pr.conj_row * row_stride + fw;
      ui.pair = static_cast<int>(pidx - id.first_pair);
      ui.valid = 1;
      ui.weight = (pr.row == 0 && fw == 0) ? 0.0 : hw;
      ui.conj_weight = pr.conj_row == pr.row ? 0.0 : hw;
    }
    uinfo[t] = ui;
  }
  for (int b = 0; b < TB; ++b) st.z0[b] = st.z1[b] = cplx{0.0f, 0.0f};
}

/// Starts the copies of chunk [ci0, ci0 + nkc) into buffer buf: the X tile xs[kc][unit][row, conj
/// row][b] and the G tile gs[kc][pair][tw][lane] (zero outside the problem), then closes the
/// thread's copy group. Nothing waits here: the copies land while the previous chunk is multiplied.
/// Each thread's copies differ only by channel, so it steps one source and one destination by fixed
/// strides (the index arithmetic per copy was a third of the kernel's instructions).
template <int TB>
FB_HOST_DEVICE void gemm_stage(const params& p, const gemm_layout& L, unsigned char* smem, const gemm_block_id& id,
                               int64_t ci0, int nkc, int buf, int t) {
  const unit_info* uinfo = at<unit_info>(smem, L.uinfo);
  cplx* xs = at<cplx>(smem, L.x_tiles + static_cast<std::size_t>(buf) * L.stage);
  cplx* gs = at<cplx>(smem, L.g_tiles + static_cast<std::size_t>(buf) * L.stage);
  // X: one channel's slice is (row, conj row) x TB samples x k_units units, unit fastest (8
  // consecutive columns fw of one row are read together); it divides k_threads, so thread t copies
  // element e = t % slice of channels t / slice, t / slice + kstep, ...
  constexpr int slice = k_units * 2 * TB;
  static_assert(k_threads % slice == 0, "an X slice must divide the block");
  constexpr int xkstep = k_threads / slice;
  {
    const int e = t % slice;
    const int w = e % k_units;
    const int b = (e / k_units) % TB;
    const int r = e / (k_units * TB);
    const unit_info& ui = uinfo[w];
    const int64_t bg = static_cast<int64_t>(id.batch_tile_index) * TB + b;
    const bool ok = ui.valid && bg < p.B;
    const int kc0 = t / slice;
    const int64_t channel_stride = p.B * p.n_fw;
    // Offsets, not pointers, step: a pointer stepped past the last copy would leave its array.
    int64_t src = ok ? (r ? ui.x_conj_offset : ui.x_offset) + ((ci0 + kc0) * p.B + bg) * p.n_fw : 0;
    const int64_t src_step = ok ? xkstep * channel_stride : 0;
    int dst = ((kc0 * k_units + w) * 2 + r) * TB + b;
    for (int kc = kc0; kc < nkc; kc += xkstep, dst += xkstep * slice, src += src_step)
      arch::cp_async_8_or_zero(xs + dst, p.X + src, ok);
  }
  // G: channel kc's rows q = pair * k + tw, the block's R = pair_rows * k, are consecutive in G
  // (stride c_out); warp w takes channels w, w + 8, ... (a chunk has at most 8), the lane is the
  // output channel, so a warp copies 32 consecutive values.
  const int w = t / k_lanes;
  const int lane = t % k_lanes;
  const int64_t cg = static_cast<int64_t>(id.channel_tile_index) * k_lanes + lane;
  const bool cok = cg < p.c_out;
  constexpr int kstep = k_threads / k_lanes;
  const int R = id.pair_rows * p.k;
  const int64_t g_channel = static_cast<int64_t>(p.pairs.count) * p.k * p.c_out;  // G's stride per channel
  for (int kc = w; kc < nkc; kc += kstep) {
    int64_t src = cok ? (ci0 + kc) * g_channel + id.first_pair * p.k * p.c_out + cg : 0;
    const int64_t src_step = cok ? p.c_out : 0;
    cplx* dst = gs + kc * p.pair_rows * p.k * k_lanes + lane;
    for (int q = 0; q < R; ++q, src += src_step) arch::cp_async_8_or_zero(dst + q * k_lanes, p.G + src, cok);
  }
  arch::cp_async_commit();
}

/// Z[b] += X[b] W for the batch tile, both rows (row with wr, conjugate row with wc), from the staged
/// X of one channel at xr.
template <int TB>
FB_HOST_DEVICE void gemm_cmac(gemm_state<TB>& st, const cplx* xr, cplx wr, cplx wc) {
  const cplx* xc = xr + TB;
  if constexpr (TB == 1) {
    math::dft::cmac(st.z0[0], xr[0], wr);
    math::dft::cmac(st.z1[0], xc[0], wc);
  } else {
    const cplx2* xr2 = reinterpret_cast<const cplx2*>(xr);
    const cplx2* xc2 = reinterpret_cast<const cplx2*>(xc);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int bb = 0; bb < TB / 2; ++bb) {
      const cplx2 vr = xr2[bb];
      const cplx2 vc = xc2[bb];
      math::dft::cmac(st.z0[2 * bb], vr.a, wr);
      math::dft::cmac(st.z0[2 * bb + 1], vr.b, wr);
      math::dft::cmac(st.z1[2 * bb], vc.a, wc);
      math::dft::cmac(st.z1[2 * bb + 1], vc.b, wc);
    }
  }
}

/// The four tap sums of W for one channel (see gemm_main), in tap order.
struct w_sums {
  float a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f;
  FB_HOST_DEVICE void tap(cplx gv, cplx tv) {
    a1 = math::dft::ffma(gv.re, tv.re, a1);
    a2 = math::dft::ffma(gv.im, tv.im, a2);
    a3 = math::dft::ffma(gv.re, tv.im, a3);
    a4 = math::dft::ffma(gv.im, tv.re, a4);
  }
  FB_HOST_DEVICE cplx row() const { return {a1 - a2, a3 + a4}; }
  FB_HOST_DEVICE cplx conj_row() const { return {a1 + a2, a3 - a4}; }
};

/// Thread (warp = unit, lane = output channel): for each staged input channel, W of its row and
/// conjugate row from G and the unit's twiddles e^{-2pi i tw fw / W'}:
///   W(row, fw)      = sum_tw G[tw] t_tw       = (A1 - A2, A3 + A4)
///   W(conj row, fw) = sum_tw conj(G[tw]) t_tw = (A1 + A2, A3 - A4)
/// (A1 = sum G.re t.re, A2 = sum G.im t.im, A3 = sum G.re t.im, A4 = sum G.im t.re), then
/// Z[b] += X[b] W for the batch tile, both rows. Channels go two at a time: one tap loop forms both
/// channels' W (two independent chains, each twiddle loaded once), which halves the loop's
/// shared-memory round trips per channel; every sum keeps its order (taps, then channels).
template <int TB>
FB_HOST_DEVICE void gemm_main(const params& p, const gemm_layout& L, unsigned char* smem, int nkc, int buf, int t,
                              gemm_state<TB>& st) {
  const int w = t / 32;
  const int lane = t % 32;
  const unit_info* uinfo = at<unit_info>(smem, L.uinfo);
  if (!uinfo[w].valid) return;
  const int pl = uinfo[w].pair;
  const cplx* twu = at<cplx>(smem, L.unit_roots) + w * p.k;
  // Running pointers (the kc loop steps them; index products were recomputed every step).
  const cplx* g = at<cplx>(smem, L.g_tiles + static_cast<std::size_t>(buf) * L.stage) + pl * p.k * k_lanes + lane;
  const cplx* xr = at<cplx>(smem, L.x_tiles + static_cast<std::size_t>(buf) * L.stage) + w * 2 * TB;
  const int gstep = p.pair_rows * p.k * k_lanes;
  constexpr int xstep = k_units * 2 * TB;
  int kc = 0;
  for (; kc + 1 < nkc; kc += 2, g += 2 * gstep, xr += 2 * xstep) {
    w_sums s0, s1;
    const cplx* gt = g;
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int tw = 0; tw < p.k; ++tw, gt += k_lanes) {
      const cplx tv = twu[tw];
      s0.tap(gt[0], tv);
      s1.tap(gt[gstep], tv);
    }
    gemm_cmac<TB>(st, xr, s0.row(), s0.conj_row());
    gemm_cmac<TB>(st, xr + xstep, s1.row(), s1.conj_row());
  }
  if (kc < nkc) {
    w_sums s0;
    const cplx* gt = g;
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int tw = 0; tw < p.k; ++tw, gt += k_lanes) s0.tap(gt[0], twu[tw]);
    gemm_cmac<TB>(st, xr, s0.row(), s0.conj_row());
  }
}

/// red[unit][b][lane] = w_row |Z_row|^2 + w_conj |Z_conj|^2 (fp64).
template <int TB>
FB_HOST_DEVICE void gemm_store(const gemm_layout& L, unsigned char* smem, int t, const gemm_state<TB>& st) {
  const int w = t / 32;
  const int lane = t % 32;
  const unit_info& ui = at<unit_info>(smem, L.uinfo)[w];
  double* red = at<double>(smem, L.reduction);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int b = 0; b < TB; ++b)
    red[(w * TB + b) * k_lanes + lane] =
        math::dft::dfma(ui.weight, math::dft::norm2(st.z0[b]), ui.conj_weight * math::dft::norm2(st.z1[b]));
}

/// partial[g][b][c] = the block's units summed in unit order.
template <int TB>
FB_HOST_DEVICE void gemm_reduce(const params& p, const gemm_layout& L, unsigned char* smem, const gemm_block_id& id,
                                int t) {
  const double* red = at<double>(smem, L.reduction);
  for (int i = t; i < TB * k_lanes; i += k_threads) {
    const int b = i / k_lanes;
    const int c = i % k_lanes;
    double s = 0.0;
    for (int w = 0; w < k_units; ++w) s += red[(w * TB + b) * k_lanes + c];
    const int64_t bg = static_cast<int64_t>(id.batch_tile_index) * TB + b;
    const int64_t cg = static_cast<int64_t>(id.channel_tile_index) * k_lanes + c;
    if (bg < p.B && cg < p.c_out) p.partial[(id.group * p.B + bg) * p.c_out + cg] = s;
  }
}

template <int TB, class Ex>
FB_HOST_DEVICE void gemm_program(Ex& ex, const params& p, int64_t block, unsigned char* smem) {
  static_assert(exec::is_block_executor_v<Ex, gemm_state<TB>>,
                "gemm_program needs a block executor with gemm_state<TB>");
  const gemm_layout L = make_gemm_layout(p);
  const gemm_block_id id = gemm_block_of(p, block);
  ex.threads([&](int t, gemm_state<TB>& st) { gemm_setup<TB>(p, L, smem, id, t, st); });
  ex.sync();
  ex.threads([&](int t, gemm_state<TB>&) {
    gemm_stage<TB>(p, L, smem, id, 0, static_cast<int>(min64(p.chunk_channels, p.c_in)), 0, t);
  });
  // One barrier per chunk: it publishes this chunk's copies (each thread waited for its own) and
  // marks every thread done with the previous chunk, whose buffer the next chunk's copies, issued
  // right after it, then overwrite while this chunk is multiplied.
  int buf = 0;
  for (int64_t ci0 = 0; ci0 < p.c_in; ci0 += p.chunk_channels) {
    const int nkc = static_cast<int>(min64(p.chunk_channels, p.c_in - ci0));
    const int64_t next = ci0 + p.chunk_channels;
    ex.threads([&](int, gemm_state<TB>&) { arch::cp_async_wait_all(); });
    ex.sync();
    ex.threads([&](int t, gemm_state<TB>& st) {
      if (next < p.c_in)
        gemm_stage<TB>(p, L, smem, id, next, static_cast<int>(min64(p.chunk_channels, p.c_in - next)), buf ^ 1, t);
      gemm_main<TB>(p, L, smem, nkc, buf, t, st);
    });
    buf ^= 1;
  }
  ex.sync();  // the reduction rows reuse the tiles
  ex.threads([&](int t, gemm_state<TB>& st) { gemm_store<TB>(L, smem, t, st); });
  ex.sync();
  ex.threads([&](int t, gemm_state<TB>&) { gemm_reduce<TB>(p, L, smem, id, t); });
}

}  // namespace fb::fused::convt3d_scale_bn_gap::detail
