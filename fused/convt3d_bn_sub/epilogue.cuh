#pragma once
/// The epilogues of convt3d_bn_sub's convolution passes, as policies of the tile loop
/// (fused/conv3d/simt_fp32_tile.cuh): every output's centre ybar - K(o) looked up from the class
/// tables or the prefix tables, then pass 1's centred sums and materialised y - ybar
/// (stats_policy) or pass 2's scaled outputs (write_policy).

#include "fused/convt3d_bn_sub/centring.cuh"

namespace fb::fused::convt3d_bn_sub::detail {

/// Copies phase pp's centres of the block's channels (every class combination) into tab, the
/// k_class_floats of the phase's parity buffer (asynchronous: the caller waits before the barrier
/// that opens the phase). Thread tid copies float4s tid, tid + k_threads, ...
FB_HOST_DEVICE void stage_class_table(const plan& pl, const args& a, int tid, const conv3d::simt_fp32::block_pos& bp,
                                      const conv3d::simt_fp32::phase_pos& pp, float* tab) {
  const conv3d::simt_fp32::geometry& g = pl.g;
  const int64_t co_pad = g.n_co_blocks * k_co_block;
  const float* src =
      reinterpret_cast<const float*>(a.workspace + pl.off_ctab) +
      2 * (((static_cast<int64_t>(bp.b) * g.n_phases + pp.index) * conv3d::simt_fp32::k_class_combos) * co_pad +
           static_cast<int64_t>(bp.co_block) * k_co_block);
  constexpr int kPerCombo = 2 * k_co_block / 4;  // float4s per class combination
  for (int e = tid; e < conv3d::simt_fp32::k_class_combos * kPerCombo; e += k_threads) {
    const int combo = e / kPerCombo, part = e % kPerCombo;
    arch::cp_async_16(tab + combo * 2 * k_co_block + 4 * part, src + combo * 2 * co_pad + 4 * part);
  }
}

/// The centres (hi, lo) of the k_co_thread channels starting at block channel cbase for class
/// combination combo, from a staged class table (16-byte aligned: cbase is a multiple of 8).
FB_HOST_DEVICE void class_centres(const float* tab, int combo, int cbase, float (&hi)[k_co_thread],
                                  float (&lo)[k_co_thread]) {
  const float* e = tab + (combo * k_co_block + cbase) * 2;
#if defined(__CUDA_ARCH__)
  FB_UNROLL
  for (int u = 0; u < k_co_thread / 2; ++u) {
    const float4 q = reinterpret_cast<const float4*>(e)[u];
    hi[2 * u] = q.x;
    lo[2 * u] = q.y;
    hi[2 * u + 1] = q.z;
    lo[2 * u + 1] = q.w;
  }
#else
  for (int c = 0; c < k_co_thread; ++c) {
    hi[c] = e[2 * c];
    lo[c] = e[2 * c + 1];
  }
#endif
}

/// centre_at for plans without class tables (J0 > 2: the generic tap loop), out of line: it is
/// reached from unrolled places in every pass kernel, and inlined there it would be copied into
/// each of them.
FB_HOST_DEVICE_OUT_OF_LINE void centre_at_out_of_line(const plan& pl, const args& a, int b,
                                                      const conv3d::simt_fp32::phase_pos& pp, int64_t co, int qd,
                                                      int qh, int qw, float& hi, float& lo) {
  centre_at(pl, a, b, pp, co, qd, qh, qw, hi, lo);
}

/// The centres (hi, lo) of a thread's outputs in row r, channels co0 .. co0 + k_co_thread - 1 (0
/// past n_co): from the phase's staged class table tab, or computed (plans without tables).
/// kTables: the plan is known to have class tables (the unrolled variants, J0 <= 2), so the kernel
/// holds no code for the other path (with it, ptxas kept registers for a call and spilled).
/// combo_dw: the d and w part of the thread's class combination (conv3d::simt_fp32::class_combo_dw, once per phase).
template <bool kTables>
FB_HOST_DEVICE void row_centres(const plan& pl, const args& a, const conv3d::simt_fp32::block_pos& bp,
                                const conv3d::simt_fp32::phase_pos& pp, const conv3d::simt_fp32::thread_outputs& o,
                                int r, int combo_dw, const float* tab, int cbase, float (&hi)[k_co_thread],
                                float (&lo)[k_co_thread]) {
  if constexpr (!kTables) {
    if (!pl.class_table) {
      FB_UNROLL
      for (int c = 0; c < k_co_thread; ++c) {
        hi[c] = 0.0f;
        lo[c] = 0.0f;
        if (c < o.n_co) centre_at_out_of_line(pl, a, bp.b, pp, o.co0 + c, o.qd, o.qh0 + r, o.qw, hi[c], lo[c]);
      }
      return;
    }
  }
  class_centres(tab, conv3d::simt_fp32::class_combo_at(pl.g, pp, combo_dw, o.qh0 + r), cbase, hi, lo);
}

/// Pass 1's policy: every output's d = y - ybar = ((sum of centred products) - hi) - lo (hi + lo:
/// the output's centre, row_centres) goes to the materialised buffer (phase_block_of), and per
/// thread and channel the fp32 sum over its k_rows outputs of one phase of d^2 is added to an fp64
/// slot (the thread's own: no barrier); at the end the block sums
/// its 128 slots per channel in 16 fixed slices, then the slices in order, into m2_part[b, tile,
/// co]. Its shared memory (region): m2s [k_co_thread][k_m2_stride] fp64, red [k_threads] fp64, then
/// the class tables of two phases (k_class_floats fp32 each).
template <bool kTables>
struct stats_policy {
  const plan& pl;
  const args& a;

