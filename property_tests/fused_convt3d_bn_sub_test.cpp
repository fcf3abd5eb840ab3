// Property tests of the #15 fused building blocks and host executor (torch-free): the phase
// (sub-pixel) index map against the gather form by brute force, the block tiling (every output
// exactly once, every tap read inside the staged tile), the x staging, the weight arrangement, the
// tap-box sums, and the host executor (the kernels' own block programs) against a plain fp64
// ConvTranspose3d + BatchNorm3d + mean subtraction written here, in both BatchNorm modes, with and
// without bias, over every input distribution, with random gamma, beta, buffers, eps and momentum.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "fused/conv3d/simt_fp32_tile.cuh"
#include "fused/convt3d_bn_sub/centring.cuh"
#include "fused/convt3d_bn_sub/conv_pass.cuh"
#include "fused/convt3d_bn_sub/convt3d_bn_sub.h"
#include "fused/convt3d_bn_sub/finalize.cuh"
#include "fused/convt3d_bn_sub/prep.cuh"
#include "fused/convt3d_bn_sub/rows.cuh"
#include "fused/math/convt_phase.cuh"
#include "fused/math/tap_box_sums.cuh"

#include "property_tests/convt3d_test_inputs.h"
#include "property_tests/convt3d_brute_force.h"

