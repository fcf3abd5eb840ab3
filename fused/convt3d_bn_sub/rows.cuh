#pragma once
/// convt3d_bn_sub's rows launch (training): out = scale_c * (y - ybar_bc) from the phase-major
/// buffer pass 1 wrote, in the output's order: a band of rows staged in shared memory by bulk
/// copies (rows_band_block), or rows too wide for a band read directly (rows_block).

#include "fused/convt3d_bn_sub/plan.h"

namespace fb::fused::convt3d_bn_sub::detail {

/// Output rows a warp of the rows launch loads before it stores them (memory parallelism).
constexpr int k_rows_in_flight = 8;

/// Work items of the rows launch: the (b, co, od) slices of the output, H' rows of W' floats each.
FB_HOST_DEVICE int64_t output_slices(const plan& pl) { return pl.g.batch * pl.g.c_out * pl.g.dim[0].n_out; }

/// Where a rows block reads and writes: slice (b, co, od) split once per block.
struct rows_slice {
  int64_t plane;  ///< b * C_out + co
  float scale;    ///< scale_c
  int rd;         ///< the slice's d phase
  int qd, n_d;    ///< base inside the d phase's box, outputs of that phase along d
  int64_t src;    ///< materialised offset of the (b, co) plane's d-phase box
  int64_t dst;    ///< output offset of the slice
};

FB_HOST_DEVICE rows_slice rows_slice_of(const plan& pl, const args& a, int64_t slice) {
  const conv3d::simt_fp32::geometry& g = pl.g;
  const int h_out = static_cast<int>(g.dim[1].n_out), w_out = static_cast<int>(g.dim[2].n_out);
  const int s = static_cast<int>(g.dim[0].s), p = static_cast<int>(g.dim[0].p);
  rows_slice rs;
  int64_t co;
  int od;
  // 32-bit where it fits (64-bit divisions are calls on the GPU, and every thread splits the index).
  if (slice < (int64_t{1} << 31) && g.c_out < (int64_t{1} << 31)) {
    const uint32_t sl = static_cast<uint32_t>(slice), d_out = static_cast<uint32_t>(g.dim[0].n_out);
    od = static_cast<int>(sl % d_out);
    rs.plane = sl / d_out;
    co = static_cast<uint32_t>(rs.plane) % static_cast<uint32_t>(g.c_out);
  } else {
    od = static_cast<int>(slice % g.dim[0].n_out);
    rs.plane = slice / g.dim[0].n_out;
    co = rs.plane % g.c_out;
  }
  rs.scale = static_cast<float>(a.workspace[pl.off_scale + co]);
  const phase_order& D = pl.order[0];
  const int rd = (od + p) % s;
  rs.rd = rd;
  rs.qd = (od + p) / s - D.first_base(rd);
  rs.n_d = D.count(rd);
  rs.src = rs.plane * pl.spatial + D.offset(rd) * static_cast<int64_t>(h_out) * w_out;
  rs.dst = (rs.plane * g.dim[0].n_out + od) * h_out * static_cast<int64_t>(w_out);
  return rs;
}

/// Row groups of a slice: k_rows_in_flight output rows each (the work item of one warp).
FB_HOST_DEVICE int rows_groups(const plan& pl) {
  return static_cast<int>((pl.g.dim[1].n_out + k_rows_in_flight - 1) / k_rows_in_flight);
}

/// The rows launch (training), row group `group` of slice rs (b, co, od), lane `lane` of the warp
/// that holds it: out = scale_c * (y - ybar_bc), y - ybar_bc from the materialised buffer
/// (phase_block_of), for the rows group * k_rows_in_flight .. + k_rows_in_flight - 1 and the columns
/// ow = lane, lane + 32, ...: whole-sector stores in the output's order; the loads are runs of 32/s
/// consecutive floats, one per w phase. The rows' loads go out before their stores (one row at a
/// time left one load in flight per thread: a load cannot pass the store before it, which might
/// alias; the launch ran at 1.35 TB/s, ~2x its bytes' time, ncu H100). The w phase and base advance
/// without divisions. (Tried: staging a slice in shared memory with cp.async from the phase-major
/// places, then writing it in order: 301 us against 188, 268M instructions against 114M; H100,
/// 2026-11-25.) Index: the type of offsets inside a (b, co) plane: int when the plane has fewer than
/// 2^31 floats (fewer registers: the launch's occupancy is what hides its loads' latency), else
/// int64_t.
template <class Index>
FB_HOST_DEVICE void rows_group(const plan& pl, const args& a, const rows_slice& rs, int group, int lane) {
  const conv3d::simt_fp32::geometry& g = pl.g;
  const int h_out = static_cast<int>(g.dim[1].n_out), w_out = static_cast<int>(g.dim[2].n_out);
  const int s = static_cast<int>(g.dim[0].s), p = static_cast<int>(g.dim[0].p);
  const float scale = rs.scale;
  const int qd = rs.qd, n_d = rs.n_d;
  const phase_order &H = pl.order[1], &W = pl.order[2];
  const float* src = materialised(pl, a) + rs.src;
  float* dst = a.out + rs.dst;
  const int oh0 = group * k_rows_in_flight;
  Index row_at[k_rows_in_flight];  // the row's part of the source offset
  Index box_row[k_rows_in_flight];
  Index n_dh[k_rows_in_flight];
  int rh = (oh0 + p) % s, qh = (oh0 + p) / s;
  FB_UNROLL
  for (int u = 0; u < k_rows_in_flight; ++u) {
    const int n_h = H.count(rh);
    n_dh[u] = static_cast<Index>(n_d) * n_h;
    row_at[u] = n_d * (H.offset(rh) * static_cast<Index>(w_out));
    box_row[u] = static_cast<Index>(qd) * n_h + (qh - H.first_base(rh));
    if (++rh == s) rh = 0, ++qh;
  }
  // The lane's source offsets for its current w phase (a lane keeps its phase while 32 % s == 0,
  // e.g. s = 2: one computation per row group).
  int rw = (lane + p) % s, qw = (lane + p) / s, cached_rw = -1;
  Index at[k_rows_in_flight];
  for (int ow = lane; ow < w_out; ow += 32) {
    if (rw != cached_rw) {
      const int n_w = W.count(rw), off_w = W.offset(rw), lo_w = W.first_base(rw);
      FB_UNROLL
      for (int u = 0; u < k_rows_in_flight; ++u) at[u] = row_at[u] + n_dh[u] * off_w + box_row[u] * n_w - lo_w;
      cached_rw = rw;
    }
    float v[k_rows_in_flight];
    FB_UNROLL
    for (int u = 0; u < k_rows_in_flight; ++u) v[u] = oh0 + u < h_out ? src[at[u] + qw] : 0.0f;
    FB_UNROLL
    for (int u = 0; u < k_rows_in_flight; ++u)
      if (oh0 + u < h_out) dst[static_cast<int64_t>(oh0 + u) * w_out + ow] = v[u] * scale;
    rw += 32 % s;
    qw += 32 / s;
    if (rw >= s) rw -= s, ++qw;
  }
}

/// The rows launch (training), slice (b, co, od): warp w of the block takes the row groups w,
/// w + k_warps, ... (rows_group). (Tried, H100 2026-11-25: resident blocks only, each warp a
/// contiguous run of (slice, group) items so that it split a slice index once: 278 us against this
/// version's 188. The 3168 warps then streamed from 3168 places in the buffer at once, where
/// consecutive blocks read neighbouring slices.)
template <class Index, class Exec>
FB_HOST_DEVICE void rows_block(Exec& ex, const plan& pl, const args& a, int64_t slice) {
  static_assert(exec::is_block_executor_v<Exec>, "rows_block needs a block executor");
  const rows_slice rs = rows_slice_of(pl, a, slice);
  const int groups = rows_groups(pl);
  ex.threads([&](int tid) {
    for (int group = tid / 32; group < groups; group += conv3d::simt_fp32::k_warps)
      rows_group<Index>(pl, a, rs, group, tid % 32);
  });
}

/// Work items of the staged rows launch: (slice, band) pairs, slice-major.
FB_HOST_DEVICE int64_t band_items(const plan& pl) { return output_slices(pl) * pl.band_count; }

/// Staged rows (training, when pl.band_rows > 0), one block of k_band_threads: band `item % band_count`
/// of slice `item / band_count`, out = scale_c * (y - ybar_bc) like rows_group (the same single
/// multiply: the same bits). Thread 0 copies the band's (rh, rw) pieces, each a run of consecutive
/// floats of the phase-major buffer (the band's rows of phase rh, all n_w(rw) bases of each), into
/// their slots in `stage` with `stager` (GPU: bulk copies completing on one mbarrier, which thread 0
/// waits for; host: memcpy),
/// from the 16-byte boundary below the piece in whole 16 bytes, and notes in `table` where (rh, rw)'s
/// first row starts (its w base lo_w at table + lo_w). Every warp then writes whole rows of the band
/// from shared memory: lanes ow = lane, lane + 32, ..., the w phase and base advancing without
/// divisions as in rows_group. stage: pl.band_stage_floats floats; table: s_h * s_w ints.
template <class Exec, class Stager>
FB_HOST_DEVICE void rows_band_block(Exec& ex, Stager& stager, const plan& pl, const args& a, int64_t item,
                                    float* stage, int* table) {
  static_assert(exec::is_block_executor_v<Exec>, "rows_band_block needs a block executor");
  const conv3d::simt_fp32::geometry& g = pl.g;
  // One band per slice at the default: no 64-bit division (a called routine on the GPU).
  const int64_t slice = pl.band_count == 1 ? item : item / pl.band_count;
  const int band = static_cast<int>(item - slice * pl.band_count);
  const rows_slice rs = rows_slice_of(pl, a, slice);
  const int h_out = static_cast<int>(g.dim[1].n_out), w_out = static_cast<int>(g.dim[2].n_out);
  const int sh = static_cast<int>(g.dim[1].s), sw = static_cast<int>(g.dim[2].s);
  const int pw = static_cast<int>(g.dim[2].p);
  const phase_order& W = pl.order[2];
  const int oh0 = band * pl.band_rows;
  const int rows = pl.band_rows < h_out - oh0 ? pl.band_rows : h_out - oh0;
  const int t0 = oh0 + static_cast<int>(g.dim[1].p);  // t = oh + p_h; phase rh = t mod s_h, base t / s_h
  ex.threads([&](int tid) {
    if (tid != 0) return;
    const float* y = materialised(pl, a);
    const int64_t plane = rs.plane * pl.spatial;  // the (b, co) plane of the phase-major buffer
    const int m = (pl.band_rows + sh - 1) / sh;
    int slot = 0;
    for (int rh = 0; rh < sh; ++rh) {
      // The band's bases of phase rh: [q_lo, q_hi), those t in [t0, t0 + rows) with t mod s_h = rh.
      const int q_lo = (t0 + sh - 1 - rh) / sh, q_hi = (t0 + rows + sh - 1 - rh) / sh;
      for (int rw = 0; rw < sw; ++rw) {
        // Where pass 1 put phase (rd, rh, rw): the piece starts at its row q_lo of the slice's qd.
        const phase_block pb = phase_block_of(pl, rs.rd, rh, rw);
        const int64_t at = plane + pb.base + (static_cast<int64_t>(rs.qd) * pb.n_h + q_lo - pb.lo_h) * pb.n_w;
        const int lead = static_cast<int>(at & 3);  // the buffer starts 16-byte aligned (off_y)
        const int len = (q_hi - q_lo) * pb.n_w;
        if (len > 0) stager.copy(stage + slot, y + (at - lead), (lead + len + 3) / 4 * 4);
        table[rh * sw + rw] = slot + lead - pb.lo_w;
        slot += static_cast<int>(band_slot_floats(m, pb.n_w));
      }
    }
    stager.arrive();
    // Only this thread waits for the copies; the others wait at the barrier below. (Measured: the
    // same time as every thread waiting, H100; try_wait suspends in hardware, it does not spin.)
    stager.wait();
  });
  ex.sync();  // the copies have landed (ordered by thread 0's wait), and the table is written
  ex.threads([&](int tid) {
    const int warp = tid / 32, lane = tid % 32;
    // Per row and per column only additions: w_out = 63 gives a lane two elements per row, so
    // divisions per row (phase and base of t, of the lane's first column) made the launch
    // issue-bound (~100 instructions per element; ncu, H100).
    constexpr int kStep = k_band_threads / 32;  // rows between a warp's rows
    const int q0 = t0 / sh, r0 = t0 % sh;        // the band's first row: base q0, phase r0
    const int step_r = kStep % sh, step_q = kStep / sh;
    int rh = (r0 + warp) % sh, qh = q0 + (r0 + warp) / sh;
    const int rw0 = (lane + pw) % sw, qw0 = (lane + pw) / sw;
    const bool lane_keeps_phase = 32 % sw == 0;
    const int n_w0 = W.count(rw0);
    // Hoisted by hand: nvcc recomputed the division 32 / s_w and the trip count in every row.
    const int lane_step = 32 / sw, lane_cols = lane < w_out ? (w_out - lane + 31) / 32 : 0;
    float* dst = a.out + rs.dst + static_cast<int64_t>(oh0 + warp) * w_out;
    for (int j = warp; j < rows; j += kStep) {
      // The row's place among the band's rows of phase rh (whose first base is q0, or q0 + 1 when
      // rh comes before the band's first phase r0).
      const int row = qh - (rh >= r0 ? q0 : q0 + 1);
      const int* row_table = table + rh * sw;
      if (lane_keeps_phase) {  // 32 % s_w == 0 (s = 1, 2, 4, ...): one w phase per lane, bases 32/s_w apart
        const float* src = stage + row_table[rw0] + row * n_w0 + qw0;
        for (int c = 0; c < lane_cols; ++c) dst[lane + 32 * c] = src[c * lane_step] * rs.scale;
      } else {
        int rw = rw0, qw = qw0, cached_rw = -1, at = 0;
        for (int ow = lane; ow < w_out; ow += 32) {
          if (rw != cached_rw) {
            at = row_table[rw] + row * W.count(rw);
            cached_rw = rw;
          }
          dst[ow] = stage[at + qw] * rs.scale;
          rw += 32 % sw;
          qw += 32 / sw;
          if (rw >= sw) rw -= sw, ++qw;
        }
      }
      dst += kStep * static_cast<int64_t>(w_out);
      rh += step_r;
      qh += step_q;
      if (rh >= sh) rh -= sh, ++qh;
    }
  });
  ex.sync();  // the stage is free for the next item
}

}  // namespace fb::fused::convt3d_bn_sub::detail