  FB_HOST_DEVICE static double* m2s(float* region) { return reinterpret_cast<double*>(region); }
  FB_HOST_DEVICE static double* red(float* region) { return m2s(region) + k_co_thread * k_m2_stride; }
  /// The class tables of the phases of parity 0 and 1 (k_class_floats each).
  FB_HOST_DEVICE static float* tables(float* region) { return reinterpret_cast<float*>(red(region) + k_threads); }
  /// Where the block's outputs of a phase go in the materialised buffer: output (qd, qh, qw) of
  /// block channel cb at at0 + cb * plane + (qd * n_h + qh) * n_w + qw (phase_block_of, with the
  /// block's sample and first channel folded into at0). Thread 0 derives it in phase_begin for the
  /// whole block: per thread it was ~100 instructions of 64-bit products per phase, a sixth of the
  /// epilogue's (ncu source view, H100, 2026-11-25).
  struct phase_place {
    int64_t at0;
    int n_h, n_w;
  };
  static_assert(sizeof(phase_place) == 16, "k_stats_smem_bytes holds two of them");
  FB_HOST_DEVICE static phase_place* places(float* region) {
    return reinterpret_cast<phase_place*>(tables(region) + 2 * k_class_floats);
  }

  template <class Exec>
  FB_HOST_DEVICE void prologue(Exec& ex, const conv3d::simt_fp32::block_pos&, float* region) const {
    ex.threads([&](int tid) {
      for (int c = 0; c < k_co_thread; ++c) m2s(region)[c * k_m2_stride + tid] = 0.0;
    });
  }

  FB_HOST_DEVICE void phase_begin(int tid, const conv3d::simt_fp32::block_pos& bp,
                                  const conv3d::simt_fp32::phase_pos& pp, float* region) const {
    // Pass 1 is a dependent launch of the centring launch (its blocks stage x and the first weights
    // while centring finishes): the class tables are the first thing it reads from it.
    arch::wait_for_preceding_launch();
    if (pl.class_table) stage_class_table(pl, a, tid, bp, pp, tables(region) + (pp.index & 1) * k_class_floats);
    if (tid == 0) {
      const phase_block pb = phase_block_of(pl, pp.r[0], pp.r[1], pp.r[2]);
      phase_place& pc = places(region)[pp.index & 1];
      pc.at0 = (static_cast<int64_t>(bp.b) * pl.g.c_out + static_cast<int64_t>(bp.co_block) * k_co_block) * pl.spatial +
               pb.base - (static_cast<int64_t>(pb.lo_d) * pb.n_h + pb.lo_h) * pb.n_w - pb.lo_w;
      pc.n_h = pb.n_h;
      pc.n_w = pb.n_w;
    }
  }