namespace {

namespace bs = fb::fused::convt3d_bn_sub;
namespace tile = fb::fused::conv3d::simt_fp32;
using fb::fused::phase_dim;
using fb::fused::phase_order;
using fb::fused::phase_order_of;

/// Largest padding that keeps n_out >= 1 (no output_padding in #15).
int64_t max_padding(int64_t n_in, int64_t k, int64_t s) { return ((n_in - 1) * s + k - 1) / 2; }

phase_dim draw_dim(int64_t max_n, int64_t max_k, int64_t max_s) {
  phase_dim d{};
  d.n_in = *rc::gen::inRange<int64_t>(1, max_n + 1);
  d.k = *rc::gen::inRange<int64_t>(1, max_k + 1);
  d.s = *rc::gen::inRange<int64_t>(1, max_s + 1);
  d.p = *rc::gen::inRange<int64_t>(0, max_padding(d.n_in, d.k, d.s) + 1);
  d.n_out = fb::fused::convt_output_size(d.n_in, d.k, d.s, d.p, 0);
  return d;
}

// ---------------------------------------------------------------------------------------------
// Phase decomposition vs the gather form (SPEC 1): output o takes tap t from i = (o + p - t)/s when
// o + p - t >= 0 is divisible by s and i < n_in.
// ---------------------------------------------------------------------------------------------

RC_GTEST_PROP(FusedConvtPhase, TapsOfEachOutputMatchGatherBruteForce, ()) {
  const phase_dim d = draw_dim(40, 9, 5);
  RC_ASSERT(d.n_out >= 1);
  int64_t pairs = 0;
  for (int64_t o = 0; o < d.n_out; ++o) {
    const int64_t r = d.phase_of(o), q = d.base_of(o);
    RC_ASSERT(r >= 0 && r < d.s);
    RC_ASSERT(d.output_of(q, r) == o);
    RC_ASSERT(d.has_output(q, r));
    RC_ASSERT(q >= d.q_min() && q < d.q_min() + d.q_count());
    std::set<std::pair<int64_t, int64_t>> phase, gather;
    for (int64_t j = 0; j < d.taps(r); ++j) {
      const int64_t t = d.tap(r, j), i = phase_dim::input_of(q, j);
      RC_ASSERT(t < d.k);
      if (i >= 0 && i < d.n_in) phase.insert({t, i});
    }
    RC_ASSERT(d.tap(r, d.taps(r)) >= d.k);  // no tap of the phase is left out
    for (int64_t t = 0; t < d.k; ++t) {
      const int64_t num = o + d.p - t;
      if (num >= 0 && num % d.s == 0 && num / d.s < d.n_in) gather.insert({t, num / d.s});
    }
    RC_ASSERT(phase == gather);
    pairs += static_cast<int64_t>(gather.size());
  }
  RC_ASSERT(pairs == d.valid_pairs());
}

RC_GTEST_PROP(FusedConvtPhase, TapCountsAndBaseRange, ()) {
  const phase_dim d = draw_dim(40, 9, 5);
  int64_t total = 0;
  for (int64_t r = 0; r < d.s; ++r) {
    int64_t brute = 0;
    for (int64_t t = 0; t < d.k; ++t) brute += (t % d.s == r) ? 1 : 0;
    RC_ASSERT(d.taps(r) == brute);
    total += d.taps(r);
  }
  RC_ASSERT(total == d.k);
  RC_ASSERT(d.max_taps() == (d.k + d.s - 1) / d.s);
  // Every base of the range has an output in some phase; the bases just outside have none.
  for (int64_t q = d.q_min() - 1; q <= d.q_min() + d.q_count(); ++q) {
    bool any = false;
    for (int64_t r = 0; r < d.s; ++r) any = any || d.has_output(q, r);
    RC_ASSERT(any == (q >= d.q_min() && q < d.q_min() + d.q_count()));
  }
}

// phase_order's closed forms against counting: the phase-major position of every output is a
// permutation of [0, n_out), each phase's outputs consecutive and in base order.
RC_GTEST_PROP(FusedConvtPhase, PhaseOrderIsAPermutationByPhaseThenBase, ()) {
  const phase_dim d = draw_dim(40, 9, 5);
  const phase_order ord = phase_order_of(d);
  std::vector<int> hit(static_cast<std::size_t>(d.n_out), 0);
  int64_t before = 0;
  for (int r = 0; r < d.s; ++r) {
    int64_t count = 0, first = -1;
    for (int64_t o = 0; o < d.n_out; ++o)
      if (d.phase_of(o) == r) {
        if (first < 0) first = d.base_of(o);
        ++count;
      }
    RC_ASSERT(ord.count(r) == count);
    RC_ASSERT(ord.offset(r) == before);
    if (count > 0) RC_ASSERT(ord.first_base(r) == first);
    before += count;
  }
  for (int64_t o = 0; o < d.n_out; ++o) {
    const int r = static_cast<int>(d.phase_of(o));
    const int64_t at = ord.offset(r) + d.base_of(o) - ord.first_base(r);
    RC_ASSERT(at >= ord.offset(r) && at < ord.offset(r) + ord.count(r));
    ++hit[static_cast<std::size_t>(at)];
  }
  for (int h : hit) RC_ASSERT(h == 1);
}

TEST(FusedConvtPhase, DefaultGeometryOfConvT3dBnSub) {
  // k=3, s=2, p=1: odd outputs (phase 0) take taps 0 and 2, even outputs (phase 1) tap 1.
  const phase_dim h{32, fb::fused::convt_output_size(32, 3, 2, 1, 0), 3, 2, 1};
  EXPECT_EQ(h.n_out, 63);
  EXPECT_EQ(h.taps(0), 2);
  EXPECT_EQ(h.taps(1), 1);
  EXPECT_EQ(h.q_min(), 0);
  EXPECT_EQ(h.q_count(), 32);
  EXPECT_EQ(h.phase_of(0), 1);
  EXPECT_EQ(h.phase_of(1), 0);
  EXPECT_EQ(h.valid_pairs(), 94);  // 31 + 32 + 31
  const phase_dim d{16, fb::fused::convt_output_size(16, 3, 2, 1, 0), 3, 2, 1};
  EXPECT_EQ(d.valid_pairs(), 46);
}

// ---------------------------------------------------------------------------------------------
// Block tiling
// ---------------------------------------------------------------------------------------------

struct small_problem {
  int64_t batch, c_in, c_out, depth, height, width, k, s, p;
};

small_problem draw_tiling_problem() {
  small_problem sp{};
  sp.k = *rc::gen::inRange<int64_t>(1, 8);
  sp.s = *rc::gen::inRange<int64_t>(1, 5);
  sp.batch = *rc::gen::inRange<int64_t>(1, 3);
  sp.c_in = *rc::gen::inRange<int64_t>(1, 5);
  sp.c_out = *rc::gen::element<int64_t>(1, 5, 16, 17, 32, 33, 64, 70);
  sp.depth = *rc::gen::inRange<int64_t>(1, 12);
  sp.height = *rc::gen::inRange<int64_t>(1, 24);
  sp.width = *rc::gen::inRange<int64_t>(1, 41);
  const int64_t pm = std::min({max_padding(sp.depth, sp.k, sp.s), max_padding(sp.height, sp.k, sp.s),
                               max_padding(sp.width, sp.k, sp.s)});
  sp.p = *rc::gen::inRange<int64_t>(0, pm + 1);
  return sp;
}

tile::geometry geometry_of(const small_problem& sp, bool force_generic = false) {
  return tile::make_geometry(sp.batch, sp.c_in, sp.c_out, sp.depth, sp.height, sp.width, sp.k, sp.s, sp.p, 0,
                             force_generic, "test");
}

// Every output (b, co, od, oh, ow) is produced by exactly one (block, phase, thread, row, column),
// and every tap of it that reads the input reads inside the block's staged tile.
RC_GTEST_PROP(FusedConvt3dTile, EveryOutputExactlyOnceAndTapsInsideTheTile, ()) {
  const small_problem sp = draw_tiling_problem();
  const tile::geometry g = geometry_of(sp);
  const int64_t od_n = g.dim[0].n_out, oh_n = g.dim[1].n_out, ow_n = g.dim[2].n_out;
  std::vector<int> hits(static_cast<std::size_t>(sp.batch * sp.c_out * od_n * oh_n * ow_n), 0);
  const int xdim[3] = {g.x_tile_d, g.x_tile_h, g.x_tile_w};
  for (int64_t block = 0; block < g.n_blocks; ++block) {
    const tile::block_pos bp = tile::block_of(g, block);
    RC_ASSERT(bp.b < sp.batch);
    for (int ph = 0; ph < g.n_phases; ++ph) {
      const tile::phase_pos pp = tile::phase_of(g, ph);
      for (int tid = 0; tid < tile::k_threads; ++tid) {
        const tile::thread_pos t = tile::thread_of(tid);
        const tile::thread_outputs o = tile::outputs_of(g, bp, pp, t);
        if (!o.active) continue;
        for (int r = 0; r < tile::k_rows; ++r) {
          if (!o.row_ok[r]) continue;
          const int64_t out_coord[3] = {o.od, o.oh[r], o.ow};
          // The thread's bases: the tile's first base + its place; taps j read q - j.
          const int64_t q[3] = {bp.q0[0] + t.warp_d, bp.q0[1] + t.warp_h * tile::k_rows + r, bp.q0[2] + t.lane};
          for (int d = 0; d < 3; ++d) {
            RC_ASSERT(g.dim[d].base_of(out_coord[d]) == q[d]);
            RC_ASSERT(g.dim[d].phase_of(out_coord[d]) == pp.r[d]);
            for (int64_t j = 0; j < g.dim[d].taps(pp.r[d]); ++j) {
              const int64_t pos = q[d] - bp.q0[d] + (g.j0 - 1) - j;  // tile index of input q - j
              RC_ASSERT(pos >= 0 && pos < xdim[d]);
            }
          }
          for (int c = 0; c < o.n_co; ++c) {
            const int64_t co = o.co0 + c;
            RC_ASSERT(co < sp.c_out);
            ++hits[static_cast<std::size_t>((((bp.b * sp.c_out + co) * od_n + o.od) * oh_n + o.oh[r]) * ow_n + o.ow)];
          }
        }
      }
    }
  }
  for (int h : hits) RC_ASSERT(h == 1);
}

// The two-level accumulation's group length (products per partial sum) at known shapes: the
// default (C_in 16, k 3, s 2: two channels of the 8-tap phase), the 61-channel k 6 s 2 case that
// the single accumulator failed (two channels of 27 taps), and C_in 1 or 9 with k 7 s 1 (one d-slab
// of 49 taps: the 343 taps of a channel split into 7 partial sums).
// The tile loop's division-free phase walk (phase_after, taps_of_residue) gives phase_of's values.
RC_GTEST_PROP(FusedConvt3dTile, PhaseAfterWalksThePhasesAsPhaseOf, ()) {
  const small_problem sp = draw_tiling_problem();
  const tile::geometry g = geometry_of(sp);
  tile::phase_pos walk = tile::phase_of(g, 0);
  for (int ph = 0; ph < g.n_phases; ++ph) {
    const tile::phase_pos pp = tile::phase_of(g, ph);
    if (ph > 0) walk = tile::phase_after(g, walk);
    for (int d = 0; d < 3; ++d) RC_ASSERT(walk.r[d] == pp.r[d]);
    RC_ASSERT(pp.jd == g.dim[0].taps(pp.r[0]) && pp.jh == g.dim[1].taps(pp.r[1]) && pp.jw == g.dim[2].taps(pp.r[2]));
    RC_ASSERT(walk.index == pp.index && walk.jd == pp.jd && walk.jh == pp.jh && walk.jw == pp.jw);
    RC_ASSERT(walk.taps == pp.taps && walk.group == pp.group && walk.slabs == pp.slabs);
  }
}

TEST(FusedConvt3dTile, GroupLengthsAtKnownShapes) {
  EXPECT_EQ(tile::group_products_for(16, 2), 16);
  EXPECT_EQ(tile::group_products_for(61, 3), 54);
  EXPECT_EQ(tile::group_products_for(1, 7), 49);
  EXPECT_EQ(tile::group_products_for(9, 7), 49);
  EXPECT_EQ(tile::group_products_for(1, 1), 1);
  EXPECT_EQ(tile::group_products_for(1, 2), 8);  // J0 <= 2: whole channels (the unrolled variants)
}

// Every phase's partial sums hold at most group_products products (so no phase rounds worse than
// the one with the most taps), the groups tile the products exactly, and the rounding figure of the
// phase with the most taps (products per group + groups) is never above libtorch's, C_in + taps.
RC_GTEST_PROP(FusedConvt3dTile, GroupsAreNoLongerThanTheLongestAndNeverWorseThanLibtorch, ()) {
  const small_problem sp0 = draw_tiling_problem();
  small_problem sp = sp0;
  sp.c_in = *rc::gen::inRange<int64_t>(1, 300);
  const tile::geometry g = geometry_of(sp);
  const int64_t m = g.group_products;
  for (int ph = 0; ph < g.n_phases; ++ph) {
    const tile::phase_pos pp = tile::phase_of(g, ph);
    if (pp.taps == 0) continue;
    int64_t products = 0, groups = 0;
    if (pp.group > 0) {
      RC_ASSERT(pp.group <= sp.c_in);
      RC_ASSERT(static_cast<int64_t>(pp.group) * pp.taps <= m);
      products = static_cast<int64_t>(pp.group) * pp.taps;
      groups = fb::fused::ceil_div(sp.c_in, static_cast<int64_t>(pp.group));
    } else {
      RC_ASSERT(g.variant == 0);  // slab groups only in the generic loop
      RC_ASSERT(pp.slabs >= 1 && pp.slabs < pp.jd);
      RC_ASSERT(static_cast<int64_t>(pp.slabs) * pp.jh * pp.jw <= m);
      products = static_cast<int64_t>(pp.slabs) * pp.jh * pp.jw;
      groups = sp.c_in * fb::fused::ceil_div(static_cast<int64_t>(pp.jd), static_cast<int64_t>(pp.slabs));
    }
    if (pp.taps == g.j0 * g.j0 * g.j0) RC_ASSERT(products + groups <= sp.c_in + pp.taps);
  }
}

// stage_x writes exactly the block's input tile (zero outside the input), for every chunk, minus
// the channel's centre when there are centres.
RC_GTEST_PROP(FusedConvt3dTile, StageXCopiesTheTile, ()) {
  const small_problem sp = draw_tiling_problem();
  const bool generic = *rc::gen::arbitrary<bool>();
  tile::geometry g = geometry_of(sp, generic);
  g.ci_chunk = *rc::gen::inRange<int64_t>(1, sp.c_in + 1);  // chunking as a large problem would
  g.n_ci_chunks = fb::fused::ceil_div(sp.c_in, g.ci_chunk);
  const int64_t D = sp.depth, H = sp.height, W = sp.width;
  std::vector<float> x(static_cast<std::size_t>(sp.batch * sp.c_in * D * H * W));
  for (std::size_t e = 0; e < x.size(); ++e) x[e] = static_cast<float>(e + 1);
  const int64_t block = *rc::gen::inRange<int64_t>(0, g.n_blocks);
  const int64_t cc = *rc::gen::inRange<int64_t>(0, g.n_ci_chunks);
  const tile::block_pos bp = tile::block_of(g, block);
  std::vector<float> xs(static_cast<std::size_t>(g.ci_chunk * g.x_ci), std::numeric_limits<float>::quiet_NaN());
  std::vector<float> centres(static_cast<std::size_t>(sp.batch * sp.c_in));
  for (std::size_t e = 0; e < centres.size(); ++e) centres[e] = 0.5f * static_cast<float>(e) + 3.0f;  // exact x - c
  const bool centred = *rc::gen::arbitrary<bool>();
  const float* cp = centred ? centres.data() : nullptr;
  for (int tid = 0; tid < tile::k_threads; ++tid) {
    if (g.variant == 2) tile::stage_x<2>(g, bp, cc, tid, x.data(), cp, xs.data());
    else if (g.variant == 1) tile::stage_x<1>(g, bp, cc, tid, x.data(), cp, xs.data());
    else tile::stage_x<0>(g, bp, cc, tid, x.data(), cp, xs.data());
  }
  const int64_t n_ci = std::min(g.ci_chunk, sp.c_in - cc * g.ci_chunk);
  for (int64_t ci = 0; ci < g.ci_chunk; ++ci)
    for (int xd = 0; xd < g.x_tile_d; ++xd)
      for (int xh = 0; xh < g.x_tile_h; ++xh)
        for (int xw = 0; xw < g.x_tile_w; ++xw) {
          const float got = xs[static_cast<std::size_t>(ci * g.x_ci + xd * g.x_plane + xh * g.x_tile_w + xw)];
          if (ci >= n_ci) {  // beyond the chunk: never written
            RC_ASSERT(std::isnan(got));
            continue;
          }
          const int64_t id = bp.q0[0] - (g.j0 - 1) + xd, ih = bp.q0[1] - (g.j0 - 1) + xh,
                        iw = bp.q0[2] - (g.j0 - 1) + xw;
          const bool inside = id >= 0 && id < D && ih >= 0 && ih < H && iw >= 0 && iw < W;
          const int64_t cg = cc * g.ci_chunk + ci;
          const float c = centred ? centres[static_cast<std::size_t>(bp.b * sp.c_in + cg)] : 0.0f;
          const float want =
              inside ? x[static_cast<std::size_t>((((bp.b * sp.c_in + cg) * D + id) * H + ih) * W + iw)] - c : 0.0f;
          RC_ASSERT(got == want);
        }
}

// The arranged weights hold W[ci][co][td][th][tw] at [co block][phase][ci][tap of the phase][co].
RC_GTEST_PROP(FusedConvt3dTile, ArrangedWeightsFollowTheLayout, ()) {
  const small_problem sp = draw_tiling_problem();
  const tile::geometry g = geometry_of(sp);
  const int64_t k = sp.k, k3 = k * k * k;
  std::vector<float> w(static_cast<std::size_t>(sp.c_in * sp.c_out * k3));
  for (std::size_t e = 0; e < w.size(); ++e) w[e] = static_cast<float>(e + 1);
  std::vector<float> wt(static_cast<std::size_t>(g.wt_floats), std::numeric_limits<float>::quiet_NaN());
  tile::host_exec ex;
  for (int64_t block = 0; block < g.n_co_blocks * g.n_phases; ++block)
    tile::arrange_weights_block(ex, g, w.data(), wt.data(), block);
  for (int64_t cob = 0; cob < g.n_co_blocks; ++cob)
    for (int ph = 0; ph < g.n_phases; ++ph) {
      const tile::phase_pos pp = tile::phase_of(g, ph);
      const float* region = wt.data() + cob * (g.wt_floats / g.n_co_blocks) + tile::phase_weight_offset(g, ph);
      for (int64_t ci = 0; ci < sp.c_in; ++ci)
        for (int jd = 0; jd < pp.jd; ++jd)
          for (int jh = 0; jh < pp.jh; ++jh)
            for (int jw = 0; jw < pp.jw; ++jw)
              for (int c = 0; c < tile::k_co_block; ++c) {
                const int64_t tap = (jd * pp.jh + jh) * pp.jw + jw;
                const float got = region[(ci * pp.taps + tap) * tile::k_co_block + c];
                const int64_t co = cob * tile::k_co_block + c;
                const int64_t td = pp.r[0] + jd * sp.s, th = pp.r[1] + jh * sp.s, tw = pp.r[2] + jw * sp.s;
                const float want =
                    co < sp.c_out ? w[static_cast<std::size_t>((((ci * sp.c_out + co) * k + td) * k + th) * k + tw)]
                                  : 0.0f;
                RC_ASSERT(got == want);
              }
    }
  for (float v : wt) RC_ASSERT(!std::isnan(v));  // every slot written
}

// ---------------------------------------------------------------------------------------------
// Tap-box sums vs brute force
// ---------------------------------------------------------------------------------------------

RC_GTEST_PROP(FusedTapBoxSums, MatchBruteForce, ()) {
  const small_problem sp = draw_tiling_problem();
  const tile::geometry g = geometry_of(sp);
  const phase_dim &d = g.dim[0], &h = g.dim[1], &w = g.dim[2];
  const int64_t k = sp.k;
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  std::normal_distribution<float> n01(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(d.n_in * h.n_in * w.n_in));
  for (float& v : x) v = 3.0f + n01(rng);
  std::vector<double> a(static_cast<std::size_t>(fb::fused::math::box_sums::scratch_a(d, w)));
  std::vector<double> b(static_cast<std::size_t>(fb::fused::math::box_sums::scratch_b(d, w)));
  std::vector<double> r(static_cast<std::size_t>(k * k * k));
  const int n_threads = *rc::gen::element(1, 7, 256);  // the result does not depend on the split
  for (int t = 0; t < n_threads; ++t) fb::fused::math::box_sums::step_h(d, h, w, x.data(), a.data(), t, n_threads);
  for (int t = 0; t < n_threads; ++t) fb::fused::math::box_sums::step_w(d, w, a.data(), b.data(), t, n_threads);
  for (int t = 0; t < n_threads; ++t) fb::fused::math::box_sums::step_d(d, b.data(), r.data(), t, n_threads);
  for (int64_t td = 0; td < k; ++td)
    for (int64_t th = 0; th < k; ++th)
      for (int64_t tw = 0; tw < k; ++tw) {
        double brute = 0.0, mag = 0.0;
        for (int64_t i = 0; i < d.n_in; ++i)
          for (int64_t j = 0; j < h.n_in; ++j)
            for (int64_t l = 0; l < w.n_in; ++l) {
              const int64_t oi = i * sp.s - sp.p + td, oj = j * sp.s - sp.p + th, ol = l * sp.s - sp.p + tw;
              if (oi < 0 || oi >= d.n_out || oj < 0 || oj >= h.n_out || ol < 0 || ol >= w.n_out) continue;
              const double v = x[static_cast<std::size_t>((i * h.n_in + j) * w.n_in + l)];
              brute += v;
              mag += std::fabs(v);
            }
        RC_ASSERT(std::fabs(r[static_cast<std::size_t>((td * k + th) * k + tw)] - brute) <= 1e-12 * (mag + 1.0));
      }
}

// ---------------------------------------------------------------------------------------------
// Host executor vs a plain fp64 ConvTranspose3d + BatchNorm3d + spatial-mean subtraction
// ---------------------------------------------------------------------------------------------

using fb::convt3d_test_inputs::dist;
using fb::convt3d_test_inputs::dist_name;
using fb::convt3d_test_inputs::fill_uniform;
using fb::convt3d_test_inputs::fill_x;

/// One case: problem, inputs, parameters, buffers.
struct bn_case {
  bs::problem prob{};
  dist d = dist::uniform;
  std::vector<float> x, w, bias, gamma, beta, rm, rv;
  bool has_bias = true;
  int64_t nbt = 0;
};

bn_case draw_case(bool big_channels_or_planes) {
  bn_case c;
  bs::problem& p = c.prob;
  p.kernel_size = *rc::gen::inRange<int64_t>(1, 8);
  p.stride = *rc::gen::inRange<int64_t>(1, 5);
  const int shape = *rc::gen::inRange(0, big_channels_or_planes ? 3 : 1);
  // shape 0: small everything; 1: C_out past two 16-channel blocks; 2: wide planes (several w tiles
  // of 32 bases when s = 1) and several d and h tiles.
  p.batch = *rc::gen::inRange<int64_t>(1, shape == 0 ? 4 : 3);
  p.in_channels = *rc::gen::inRange<int64_t>(1, shape == 1 ? 3 : 6);
  p.out_channels = shape == 1 ? *rc::gen::inRange<int64_t>(33, 70) : *rc::gen::inRange<int64_t>(1, 7);
  if (p.out_channels == p.in_channels && *rc::gen::element(true, true, true, false)) ++p.out_channels;  // SPEC 1
  p.depth = *rc::gen::inRange<int64_t>(1, shape == 2 ? 7 : 6);
  p.height = *rc::gen::inRange<int64_t>(1, shape == 2 ? 12 : 8);
  p.width = shape == 2 ? *rc::gen::inRange<int64_t>(28, 41) : *rc::gen::inRange<int64_t>(1, 9);
  if (shape == 2) p.kernel_size = std::min<int64_t>(p.kernel_size, 3);
  const int64_t pm = std::min({max_padding(p.depth, p.kernel_size, p.stride),
                               max_padding(p.height, p.kernel_size, p.stride),
                               max_padding(p.width, p.kernel_size, p.stride)});
  // Half the cases: usual paddings (p <= k); the rest anywhere valid (p > k, crops at both borders).
  const bool any_padding = *rc::gen::arbitrary<bool>();
  p.padding = *rc::gen::inRange<int64_t>(0, (any_padding ? pm : std::min(pm, p.kernel_size)) + 1);
  p.training = *rc::gen::arbitrary<bool>();
  const int64_t n_per_channel = p.batch * fb::fused::convt_output_size(p.depth, p.kernel_size, p.stride, p.padding, 0) *
                                fb::fused::convt_output_size(p.height, p.kernel_size, p.stride, p.padding, 0) *
                                fb::fused::convt_output_size(p.width, p.kernel_size, p.stride, p.padding, 0);
  if (n_per_channel == 1) p.training = false;  // PyTorch refuses training with one value per channel
  p.eps = *rc::gen::element(1e-5, 1e-3, 0.3);
  p.momentum = *rc::gen::element(0.1, 0.5, 1.0, 0.01);
  c.d = *rc::gen::element(dist::uniform, dist::normal, dist::offset, dist::border_only, dist::sparse);
  c.has_bias = *rc::gen::arbitrary<bool>();
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  const int64_t k3 = p.kernel_size * p.kernel_size * p.kernel_size;
  c.x.resize(static_cast<std::size_t>(p.batch * p.in_channels * p.depth * p.height * p.width));
  c.w.resize(static_cast<std::size_t>(p.in_channels * p.out_channels * k3));
  c.bias.resize(static_cast<std::size_t>(p.out_channels));
  c.gamma.resize(c.bias.size());
  c.beta.resize(c.bias.size());
  c.rm.resize(c.bias.size());
  c.rv.resize(c.bias.size());
  fill_x(c.x, p.height, p.width, c.d, rng);
  const float wb = 1.0f / std::sqrt(static_cast<float>(p.out_channels * k3));
  fill_uniform(c.w, -wb, wb, rng);
  fill_uniform(c.bias, -1.0f, 1.0f, rng);
  fill_uniform(c.gamma, -2.0f, 2.0f, rng);
  fill_uniform(c.beta, -2.0f, 2.0f, rng);
  fill_uniform(c.rm, -1.0f, 1.0f, rng);
  fill_uniform(c.rv, 0.1f, 3.0f, rng);
  c.nbt = *rc::gen::inRange<int64_t>(0, 1000);
  return c;
}

/// The expected results, fp64, straight from the definitions (no identity used).
struct expected {
  std::vector<double> out, rm, rv;
  int64_t nbt;
  double conditioning;  ///< fp32 rounding amplification, as the harness estimates it
};

expected brute_force(const bn_case& c) {
  const bs::problem& p = c.prob;
  const int64_t k = p.kernel_size, s = p.stride, pd = p.padding;
  const fb::convt3d_test::convt3d_dims dims{p.batch, p.in_channels, p.out_channels, p.depth, p.height, p.width, k, s, pd};
  const int64_t S = dims.out_volume(), Co = p.out_channels, B = p.batch;
  std::vector<double> mag2;
  const std::vector<double> y = fb::convt3d_test::conv_transpose3d_fp64(dims, c.x.data(), c.w.data(),
                                                                        c.has_bias ? c.bias.data() : nullptr, &mag2);
  expected ex;
  ex.out.resize(y.size());
  ex.rm.assign(c.rm.begin(), c.rm.end());
  ex.rv.assign(c.rv.begin(), c.rv.end());
  ex.nbt = c.nbt + (p.training ? 1 : 0);
  ex.conditioning = 0.0;
  const double N = static_cast<double>(B * S);
  for (int64_t co = 0; co < Co; ++co) {
    double mean = 0.0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t e = 0; e < S; ++e) mean += y[static_cast<std::size_t>((b * Co + co) * S + e)];
    mean /= N;
    double var = 0.0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t e = 0; e < S; ++e) {
        const double dv = y[static_cast<std::size_t>((b * Co + co) * S + e)] - mean;
        var += dv * dv;
      }
    var /= N;
    const double use_mean = p.training ? mean : c.rm[co];
    const double use_var = p.training ? var : c.rv[co];
    const double inv = 1.0 / std::sqrt(use_var + p.eps);
    for (int64_t b = 0; b < B; ++b) {
      double sub = 0.0;
      for (int64_t e = 0; e < S; ++e) {
        const std::size_t at = static_cast<std::size_t>((b * Co + co) * S + e);
        ex.out[at] = c.gamma[co] * (y[at] - use_mean) * inv + c.beta[co];
        sub += ex.out[at];
        ex.conditioning = std::max(ex.conditioning, (std::fabs(y[at]) + std::sqrt(mag2[at])) * std::fabs(c.gamma[co]) * inv);
      }
      sub /= static_cast<double>(S);
      for (int64_t e = 0; e < S; ++e) ex.out[static_cast<std::size_t>((b * Co + co) * S + e)] -= sub;
    }
    if (p.training) {
      ex.rm[co] = (1.0 - p.momentum) * c.rm[co] + p.momentum * mean;
      ex.rv[co] = (1.0 - p.momentum) * c.rv[co] + p.momentum * var * N / (N - 1.0);
    }
  }
  return ex;
}

