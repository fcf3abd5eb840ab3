#pragma once
/// convt3d_bn_sub's centring launch: ybar[b, co] (the means, a warp per item), the taps' shares V,
/// the prefix tables of the centring and (J0 <= 2) the class tables the passes' epilogues read.

#include "fused/convt3d_bn_sub/plan.h"

namespace fb::fused::convt3d_bn_sub::detail {

/// Offset [doubles] of phase pp's prefix table inside a (b, co) region of the tables: the phases
/// with taps (r < min(k, s) per dimension) in order, each (Jd+1) x (Jh+1) x (Jw+1).
FB_HOST_DEVICE int64_t ptab_phase_offset(const plan& pl, const conv3d::simt_fp32::phase_pos& pp) {
  const conv3d::simt_fp32::geometry& g = pl.g;
  const int64_t side = g.dim[0].k + pl.ptab_m;  // sum over r < m of (J(r) + 1)
  int64_t pre[3], len[3];
  for (int d = 0; d < 3; ++d) {
    pre[d] = 0;
    for (int64_t r = 0; r < pp.r[d]; ++r) pre[d] += g.dim[d].taps(r) + 1;
    len[d] = g.dim[d].taps(pp.r[d]) + 1;
  }
  return pre[0] * side * side + len[0] * (pre[1] * side + len[1] * pre[2]);
}

/// Lanes that share one mean: each sums every 32nd (ci, tap) product of the item, then a fixed tree.
constexpr int k_mean_lanes = 32;
/// Loads a lane of the means launch has in flight (mean_lane_sum).
constexpr int k_mean_loads = 8;

/// Lane `lane`'s share of ybar[b, co] for item = b * C_out + co: the fp64 FMA sum of W * R over the
/// flat (ci, tap) indices lane, lane + 32, ... (W in its own [ci][co][tap] order). A warp per item:
/// a thread per item left 512 items at the default on 2 blocks, 91 us of serial fp64 FMAs (measured).
FB_HOST_DEVICE double mean_lane_sum(const plan& pl, const args& a, int64_t item, int lane) {
  const conv3d::simt_fp32::geometry& g = pl.g;
  const int64_t b = item / g.c_out, co = item % g.c_out;
  const double* r = a.workspace + pl.off_box_r + b * g.c_in * pl.k3;
  // The lane's (ci, tap) advance without divisions, and its loads go out k_mean_loads at a time
  // before the FMAs that use them (same FMA order): one division and one load per FMA made the
  // means launch a chain of dependent round trips (F2F waiting on its load: most of its ncu
  // samples, H100).
  const int64_t n = g.c_in * pl.k3;
  int64_t ci = lane / pl.k3, t = lane % pl.k3;
  double acc = 0.0;
  for (int64_t j0 = lane; j0 < n; j0 += k_mean_lanes * k_mean_loads) {
    float w[k_mean_loads];
    double rv[k_mean_loads];
    FB_UNROLL
    for (int u = 0; u < k_mean_loads; ++u) {
      const int64_t j = j0 + u * k_mean_lanes;
      w[u] = j < n ? conv3d::simt_fp32::load_ro(a.weight + (ci * g.c_out + co) * pl.k3 + t) : 0.0f;
      rv[u] = j < n ? r[j] : 0.0;
      t += k_mean_lanes;
      while (t >= pl.k3) t -= pl.k3, ++ci;
    }
    FB_UNROLL
    for (int u = 0; u < k_mean_loads; ++u)
      if (j0 + u * k_mean_lanes < n) acc = fma(static_cast<double>(w[u]), rv[u], acc);
  }
  return acc;
}

/// ybar[b, co] from the 32 lane sums, added in the fixed tree the device's shuffles use (offsets 16,
/// 8, 4, 2, 1 into lane 0), over D'H'W'. Without the conv bias (it cancels in the output; finalize
/// adds it for running_mean).
FB_HOST_DEVICE double mean_from_lanes(const plan& pl, double (&lanes)[k_mean_lanes]) {
  for (int off = k_mean_lanes / 2; off > 0; off /= 2)
    for (int l = 0; l < off; ++l) lanes[l] += lanes[l + off];
  return lanes[0] / static_cast<double>(pl.spatial);
}

/// Prefix tables of the centring per (b, co): one per phase with taps, ptab_m^3.
FB_HOST_DEVICE int64_t ptab_per_bc_phases(const plan& pl) { return pl.ptab_m * pl.ptab_m * pl.ptab_m; }

/// The centring's share of tap t for (b, co) = bc: V[b, co, t] = sum_ci W[ci, co, t] * c[b, ci] (fp64
/// FMAs, ci ascending; see ptab_item), into the workspace at off_shares. A thread per tap: one
/// thread per prefix table computing its taps' shares in turn, C_in loads each, was the longest
/// chain of dependent loads of the launches before the passes (means, 20 us at the default; H100).
FB_HOST_DEVICE void tap_share_item(const plan& pl, const args& a, int64_t bc, int64_t t) {
  const conv3d::simt_fp32::geometry& g = pl.g;
  const int64_t b = bc / g.c_out, co = bc % g.c_out;
  const float* w = a.weight + co * pl.k3 + t;
  const float* cs = centres(pl, a) + b * g.c_in;
  double v = 0.0;
  for (int64_t ci0 = 0; ci0 < g.c_in; ci0 += k_mean_loads) {  // loads first (mean_lane_sum says why)
    float wv[k_mean_loads], cv[k_mean_loads];
    FB_UNROLL
    for (int u = 0; u < k_mean_loads; ++u) {
      const bool in = ci0 + u < g.c_in;
      wv[u] = in ? conv3d::simt_fp32::load_ro(w + (ci0 + u) * g.c_out * pl.k3) : 0.0f;
      cv[u] = in ? cs[ci0 + u] : 0.0f;
    }
    FB_UNROLL
    for (int u = 0; u < k_mean_loads; ++u)
      if (ci0 + u < g.c_in) v = fma(static_cast<double>(wv[u]), static_cast<double>(cv[u]), v);
  }
  a.workspace[pl.off_shares + bc * pl.k3 + t] = v;
}

/// The centring of y. The passes convolve x - c (c = centres(), per (b, ci)) instead of x, so
/// the fp32 sums have terms of x's spread, not of its offset (inputs at +2: 3.6x smaller rounding);
/// the part left out, K(o) = sum over the taps of o that read inside the input of
/// V[b, co, tap] = sum_ci W[ci, co, tap] * c[b, ci], is exact in fp64 and goes into the centre that
/// the epilogues subtract: y - ybar = (sum of the centred products) - (ybar - K(o)). Over a phase's
/// taps K is a box sum: along each dimension the taps that read inside the input form an interval
/// (valid_taps), all J of them away from the borders. Table item (b, co, phase with taps): the
/// inclusive prefix sums P[a][b][c] = sum of V over jd < a, jh < b, jw < c, (Jd+1)(Jh+1)(Jw+1)
/// doubles at ptab_phase_offset; V from fp64 FMAs over ci ascending, P by inclusion-exclusion
/// (additions only: no contraction can differ between compilers).
FB_HOST_DEVICE void ptab_item(const plan& pl, const args& a, int64_t item) {
  const conv3d::simt_fp32::geometry& g = pl.g;
  const int64_t m = pl.ptab_m, per_bc_phases = ptab_per_bc_phases(pl);
  const int64_t bc = item / per_bc_phases, tp = item % per_bc_phases;
  const int64_t s = g.dim[0].s, k = g.dim[0].k;
  conv3d::simt_fp32::phase_pos pp = conv3d::simt_fp32::phase_of(g, ((tp / (m * m)) * s + (tp / m) % m) * s + tp % m);
  double* P = a.workspace + pl.off_ptab + bc * pl.ptab_per_bc + ptab_phase_offset(pl, pp);
  const double* V = a.workspace + pl.off_shares + bc * pl.k3;  // tap_share_item, earlier in the same block
  const int64_t nb = pp.jh + 1, nc = pp.jw + 1;
  auto at = [&](int64_t i, int64_t j, int64_t l) -> double& { return P[(i * nb + j) * nc + l]; };
  for (int64_t i = 0; i <= pp.jd; ++i)
    for (int64_t j = 0; j <= pp.jh; ++j)
      for (int64_t l = 0; l <= pp.jw; ++l) {
        if (i == 0 || j == 0 || l == 0) {
          at(i, j, l) = 0.0;
          continue;
        }
        const int64_t td = pp.r[0] + (i - 1) * s, th = pp.r[1] + (j - 1) * s, tw = pp.r[2] + (l - 1) * s;
        const double v = V[(td * k + th) * k + tw];
        at(i, j, l) = ((((((v + at(i - 1, j, l)) + at(i, j - 1, l)) + at(i, j, l - 1)) - at(i - 1, j - 1, l)) -
                        at(i - 1, j, l - 1)) -
                       at(i, j - 1, l - 1)) +
                      at(i - 1, j - 1, l - 1);
      }
}

/// ybar as an unevaluated fp32 sum hi + lo (|lo| <= ulp(hi)/2): y - hi is exact or rounded
/// relative to the difference, so the centring loses nothing to the mean's fp32 rounding even when
/// the mean is large against the spread (offset inputs).
FB_HOST_DEVICE void split_mean(double ybar, float& hi, float& lo) {
  hi = static_cast<float>(ybar);
  lo = static_cast<float>(ybar - static_cast<double>(hi));
}

/// K over the box of taps [ld, hd) x [lh, hh) x [lw, hw) of phase pp (which has taps), channel co of
/// sample b: the 8 corners of the phase's prefix table, in one fixed order (inclusion-exclusion).
FB_HOST_DEVICE double box_share(const plan& pl, const args& a, int b, int64_t co,
                                const conv3d::simt_fp32::phase_pos& pp, int ld, int hd, int lh, int hh, int lw,
                                int hw) {
  const conv3d::simt_fp32::geometry& g = pl.g;
  const double* P =
      a.workspace + pl.off_ptab + (static_cast<int64_t>(b) * g.c_out + co) * pl.ptab_per_bc + ptab_phase_offset(pl, pp);
  const int nb = pp.jh + 1, nc = pp.jw + 1;
  auto at = [&](int i, int j, int l) { return conv3d::simt_fp32::load_ro(P + (i * nb + j) * nc + l); };
  return ((((((at(hd, hh, hw) - at(ld, hh, hw)) - at(hd, lh, hw)) - at(hd, hh, lw)) + at(ld, lh, hw)) +
           at(ld, hh, lw)) +
          at(hd, lh, lw)) -
         at(ld, lh, lw);
}

/// The centre ybar - K(o) of output channel co at bases (qd, qh, qw) of phase pp, as hi + lo:
/// K(o) from the phase's prefix table (8 corners of the box of valid taps). Plans with class tables
/// (J0 <= 2) take the same values from class_table_item; this is the J0 > 2 path.
FB_HOST_DEVICE void centre_at(const plan& pl, const args& a, int b, const conv3d::simt_fp32::phase_pos& pp, int64_t co,
                              int qd, int qh, int qw, float& hi, float& lo) {
  const conv3d::simt_fp32::geometry& g = pl.g;
  double k_sum = 0.0;
  if (pp.taps > 0) {
    int ld, hd, lh, hh, lw, hw;
    conv3d::simt_fp32::valid_taps(g.dim[0], qd, pp.jd, ld, hd);
    conv3d::simt_fp32::valid_taps(g.dim[1], qh, pp.jh, lh, hh);
    conv3d::simt_fp32::valid_taps(g.dim[2], qw, pp.jw, lw, hw);
    k_sum = box_share(pl, a, b, co, pp, ld, hd, lh, hh, lw, hw);
  }
  split_mean(a.workspace[pl.off_ybar + static_cast<int64_t>(b) * g.c_out + co] - k_sum, hi, lo);
}

/// Class-table item (b, phase ph, class combination, channel slot co of n_co_blocks * k_co_block): the
/// centre ybar - K(o) of every output of channel co in that phase whose valid taps are the box of
/// the combination's classes (conv3d::simt_fp32::class_taps), as hi + lo (split_mean). K(o) is the sum of the
/// box's taps' shares (tap_share_item, written earlier in the same centring block: read through the
/// coherent path), fp64, jd, jh, jw ascending: at most 8 terms (J <= 2 per dimension where there are
/// class tables). (It was taken from the prefix tables by inclusion-exclusion, as centre_at does for
/// J0 > 2: a thread per table filling (J+1)^3 entries one after another, each reading the ones
/// before it, was the longest chain of the launches before the passes; H100, 2026-11-25.) 0 where
/// the box is empty or the phase has no taps; slots past C_out hold 0. ybar: ybar[b, co].
FB_HOST_DEVICE void class_table_item(const plan& pl, const args& a, int64_t b, int64_t ph, int combo, int64_t co,
                                      double ybar) {
  const conv3d::simt_fp32::geometry& g = pl.g;
  const int64_t co_pad = g.n_co_blocks * k_co_block;
  const int64_t item = ((b * g.n_phases + ph) * conv3d::simt_fp32::k_class_combos + combo) * co_pad + co;
  float* out = reinterpret_cast<float*>(a.workspace + pl.off_ctab) + 2 * item;
  float hi = 0.0f, lo = 0.0f;
  if (co < g.c_out) {
    const conv3d::simt_fp32::phase_pos pp = conv3d::simt_fp32::phase_of(g, ph);
    const int64_t s = g.dim[0].s, k = g.dim[0].k;
    const double* V = a.workspace + pl.off_shares + (b * g.c_out + co) * pl.k3;
    double k_sum = 0.0;
    int ld, hd, lh, hh, lw, hw;
    conv3d::simt_fp32::class_box(combo, pp, ld, hd, lh, hh, lw, hw);
    if (pp.taps > 0)
      for (int jd = ld; jd < hd; ++jd)
        for (int jh = lh; jh < hh; ++jh)
          for (int jw = lw; jw < hw; ++jw)
            k_sum += V[((pp.r[0] + jd * s) * k + (pp.r[1] + jh * s)) * k + (pp.r[2] + jw * s)];
    split_mean(ybar - k_sum, hi, lo);
  }
  out[0] = hi;
  out[1] = lo;
}

/// Blocks of the centring launch: one per (sample, channel slot of n_co_blocks * k_co_block).
FB_HOST_DEVICE int64_t centring_blocks(const plan& pl) { return pl.g.batch * pl.g.n_co_blocks * k_co_block; }

/// Shared memory of a centring block [doubles]: the mean's lane sums, then ybar.
constexpr int k_centring_smem_doubles = k_mean_lanes + 1;

/// Centring block (b, channel slot co): everything the passes' epilogues need about (b, co) before
/// the convolution, in one launch (it was three: means, prefix tables, class tables; 20 + 8 us at the
/// default, mostly chains of dependent loads, H100): (1) the 32 lane sums of ybar (mean_lane_sum)
/// and, on the other threads, the taps' shares (tap_share_item); (2) ybar from the lane sums (the
/// fixed tree of mean_from_lanes); (3) with class tables (J0 <= 2), the entries of channel slot co
/// for every phase and combination (class_table_item; slots past C_out only write their zeros),
/// else the prefix tables that centre_at reads, a thread per phase with taps (ptab_item).
/// smem: k_centring_smem_doubles.
template <class Exec>
FB_HOST_DEVICE void centring_block(Exec& ex, const plan& pl, const args& a, int64_t block, double* smem) {
  static_assert(exec::is_block_executor_v<Exec>, "centring_block needs a block executor");
  const conv3d::simt_fp32::geometry& g = pl.g;
  const int64_t co_pad = g.n_co_blocks * k_co_block;
  const int64_t b = block / co_pad, co = block % co_pad;
  const bool has_channel = co < g.c_out;
  const int64_t bc = b * g.c_out + co;
  double* lanes = smem;
  double* ybar = smem + k_mean_lanes;
  static_assert(k_threads > k_mean_lanes, "threads past the mean's lanes compute the taps' shares");
  ex.threads([&](int tid) {
    if (!has_channel) return;
    if (tid < k_mean_lanes)
      lanes[tid] = mean_lane_sum(pl, a, bc, tid);
    else
      for (int64_t t = tid - k_mean_lanes; t < pl.k3; t += k_threads - k_mean_lanes) tap_share_item(pl, a, bc, t);
  });
  ex.sync();
  ex.threads([&](int tid) {
    if (!has_channel) return;
    if (tid == 0) {
      double l[k_mean_lanes];
      for (int i = 0; i < k_mean_lanes; ++i) l[i] = lanes[i];
      *ybar = mean_from_lanes(pl, l);
      a.workspace[pl.off_ybar + bc] = *ybar;
    }
    if (pl.class_table) return;
    const int64_t per_bc = ptab_per_bc_phases(pl);
    for (int64_t tp = tid; tp < per_bc; tp += k_threads) ptab_item(pl, a, bc * per_bc + tp);
  });
  if (!pl.class_table) return;
  ex.sync();
  ex.threads([&](int tid) {
    const double yb = has_channel ? *ybar : 0.0;
    for (int64_t e = tid; e < g.n_phases * conv3d::simt_fp32::k_class_combos; e += k_threads)
      class_table_item(pl, a, b, e / conv3d::simt_fp32::k_class_combos,
                       static_cast<int>(e % conv3d::simt_fp32::k_class_combos), co, yb);
  });
}

}  // namespace fb::fused::convt3d_bn_sub::detail