  template <class State>
  FB_HOST_DEVICE void epilogue(int tid, State& st, const conv3d::simt_fp32::block_pos& bp,
                               const conv3d::simt_fp32::phase_pos& pp, const conv3d::simt_fp32::thread_outputs& o,
                               float* region) const {
    if (!o.active) return;
    const int cbase = o.co0 - bp.co_block * k_co_block;
    const float* tab = tables(region) + (pp.index & 1) * k_class_floats;
    float part[k_co_thread];
    FB_UNROLL
    for (int c = 0; c < k_co_thread; ++c) part[c] = 0.0f;
    // This thread's outputs in the materialised buffer: row r of channel c at at + r * n_w + c * plane.
    const conv3d::simt_fp32::geometry& g = pl.g;
    const phase_place pc = places(region)[pp.index & 1];
    const int64_t plane = pl.spatial;
    const int64_t at = pc.at0 + cbase * plane + (static_cast<int64_t>(o.qd) * pc.n_h + o.qh0) * pc.n_w + o.qw;
    const int combo_dw = pl.class_table ? conv3d::simt_fp32::class_combo_dw(g, pp, o.qd, o.qw) : 0;
    // The rows, with a store predicate per channel only where the thread's channels pass C_out
    // (kAllChannels false). The class combination's d and w part once per phase, not per row: the
    // per-row class and store address arithmetic were ~2/3 of this epilogue's ~690 instructions per
    // phase and warp (ncu source view, H100, 2026-11-25).
    auto rows = [&](auto all_channels) {
      constexpr bool kAllChannels = decltype(all_channels)::value;
      FB_UNROLL
      for (int r = 0; r < conv3d::simt_fp32::k_rows; ++r) {
        if (!o.row_ok[r]) continue;
        float h[k_co_thread], l[k_co_thread];
        row_centres<kTables>(pl, a, bp, pp, o, r, combo_dw, tab, cbase, h, l);
        float* p = materialised(pl, a) + (at + r * pc.n_w);  // row r exists: the offset is >= 0
        FB_UNROLL
        for (int c = 0; c < k_co_thread; ++c) {
          const float d = (st.acc.v[r][c] - h[c]) - l[c];
          part[c] = conv3d::simt_fp32::fma32(d, d, part[c]);
          if (kAllChannels || c < o.n_co) *p = d;
          p += plane;
        }
      }
    };
    if (o.n_co >= k_co_thread)
      rows(std::true_type{});
    else
      rows(std::false_type{});
    FB_UNROLL
    for (int c = 0; c < k_co_thread; ++c)
      if (c < o.n_co) m2s(region)[c * k_m2_stride + tid] += static_cast<double>(part[c]);
  }

  template <class Exec>
  FB_HOST_DEVICE void phase_end(Exec&, const conv3d::simt_fp32::block_pos&, const conv3d::simt_fp32::phase_pos&,
                                float*) const {}

  template <class Exec>
  FB_HOST_DEVICE void finish(Exec& ex, const conv3d::simt_fp32::block_pos& bp, float* region) const {
    constexpr int kSlices = k_threads / k_co_block;           // 16
    constexpr int kPerChannel = k_threads / conv3d::simt_fp32::k_warps_c;  // 128 thread slots hold one channel
    constexpr int kPerSlice = kPerChannel / kSlices;          // 8
    ex.sync();
    ex.threads([&](int tid) {
      const int cb = tid % k_co_block, slice = tid / k_co_block;
      const int wc = cb / k_co_thread, c = cb % k_co_thread;
      double acc = 0.0;
      for (int e = slice * kPerSlice; e < (slice + 1) * kPerSlice; ++e) {
        const int warp = wc + conv3d::simt_fp32::k_warps_c * (e / 32);
        acc += m2s(region)[c * k_m2_stride + warp * 32 + (e % 32)];
      }
      red(region)[slice * k_co_block + cb] = acc;
    });
    ex.sync();
    ex.threads([&](int tid) {
      if (tid >= k_co_block) return;
      const int64_t co = static_cast<int64_t>(bp.co_block) * k_co_block + tid;
      if (co >= pl.g.c_out) return;
      double acc = 0.0;
      for (int sl = 0; sl < kSlices; ++sl) acc += red(region)[sl * k_co_block + tid];
      a.workspace[pl.off_m2_part + (static_cast<int64_t>(bp.b) * pl.g.tiles_per_sample + bp.tile) * pl.g.c_out + co] =
          acc;
    });
  }
};

/// Pass 2's policy (eval mode: the scale is known before the convolution): out = scale_c * (y -
/// ybar_bc) = scale_c * ((sum of centred products) - hi - lo), as fma(sum - hi, scale, -lo*scale),
/// hi + lo the output's centre (as in pass 1). Its shared
/// memory (region): scale [k_co_block], then hi [2][k_co_block] and -lo*scale [2][k_co_block] (fp32).
template <bool kTables>
struct write_policy {
  const plan& pl;
  const args& a;