/// The host executor's results on a case.
struct result {
  std::vector<float> out, rm, rv;
  int64_t nbt;
};

/// Runs the host executor with the output poisoned with NaN and the workspace with 0xFF bytes (NaN
/// doubles), so reading anything unwritten shows. cap_chunk > 0 forces input-channel chunks of at
/// most that many channels; force_generic the generic tap loop.
result run(const bn_case& c, bool force_generic = false, int64_t cap_chunk = 0) {
  bs::detail::plan pl = bs::detail::make_plan(c.prob, force_generic);
  if (cap_chunk > 0 && pl.g.ci_chunk > cap_chunk) {
    pl.g.ci_chunk = cap_chunk;
    pl.g.n_ci_chunks = fb::fused::ceil_div(pl.g.c_in, cap_chunk);
  }
  const std::size_t ws_bytes = bs::workspace_bytes(c.prob);
  RC_ASSERT(ws_bytes == pl.workspace_bytes);
  std::vector<unsigned char> ws(ws_bytes + 64, 0xFF);
  result r;
  r.out.assign(static_cast<std::size_t>(c.prob.batch * c.prob.out_channels * pl.spatial),
               std::numeric_limits<float>::quiet_NaN());
  r.rm = c.rm;
  r.rv = c.rv;
  r.nbt = c.nbt;
  const bs::detail::args a{c.x.data(),    c.w.data(), c.has_bias ? c.bias.data() : nullptr,
                           c.gamma.data(), r.rm.data(), r.rv.data(),
                           &r.nbt,         r.out.data(), fb::fused::detail::aligned_workspace(ws.data() + 4)};
  bs::detail::run_host_plan(pl, a);
  for (std::size_t i = ws_bytes + 4; i < ws.size(); ++i) RC_ASSERT(ws[i] == 0xFF);  // stays inside
  return r;
}

