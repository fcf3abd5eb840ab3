#pragma once
/// The fp32 CUDA-core tile loop's outputs as its epilogue policies see them: which outputs a
/// thread's accumulators stand for in a phase, and the border classes of their taps.

#include "fused/conv3d/simt_fp32_geometry.cuh"

namespace fb::fused::conv3d::simt_fp32 {

/// The outputs a thread's accumulators stand for in one phase.
struct thread_outputs {
  bool active;           ///< the d and w outputs exist (else nothing of this thread counts)
  int od, ow;            ///< output d and w
  int qd, qh0, qw;       ///< their bases (row r: qh0 + r)
  int oh[k_rows];        ///< output h of each row
  bool row_ok[k_rows];   ///< that output h exists
  int co0;               ///< channel of accumulator column 0 (c_out <= 2^20)
  int n_co;              ///< valid channels: columns [0, n_co) (may be <= 0)
};

FB_HOST_DEVICE thread_outputs outputs_of(const geometry& g, const block_pos& bp, const phase_pos& pp,
                                         const thread_pos& t) {
  thread_outputs o;
  const int s = static_cast<int>(g.dim[0].s), p = static_cast<int>(g.dim[0].p);
  // output_of / has_output of phase_dim, in 32-bit (every coordinate is below 2^22).
  o.qd = bp.q0[0] + t.base_d;
  o.qh0 = bp.q0[1] + t.base_h;
  o.qw = bp.q0[2] + t.base_w;
  // 32-bit comparisons too (n_out < 2^27, c_out <= 2^20): this runs per phase in every thread.
  const int d_out = static_cast<int>(g.dim[0].n_out), h_out = static_cast<int>(g.dim[1].n_out),
            w_out = static_cast<int>(g.dim[2].n_out);
  o.od = o.qd * s + pp.r[0] - p;
  o.ow = o.qw * s + pp.r[2] - p;
  o.active = o.od >= 0 && o.od < d_out && o.ow >= 0 && o.ow < w_out;
  FB_UNROLL
  for (int r = 0; r < k_rows; ++r) {
    o.oh[r] = (o.qh0 + r) * s + pp.r[1] - p;
    o.row_ok[r] = o.oh[r] >= 0 && o.oh[r] < h_out;
  }
  o.co0 = bp.co_block * k_co_block + t.warp_c * k_co_thread;
  const int co_left = static_cast<int>(g.c_out) - o.co0;
  o.n_co = co_left < k_co_thread ? co_left : k_co_thread;
  return o;
}

/// True when some accumulator of the thread stands for an output of this phase (outputs_of has
/// one with active, a row_ok and n_co > 0). Computed apart from outputs_of, from the fewest values:
/// it is evaluated before the tap loop, and nothing of it must stay live through the loop.
FB_HOST_DEVICE bool has_outputs(const geometry& g, const block_pos& bp, const phase_pos& pp, const thread_pos& t) {
  const int s = static_cast<int>(g.dim[0].s), p = static_cast<int>(g.dim[0].p);
  const int od = (bp.q0[0] + t.base_d) * s + pp.r[0] - p;
  const int ow = (bp.q0[2] + t.base_w) * s + pp.r[2] - p;
  const int oh_first = (bp.q0[1] + t.base_h) * s + pp.r[1] - p;  // rows increase with r
  const int oh_last = oh_first + (k_rows - 1) * s;
  return od >= 0 && od < g.dim[0].n_out && ow >= 0 && ow < g.dim[2].n_out && oh_last >= 0 &&
         oh_first < g.dim[1].n_out && bp.co_block * k_co_block + t.warp_c * k_co_thread < g.c_out;
}

/// The taps j in [lo, hi) of a phase with J taps along one dimension that read inside the input
/// at base q (input index q - j in [0, n_in)); all of them (lo = 0, hi = J) away from the borders.
FB_HOST_DEVICE void valid_taps(const phase_dim& d, int q, int J, int& lo, int& hi) {
  const int n_in = static_cast<int>(d.n_in);
  lo = q - n_in + 1 > 0 ? q - n_in + 1 : 0;
  hi = q + 1 < J ? q + 1 : J;
  if (hi < lo) hi = lo;
}

/// Border classes of a base along one dimension of a phase with J <= 2 taps there (k_tap_classes of
/// them; valid_taps gives the interval): 0 every tap reads inside the input, 1 only the taps below
/// hi < J (low border), 2 only the taps from lo > 0 (high border), 3 none. An output's taps that
/// read inside the input are the box of its three classes, so quantities that depend only on that
/// box (#15's centring term K(o)) come from a table of k_tap_classes^3 entries per (sample,
/// channel, phase) instead of a per-output box sum: the epilogues look them up without branches
/// (with the box sums inline, every warp with a border lane in w took the slow path).
constexpr int k_tap_classes = 4;
constexpr int k_class_combos = k_tap_classes * k_tap_classes * k_tap_classes;

FB_HOST_DEVICE int tap_class(const phase_dim& d, int q, int J) {
  int lo, hi;
  valid_taps(d, q, J, lo, hi);
  if (hi <= lo) return 3;
  if (lo == 0 && hi == J) return 0;
  return lo == 0 ? 1 : 2;
}

/// The interval [lo, hi) of taps of class cls (tap_class) along a dimension with J <= 2 taps.
FB_HOST_DEVICE void class_taps(int cls, int J, int& lo, int& hi) {
  lo = cls == 2 ? 1 : 0;
  hi = cls == 0 ? J : (cls == 3 ? 0 : lo + 1);
  if (hi > J) hi = J;
  if (lo > hi) lo = hi;
}

/// The box of taps [ld, hd) x [lh, hh) x [lw, hw) of class combination combo (class_combo) in phase pp.
FB_HOST_DEVICE void class_box(int combo, const phase_pos& pp, int& ld, int& hd, int& lh, int& hh, int& lw, int& hw) {
  class_taps(combo / (k_tap_classes * k_tap_classes), pp.jd, ld, hd);
  class_taps((combo / k_tap_classes) % k_tap_classes, pp.jh, lh, hh);
  class_taps(combo % k_tap_classes, pp.jw, lw, hw);
}

/// The d and w part of an output's class combination (class_combo): a thread's rows share it, so
/// the epilogues derive it once per phase and add each row's h class (class_combo_at).
FB_HOST_DEVICE int class_combo_dw(const geometry& g, const phase_pos& pp, int qd, int qw) {
  return tap_class(g.dim[0], qd, pp.jd) * (k_tap_classes * k_tap_classes) + tap_class(g.dim[2], qw, pp.jw);
}

/// class_combo from its d and w part (class_combo_dw) and the output's h base.
FB_HOST_DEVICE int class_combo_at(const geometry& g, const phase_pos& pp, int combo_dw, int qh) {
  return combo_dw + tap_class(g.dim[1], qh, pp.jh) * k_tap_classes;
}

/// The class combination of an output at bases (qd, qh, qw) of phase pp (index into a class table).
FB_HOST_DEVICE int class_combo(const geometry& g, const phase_pos& pp, int qd, int qh, int qw) {
  return class_combo_at(g, pp, class_combo_dw(g, pp, qd, qw), qh);
}

}  // namespace fb::fused::conv3d::simt_fp32