  FB_HOST_DEVICE static float* scale(float* region) { return region; }
  /// The class tables of the phases of parity 0 and 1, after the scale (16-byte aligned).
  FB_HOST_DEVICE static float* tables(float* region) { return region + 4 * k_co_block; }

  template <class Exec>
  FB_HOST_DEVICE void prologue(Exec& ex, const conv3d::simt_fp32::block_pos& bp, float* region) const {
    ex.threads([&](int tid) {
      arch::wait_for_preceding_launch();  // a dependent launch of finalize, whose scale it reads first
      if (tid >= k_co_block) return;
      const int64_t co = static_cast<int64_t>(bp.co_block) * k_co_block + tid;
      scale(region)[tid] = co < pl.g.c_out ? static_cast<float>(a.workspace[pl.off_scale + co]) : 0.0f;
    });
  }

  FB_HOST_DEVICE void phase_begin(int tid, const conv3d::simt_fp32::block_pos& bp,
                                  const conv3d::simt_fp32::phase_pos& pp, float* region) const {
    if (pl.class_table) stage_class_table(pl, a, tid, bp, pp, tables(region) + (pp.index & 1) * k_class_floats);
  }

  template <class State>
  FB_HOST_DEVICE void epilogue(int, State& st, const conv3d::simt_fp32::block_pos& bp,
                               const conv3d::simt_fp32::phase_pos& pp, const conv3d::simt_fp32::thread_outputs& o,
                               float* region) const {
    if (!o.active || o.n_co <= 0) return;
    const conv3d::simt_fp32::geometry& g = pl.g;
    const int64_t w_out = g.dim[2].n_out;
    const int64_t hw = g.dim[1].n_out * w_out;
    const int64_t plane = g.dim[0].n_out * hw;
    float* base = a.out + (static_cast<int64_t>(bp.b) * g.c_out + o.co0) * plane + o.od * hw + o.ow;
    const int cbase = o.co0 - bp.co_block * k_co_block;
    const float* tab = tables(region) + (pp.index & 1) * k_class_floats;
    // A warp's lanes write every s-th float of a row, so each 32-byte sector is written in parts by
    // the row's w phases, which follow one another in the phase loop (r_w innermost). Measured on an
    // H100 (ncu, default config): pass 2 moved ~3x the output's bytes through DRAM and took 488 us
    // against pass 1's 240; storing all but the last w phase with L2 evict_last brought it to 429 us
    // (DRAM still ~2.5x: partial sectors are still filled from DRAM). Full-sector stores are the fix.
    // (32-bit: a 64-bit remainder is a call to a division routine on the GPU.)
    const int sw = static_cast<int>(g.dim[2].s);
    const bool keep_in_l2 = (o.ow + static_cast<int>(g.dim[2].p)) % sw != sw - 1;
    const uint64_t policy = conv3d::simt_fp32::l2_evict_last_policy();
    float s[k_co_thread];
    FB_UNROLL
    for (int c = 0; c < k_co_thread; ++c) s[c] = scale(region)[cbase + c];
    // Addresses advance by a channel's plane per column: one 64-bit addition per store (the
    // products per store made this epilogue ~900 instructions per phase and warp, ncu on the H100).
    const int combo_dw = pl.class_table ? conv3d::simt_fp32::class_combo_dw(g, pp, o.qd, o.qw) : 0;
    FB_UNROLL
    for (int r = 0; r < conv3d::simt_fp32::k_rows; ++r) {
      if (!o.row_ok[r]) continue;
      float h[k_co_thread], l[k_co_thread];
      row_centres<kTables>(pl, a, bp, pp, o, r, combo_dw, tab, cbase, h, l);
      float* p = base + static_cast<int64_t>(o.oh[r]) * w_out;
      FB_UNROLL
      for (int c = 0; c < k_co_thread; ++c) {
        if (c < o.n_co)
          conv3d::simt_fp32::store_out(p, conv3d::simt_fp32::fma32(st.acc.v[r][c] - h[c], s[c], -(l[c] * s[c])),
                                       keep_in_l2, policy);
        p += plane;
      }
    }
  }

  template <class Exec>
  FB_HOST_DEVICE void phase_end(Exec&, const conv3d::simt_fp32::block_pos&, const conv3d::simt_fp32::phase_pos&,
                                float*) const {}

  template <class Exec>
  FB_HOST_DEVICE void finish(Exec&, const conv3d::simt_fp32::block_pos&, float*) const {}
};

}  // namespace fb::fused::convt3d_bn_sub::detail