bool close(double got, double want, double atol = 1e-5, double rtol = 1e-5) {
  return std::isfinite(got) && std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

void check_against_brute_force(const bn_case& c) {
  const expected ex = brute_force(c);
  // The fuzz domain ends where the fp32 reference itself amplifies rounding past the gate
  // (harness/verify/verify_plan.h: max_reference_conditioning = 20); the same cases are out here.
  RC_PRE(ex.conditioning <= 20.0);
  RC_TAG(c.prob.training ? "training" : "eval", dist_name(c.d), c.has_bias ? "bias" : "no bias");
  const result r = run(c);
  const bs::problem& p = c.prob;
  RC_LOG() << "B=" << p.batch << " Cin=" << p.in_channels << " Cout=" << p.out_channels << " D=" << p.depth
           << " H=" << p.height << " W=" << p.width << " k=" << p.kernel_size << " s=" << p.stride
           << " p=" << p.padding << " training=" << p.training << " bias=" << c.has_bias << " " << dist_name(c.d)
           << " cond=" << ex.conditioning << "\n";
  for (std::size_t i = 0; i < ex.out.size(); ++i) {
    if (!close(r.out[i], ex.out[i])) RC_LOG() << "out[" << i << "] got " << r.out[i] << " want " << ex.out[i] << "\n";
    RC_ASSERT(close(r.out[i], ex.out[i]));
  }
  for (std::size_t co = 0; co < ex.rm.size(); ++co) {
    RC_ASSERT(close(r.rm[co], ex.rm[co]));
    RC_ASSERT(close(r.rv[co], ex.rv[co]));
    if (!p.training) {  // eval mode leaves the buffers bitwise untouched
      RC_ASSERT(std::memcmp(&r.rm[co], &c.rm[co], sizeof(float)) == 0);
      RC_ASSERT(std::memcmp(&r.rv[co], &c.rv[co], sizeof(float)) == 0);
    }
  }
  RC_ASSERT(r.nbt == ex.nbt);
}

RC_GTEST_PROP(FusedConvT3dBnSubHost, MatchesFp64BruteForce, ()) {
  const bn_case c = draw_case(/*big_channels_or_planes=*/false);
  check_against_brute_force(c);
}

RC_GTEST_PROP(FusedConvT3dBnSubHost, MatchesFp64BruteForceAcrossChannelBlocksAndTiles, ()) {
  const bn_case c = draw_case(/*big_channels_or_planes=*/true);
  check_against_brute_force(c);
}

// The training rows launch stages bands of output rows in shared memory (rows_band_block): planes
// too tall for one band split into several, the last one short, and rows too wide for any band
// (w_out of thousands) go through the unstaged rows_block. Both paths against fp64.
RC_GTEST_PROP(FusedConvT3dBnSubHost, RowsInBandsAndUnstagedRowsMatchFp64BruteForce, ()) {
  bn_case c = draw_case(false);
  bs::problem& p = c.prob;
  const bool wide = *rc::gen::arbitrary<bool>();
  p.training = true;
  p.batch = *rc::gen::inRange<int64_t>(1, 3);
  p.in_channels = *rc::gen::inRange<int64_t>(1, 3);
  p.out_channels = *rc::gen::inRange<int64_t>(1, 3);
  p.kernel_size = *rc::gen::inRange<int64_t>(1, 4);
  p.stride = *rc::gen::inRange<int64_t>(wide ? 1 : 2, 5);
  p.depth = *rc::gen::inRange<int64_t>(1, 3);
  p.height = wide ? *rc::gen::inRange<int64_t>(2, 4) : *rc::gen::inRange<int64_t>(28, 41);
  p.width = wide ? 8300 / p.stride + *rc::gen::inRange<int64_t>(0, 40) : *rc::gen::inRange<int64_t>(20, 41);
  const int64_t pm = std::min({max_padding(p.depth, p.kernel_size, p.stride),
                               max_padding(p.height, p.kernel_size, p.stride),
                               max_padding(p.width, p.kernel_size, p.stride), p.kernel_size - 1});
  p.padding = *rc::gen::inRange<int64_t>(0, pm + 1);
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  c.x.resize(static_cast<std::size_t>(p.batch * p.in_channels * p.depth * p.height * p.width));
  c.w.resize(static_cast<std::size_t>(p.in_channels * p.out_channels * p.kernel_size * p.kernel_size * p.kernel_size));
  for (auto* v : {&c.bias, &c.gamma, &c.beta, &c.rm, &c.rv}) v->resize(static_cast<std::size_t>(p.out_channels), 1.0f);
  fill_x(c.x, p.height, p.width, c.d, rng);
  fill_uniform(c.w, -0.5f, 0.5f, rng);
  fill_uniform(c.gamma, -2.0f, 2.0f, rng);
  const bs::detail::plan pl = bs::detail::make_plan(p);
  if (wide) {
    RC_ASSERT(pl.band_rows == 0);
  } else {
    RC_ASSERT(pl.band_rows > 0);
    RC_ASSERT(pl.band_stage_floats <= bs::detail::k_band_max_floats);
    RC_ASSERT(bs::detail::band_stage_floats(pl, pl.band_rows + 1) > bs::detail::k_band_max_floats ||
              pl.band_rows == pl.g.dim[1].n_out);
  }
  RC_TAG(wide ? "unstaged" : pl.band_count > 1 ? "several bands" : "one band");
  check_against_brute_force(c);
}

// The unrolled tap loops, the generic loop, and any input-channel chunking sum every output in the
// same order: bitwise the same results. Repeating a call gives the same bits (determinism).
RC_GTEST_PROP(FusedConvT3dBnSubHost, VariantsAndChunksAreBitwiseIdentical, ()) {
  bn_case c = draw_case(false);
  c.prob.in_channels = *rc::gen::inRange<int64_t>(2, 9);
  c.prob.batch = 1;  // four runs per case: keep them small
  const bs::problem& p = c.prob;
  if (fb::fused::convt_output_size(p.depth, p.kernel_size, p.stride, p.padding, 0) *
          fb::fused::convt_output_size(p.height, p.kernel_size, p.stride, p.padding, 0) *
          fb::fused::convt_output_size(p.width, p.kernel_size, p.stride, p.padding, 0) ==
      1)
    c.prob.training = false;  // one value per channel now: PyTorch (and make_plan) refuse training
  c.x.resize(static_cast<std::size_t>(c.prob.batch * c.prob.in_channels * c.prob.depth * c.prob.height *
                                      c.prob.width));
  c.w.resize(static_cast<std::size_t>(c.prob.in_channels * c.prob.out_channels * c.prob.kernel_size *
                                      c.prob.kernel_size * c.prob.kernel_size));
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  fill_x(c.x, c.prob.height, c.prob.width, c.d, rng);
  fill_uniform(c.w, -0.5f, 0.5f, rng);
  const result base = run(c);
  const result again = run(c);
  const result generic = run(c, /*force_generic=*/true);
  const result chunked = run(c, false, *rc::gen::inRange<int64_t>(1, c.prob.in_channels));
  const auto same = [](const result& a, const result& b) {
    return std::memcmp(a.out.data(), b.out.data(), a.out.size() * sizeof(float)) == 0 &&
           std::memcmp(a.rm.data(), b.rm.data(), a.rm.size() * sizeof(float)) == 0 &&
           std::memcmp(a.rv.data(), b.rv.data(), a.rv.size() * sizeof(float)) == 0 && a.nbt == b.nbt;
  };
  RC_ASSERT(same(base, again));
  RC_ASSERT(same(base, generic));
  RC_ASSERT(same(base, chunked));
}

// ---------------------------------------------------------------------------------------------
// Validation, sizing
// ---------------------------------------------------------------------------------------------

bs::problem default_problem() { return {16, 16, 32, 16, 32, 32, 3, 2, 1, true, 1e-5, 0.1}; }

std::string invalid_message(const bs::problem& p) {
  try {
    (void)bs::workspace_bytes(p);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(FusedConvT3dBnSub, RejectsInvalidProblemsNamingTheField) {
  EXPECT_EQ(invalid_message(default_problem()), "");
  const std::vector<std::pair<void (*)(bs::problem&), std::string>> rows = {
      {[](bs::problem& p) { p.batch = 0; }, "batch"},
      {[](bs::problem& p) { p.in_channels = 0; }, "in_channels"},
      {[](bs::problem& p) { p.out_channels = -1; }, "out_channels"},
      {[](bs::problem& p) { p.depth = 0; }, "depth"},
      {[](bs::problem& p) { p.kernel_size = 0; }, "kernel_size"},
      {[](bs::problem& p) { p.stride = 0; }, "stride"},
      {[](bs::problem& p) { p.padding = -1; }, "padding"},
      {[](bs::problem& p) { p.padding = 40; }, "padding"},
      {[](bs::problem& p) { p.eps = 0.0; }, "eps"},
      {[](bs::problem& p) { p.momentum = 1.5; }, "momentum"},
      // PyTorch: training needs more than one value per channel.
      {[](bs::problem& p) { p.batch = 1, p.depth = p.height = p.width = 1, p.kernel_size = 1, p.padding = 0; },
       "batch"},
  };
  for (const auto& [patch, field] : rows) {
    bs::problem p = default_problem();
    patch(p);
    EXPECT_NE(invalid_message(p).find(field), std::string::npos) << field << ": " << invalid_message(p);
  }
  bs::problem eval_one = default_problem();
  eval_one.batch = 1, eval_one.depth = eval_one.height = eval_one.width = 1, eval_one.kernel_size = 1;
  eval_one.padding = 0, eval_one.training = false;
  EXPECT_EQ(invalid_message(eval_one), "");  // eval mode normalises with the buffers: N = 1 is fine
}

TEST(FusedConvT3dBnSub, WorkspaceAtDefault) {
  // The figure quoted in fused/convt3d_bn_sub/convt3d_bn_sub.h.
  // + y - ybar (fp32, the output's size) and x - c (fp32, x's size)
  EXPECT_EQ(bs::workspace_bytes(default_problem()), 5899520u + 251983872u + 16777216u + 256u);
  bs::problem eval = default_problem();
  eval.training = false;
  EXPECT_EQ(bs::workspace_bytes(eval), 5899520u + 16777216u + 256u);  // eval writes from the accumulators
  const bs::detail::plan pl = bs::detail::make_plan(default_problem());
  EXPECT_EQ(pl.g.variant, 2);         // k=3, s=2: two taps at most per dimension, unrolled
  EXPECT_EQ(pl.g.n_ci_chunks, 1);     // all 16 input channels staged once per block
  EXPECT_EQ(pl.g.n_blocks, 16 * 32 * 2);  // 8 x 4 x 1 tiles per sample, two 16-channel blocks
  EXPECT_LE(pl.smem_stats_bytes, tile::k_smem_two_per_sm_bytes);  // two blocks per SM
  // The rows launch stages a whole 63 x 63 slice per band: 2 x 2 slots of 32 rows, 16 KB.
  EXPECT_EQ(pl.band_rows, 63);
  EXPECT_EQ(pl.band_count, 1);
  EXPECT_EQ(pl.band_stage_floats, 2 * (1032 + 1000));
}

}  // namespace
