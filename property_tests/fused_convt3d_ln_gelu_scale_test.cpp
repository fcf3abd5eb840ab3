// Property tests of the #34 fused pieces and host executor (torch-free): the fp64 tensor-core
// convolution tile (every output stored exactly once, every A operand the right input element or a
// zero outside the input, a W' row in one block), the MMA fragment layout against the definition of a
// matrix product, the row math (LayerNorm statistics from centred values, exact erf GELU), and the
// host executor (the kernels' own block programs, the MMA emulated from its layout) against a plain
// fp64 ConvTranspose3d + LayerNorm over W' + GELU + scale written here, over every input
// distribution, with random gamma, beta, eps and scale; chunked staging, several channel groups and
// position passes; repeated calls bitwise equal; validation and sizes.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "fused/arch/mma_f64.cuh"
#include "fused/conv3d/mma_fp64_tile.cuh"
#include "fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale.h"
#include "fused/convt3d_ln_gelu_scale/epilogue.cuh"
#include "fused/math/convt_phase.cuh"

#include "property_tests/convt3d_test_inputs.h"
#include "property_tests/convt3d_brute_force.h"

namespace {

namespace ln = fb::fused::convt3d_ln_gelu_scale;
namespace conv = fb::fused::conv3d::mma_fp64;
namespace mma = fb::fused::arch::mma;
using fb::fused::convt_output_size;

/// Largest padding that keeps n_out >= 1.
int64_t max_padding(int64_t n_in, int64_t k, int64_t s) { return ((n_in - 1) * s + k - 1) / 2; }

/// A valid problem small enough for the brute force, W' == C_out. Normal: the fuzz domain's kind
/// (W' <= 64). wide: stride 1 and W' in 65..128, past the fuzz domain up to what the plan accepts:
/// two channel groups and two position passes per w phase.
ln::problem draw_problem(bool wide) {
  ln::problem p{};
  p.kernel_size = *rc::gen::inRange<int64_t>(1, wide ? 4 : 8);
  p.stride = wide ? 1 : *rc::gen::inRange<int64_t>(1, 5);
  p.batch = *rc::gen::inRange<int64_t>(1, 3);
  p.in_channels = *rc::gen::inRange<int64_t>(1, wide ? 4 : 7);
  p.depth = *rc::gen::inRange<int64_t>(1, wide ? 3 : 5);
  p.height = *rc::gen::inRange<int64_t>(1, wide ? 5 : 7);
  const int64_t w_target = wide ? *rc::gen::inRange<int64_t>(65, 129) : *rc::gen::inRange<int64_t>(1, 65);
  // Width from the target W' (padding 0), then a padding that keeps W' >= 1 and, for wide, > 64.
  p.width = std::max<int64_t>(1, (w_target - p.kernel_size) / p.stride + 1);
  const int64_t pm = std::min({max_padding(p.depth, p.kernel_size, p.stride),
                               max_padding(p.height, p.kernel_size, p.stride),
                               max_padding(p.width, p.kernel_size, p.stride), p.kernel_size});
  p.padding = *rc::gen::inRange<int64_t>(0, pm + 1);
  while (wide && p.padding > 0 && convt_output_size(p.width, p.kernel_size, p.stride, p.padding, 0) <= 64) --p.padding;
  p.out_channels = convt_output_size(p.width, p.kernel_size, p.stride, p.padding, 0);
  p.eps = *rc::gen::element(1e-5, 1e-3, 0.3, 1.0);
  p.scaling_factor = *rc::gen::element(1.0, -2.5, 0.37, 3.0);
  return p;
}

// Every output (b, co, od, oh, ow) is stored by exactly one (block, w phase, position pass, warp,
// lane, value); a row (b, co, od, oh) lies in one block; and every A operand a warp reads for an
// output it stores, moff(position) + koff(k), is the staged element of the input that row k's tap
// and channel read, (ci, qd - jd, qh - jh, qw - jw), inside the chunk's staged channels.
RC_GTEST_PROP(FusedConvT3dLnGeluScaleTile, EveryOutputOnceOperandsAreTheTapsInputs, ()) {
  const ln::problem p = draw_problem(*rc::gen::arbitrary<bool>());
  const int64_t cap_chunk = *rc::gen::element<int64_t>(0, 1, 2);
  const ln::detail::plan pl = ln::detail::make_plan(p, cap_chunk);
  const conv::geometry& g = pl.g;
  const int64_t od_n = g.dim[0].n_out, oh_n = g.dim[1].n_out, ow_n = g.dim[2].n_out;
  const int64_t n_rows = p.batch * p.out_channels * od_n * oh_n;
  std::vector<int> hits(static_cast<std::size_t>(n_rows * ow_n), 0);
  std::vector<int64_t> row_owner(static_cast<std::size_t>(n_rows), -1);
  const int box = g.xd * g.xh * g.xw;
  const int cap = g.warp_rows * conv::k_warp_m;
  for (int64_t block = 0; block < g.n_blocks; ++block) {
    const conv::block_pos bp = conv::block_of(g, block);
    if (bp.rows == 0) continue;
    for (int rw = 0; rw < g.s[2]; ++rw) {
      conv::pass_pos pp;
      pp.rw = rw;
      pp.n_qw = g.order[2].count(rw);
      pp.qw0 = g.order[2].first_base(rw);
      const int positions = bp.rows * pp.n_qw;
      for (pp.m0 = 0; pp.m0 < positions; pp.m0 += cap) {
        pp.n = std::min(cap, positions - pp.m0);
        for (int warp = 0; warp < conv::k_warps; ++warp) {
          const int warp_row = warp / g.warp_cols, warp_col = warp % g.warp_cols;
          for (int mt = 0; mt < conv::k_mt; ++mt)
            for (int nt = 0; nt < conv::k_nt; ++nt)
              for (int lane = 0; lane < 32; ++lane)
                for (int v = 0; v < mma::k_c_regs; ++v) {
                  const int m = conv::tile_position(warp_row, mt, lane, v);
                  const int ch = conv::tile_channel(warp_col, nt, lane, v);
                  if (m >= pp.n || ch >= bp.n_ch) continue;
                  const int pos = pp.m0 + m, row = pos / pp.n_qw, qw = pp.qw0 + pos % pp.n_qw, qh = bp.qh0 + row;
                  const int64_t od = g.dim[0].output_of(bp.qd, bp.rd), oh = g.dim[1].output_of(qh, bp.rh);
                  const int64_t ow = g.dim[2].output_of(qw, rw), co = bp.first_channel + ch;
                  RC_ASSERT(od >= 0 && od < od_n && oh >= 0 && oh < oh_n && ow >= 0 && ow < ow_n && co < p.out_channels);
                  const int64_t out_row = ((bp.b * p.out_channels + co) * od_n + od) * oh_n + oh;
                  int64_t& owner = row_owner[static_cast<std::size_t>(out_row)];
                  RC_ASSERT(owner == -1 || owner == block);
                  owner = block;
                  ++hits[static_cast<std::size_t>(out_row * ow_n + ow)];
                  // The A operands of this output's row of the tile: the lane holding A row m reads
                  // moff(m) + koff(k) for every k of every chunk.
                  const int a_lane = (m % 16 % 8) * 4, h = m % 16 / 8;  // g = m mod 8, values h, h + 2, ...
                  RC_ASSERT(mma::a_row(a_lane, h) == m % 16);
                  const int moff = row * g.xw + (qw - g.qw_min);
                  for (int c = 0; c < g.n_chunks; ++c) {
                    const int cc = conv::chunk_channels(g, c);
                    const int steps = conv::steps_of(g, bp.rd, bp.rh, rw, cc);
                    RC_ASSERT(steps <= g.steps_stride);
                    for (int k = 0; k < steps * mma::k_k; ++k) {
                      conv::k_entry e;
                      const int at = moff + conv::koff_of(g, bp.rd, bp.rh, rw, cc, k);
                      RC_ASSERT(at >= 0 && at < cc * g.x_ci_stride);
                      if (!conv::k_entry_of(g, bp.rd, bp.rh, rw, cc, k, e)) continue;
                      const int ci = at / g.x_ci_stride, r = at % g.x_ci_stride;
                      RC_ASSERT(ci == e.ci && r < box);
                      RC_ASSERT(bp.qd - (g.j0[0] - 1) + r / (g.xw * g.xh) == bp.qd - e.jd);
                      RC_ASSERT(bp.qh0 - (g.j0[1] - 1) + r / g.xw % g.xh == qh - e.jh);
                      RC_ASSERT(g.qw_min - (g.j0[2] - 1) + r % g.xw == qw - e.jw);
                      RC_ASSERT(e.jd < g.dim[0].taps(bp.rd) && e.jh < g.dim[1].taps(bp.rh) && e.jw < g.dim[2].taps(rw));
                    }
                  }
                }
        }
      }
    }
  }
  for (int hit : hits) RC_ASSERT(hit == 1);
}

// The emulated MMA is a matrix product on the layout's fragments: D = A B + C for random A, B, C,
// every element against a long double dot product.
TEST(FusedConvT3dLnGeluScaleTile, HostMmaIsTheMatrixProductOfTheFragments) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double am[16][16], bm[16][8], cm[16][8];
  for (auto& r : am) for (double& v : r) v = u(rng);
  for (auto& r : bm) for (double& v : r) v = u(rng);
  for (auto& r : cm) for (double& v : r) v = u(rng);
  double a[32][mma::k_a_regs], b[32][mma::k_b_regs], d[32][mma::k_c_regs];
  for (int l = 0; l < 32; ++l) {
    for (int v = 0; v < mma::k_a_regs; ++v) a[l][v] = am[mma::a_row(l, v)][mma::a_col(l, v)];
    for (int v = 0; v < mma::k_b_regs; ++v) b[l][v] = bm[mma::b_row(l, v)][mma::b_col(l, v)];
    for (int v = 0; v < mma::k_c_regs; ++v) d[l][v] = cm[mma::c_row(l, v)][mma::c_col(l, v)];
  }
  mma::host_warp{}.mma(d, a, b);
  int seen[16][8] = {};
  for (int l = 0; l < 32; ++l)
    for (int v = 0; v < mma::k_c_regs; ++v) {
      const int m = mma::c_row(l, v), n = mma::c_col(l, v);
      ++seen[m][n];
      long double want = cm[m][n];
      for (int k = 0; k < 16; ++k) want += static_cast<long double>(am[m][k]) * bm[k][n];
      EXPECT_NEAR(d[l][v], static_cast<double>(want), 1e-14) << m << "," << n;
    }
  for (auto& r : seen) for (int v : r) EXPECT_EQ(v, 1);  // every element of D held by one lane once
}

// The default geometry (k 4, s 2, p 1, C_out = W' = 64): 32 w bases per w phase (33 in all), two
// warp columns of 32 channels, tile_h 2 (64 positions per pass: one pass per w phase), all 32 input
// channels staged once (2 x 3 x 34 fp64 per channel, stride 212 = 4 mod 16), K = 256 = 16 steps,
// the row buffer split (the last w phase's values in x's memory), three blocks per SM.
TEST(FusedConvT3dLnGeluScale, DefaultPlan) {
  const ln::problem def{32, 32, 64, 16, 32, 32, 4, 2, 1, 1e-5, 1.0};
  const ln::detail::plan pl = ln::detail::make_plan(def);
  const conv::geometry& g = pl.g;
  EXPECT_EQ(g.warp_cols, 2);
  EXPECT_EQ(g.tile_h, 2);
  EXPECT_EQ(g.qw_min, 0);
  EXPECT_EQ(g.xd, 2);
  EXPECT_EQ(g.xh, 3);
  EXPECT_EQ(g.xw, 34);
  EXPECT_EQ(g.x_ci_stride, 212);
  EXPECT_EQ(g.n_chunks, 1);
  EXPECT_EQ(g.steps_stride, 16);
  EXPECT_EQ(g.n_groups, 1);
  EXPECT_EQ(g.qd_slots, 16);
  EXPECT_EQ(g.h_tiles, 16);
  EXPECT_EQ(g.n_blocks, 32 * 4 * 16 * 16);
  // Rows phase-major (2 w phases of 32 w bases): phase 0 in the region, phase 1 in x's memory, both
  // 33 floats per row (32 made odd).
  EXPECT_EQ(ln::detail::phase_offset(g, 1), 32);
  EXPECT_TRUE(pl.last_into_x);
  EXPECT_EQ(pl.region_row_values, 32);
  EXPECT_EQ(pl.row_stride, 33);
  // The persistent program: x 32 x 212 x 8 + the koff tables of both w phases, 2 x 256 x 4, then 64
  // columns of 16 + 4 bytes, 64 channels' biases of 8 (one group) and 128 LayerNorm rows of 33 x 4;
  // still three blocks per SM with the kernel's static shared memory.
  EXPECT_TRUE(pl.persistent);
  // Warp w's tile (h row w / 2, channels 32 (w % 2) ..) is the rows its threads normalise.
  EXPECT_TRUE(pl.rows_own_warp);
  EXPECT_EQ(pl.smem_bytes, 54272u + 2u * 1024u + 64u * 20u + 64u * 8u + 128u * 132u);
  EXPECT_LE(pl.smem_bytes + conv::k_persistent_static_bytes, conv::k_smem_three_per_sm_bytes);
  // Its fp32 box: w from -4 (16-byte aligned; the box's first column w = -1 is 3 floats in), 40
  // floats wide, 32 x 2 x 3 lines, at the top of x's memory (128-byte aligned), clear of the last
  // w phase's 128 rows of 33 floats below it.
  EXPECT_EQ(conv::box_w_start(g), -4);
  EXPECT_EQ(conv::box_w_skip(g), 3);
  EXPECT_EQ(conv::box_width(g), 40);
  EXPECT_EQ(conv::box_bytes(g), 32u * 2u * 3u * 40u * 4u);
  EXPECT_EQ(conv::box_offset(g), (54272u - 30720u) / 128u * 128u);
  EXPECT_GE(conv::box_offset(g), 128u * 132u);
  // The last phase's rows fit in x's memory.
  EXPECT_LE(128u * 132u, g.x_bytes);
  // Workspace: the arranged weights, 8 phases x 16 steps x 8 n8 tiles x 32 lanes x 4 floats, the
  // koff tables, 8 phases x 16 steps x 16 ints, the tile counter (a double's room) and the alignment.
  EXPECT_EQ(ln::workspace_bytes(def), 8u * 16u * 8u * 32u * 4u * 4u + 8u * 16u * 16u * 4u + 8u + 256u);
}

TEST(FusedConvT3dLnGeluScale, RejectsInvalidProblemsNamingTheField) {
  const ln::problem def{2, 3, 64, 4, 5, 32, 4, 2, 1, 1e-5, 1.0};
  auto message = [](const ln::problem& p) -> std::string {
    try {
      (void)ln::workspace_bytes(p);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message(def), "");
  ln::problem p = def;
  p.width = 31;  // W' = 62 != 64
  EXPECT_NE(message(p).find("width"), std::string::npos) << message(p);
  p = def;
  p.eps = 0.0;
  EXPECT_NE(message(p).find("eps"), std::string::npos);
  p = def;
  p.scaling_factor = std::numeric_limits<double>::infinity();
  EXPECT_NE(message(p).find("scaling_factor"), std::string::npos);
  p = def;
  p.width = 65, p.out_channels = 130;  // W' = 130: more than a block's row buffer holds
  EXPECT_NE(message(p).find("out_channels"), std::string::npos) << message(p);
  p = def;
  p.stride = 0;
  EXPECT_NE(message(p).find("stride"), std::string::npos);
  // k 64, s 1: one channel's input box (64 x 64 x 127 fp64) does not fit in shared memory.
  p = ln::problem{1, 1, 64, 1, 1, 1, 64, 1, 0, 1e-5, 1.0};
  EXPECT_NE(message(p).find("kernel_size"), std::string::npos) << message(p);
  // A sample's input of 2^36 elements: the staging indexes a sample's input in 32 bits.
  p = def;
  p.in_channels = 2048, p.depth = 1024, p.height = 1024;
  EXPECT_NE(message(p).find("in_channels*depth*height*width"), std::string::npos) << message(p);
}

// ---------------------------------------------------------------------------------------------
// Row math
// ---------------------------------------------------------------------------------------------

/// A row's mean and biased variance in long double: the truth the row math is held to.
struct truth_moments {
  long double mean, var;
};
truth_moments long_double_moments(const std::vector<float>& row) {
  const auto n = static_cast<long double>(row.size());
  long double mean = 0.0L;
  for (float v : row) mean += v;
  mean /= n;
  long double var = 0.0L;
  for (float v : row) var += (v - mean) * (v - mean);
  return truth_moments{mean, var / n};
}

// Mean and biased variance from values shifted by the row's first, exact to fp64 rounding on
// offset rows where E[y^2] - E[y]^2 would cancel (the SPEC trap), also when that first value is
// far from the others (the shift's worst case: the cancellation grows to n + 1), and 1/sqrt(var +
// eps) with eps once. The mean is within fp64 rounding of the row's largest magnitude.
RC_GTEST_PROP(FusedConvT3dLnGeluScaleMath, RowMomentsAreCentredAndBiased, ()) {
  const int n = *rc::gen::inRange(1, 129);
  const double offset = *rc::gen::element(0.0, 3.0, 1000.0);
  const double outlier = *rc::gen::element(0.0, 10.0, 1e3, -1e5);  // the first value's distance, in 0.01s
  const double eps = *rc::gen::element(1e-6, 1e-5, 0.5);
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  std::normal_distribution<float> n01(0.0f, 1.0f);
  std::vector<float> row(static_cast<std::size_t>(n));
  for (float& v : row) v = static_cast<float>(offset) + 0.01f * n01(rng);
  row[0] = static_cast<float>(row[0] + 0.01 * outlier);
  double largest = 0.0;
  for (float v : row) largest = std::max(largest, std::fabs(static_cast<double>(v)));
  const auto [mean, var] = long_double_moments(row);
  row.push_back(std::numeric_limits<float>::quiet_NaN());  // past the row: never read
  const ln::detail::row_norm rn = ln::detail::row_moments(row.data(), n, eps);
  RC_ASSERT(std::fabs(rn.mean - static_cast<double>(mean)) <= 1e-15 * (largest + 1.0));
  const double want = static_cast<double>(1.0L / std::sqrt(var + eps));
  RC_ASSERT(std::fabs(rn.rstd - want) <= 1e-12 * want);
}

// A row held as two segments (the split row buffer: the last w phase's values in x's memory) has
// bitwise the moments of the same values held whole, wherever the split falls (the partial sums
// are rotated around the second segment, so value j still goes to partial j % 4).
RC_GTEST_PROP(FusedConvT3dLnGeluScaleMath, RowMomentsOfTwoSegmentsAreTheWholeRowsMoments, ()) {
  const int n = *rc::gen::inRange(1, 129);
  const int region_row_values = *rc::gen::inRange(0, n + 1);
  const double eps = *rc::gen::element(1e-6, 1e-5, 0.5);
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  std::normal_distribution<float> n01(0.0f, 1.0f);
  std::uniform_int_distribution<int> scale(-40, 40);
  std::vector<float> row(static_cast<std::size_t>(n));
  // Magnitudes 2^-40..2^40 apart: the fp64 sums round, so a value summed into another partial than
  // in the whole row changes the bits (with values of one magnitude they are exact in any order, and
  // a misplaced second segment went unseen: the full mutant run of 2026-11-29).
  for (float& v : row) v = std::ldexp(3.0f + n01(rng), scale(rng));
  // The two segments apart in memory, as in the kernel.
  const std::vector<float> a(row.begin(), row.begin() + region_row_values), b(row.begin() + region_row_values, row.end());
  const ln::detail::row_norm whole = ln::detail::row_moments(row.data(), n, eps);
  const ln::detail::row_norm split = ln::detail::row_moments(a.data(), region_row_values, b.data(), n - region_row_values, eps);
  RC_ASSERT(std::memcmp(&whole.mean, &split.mean, sizeof(double)) == 0);
  RC_ASSERT(std::memcmp(&whole.rstd, &split.rstd, sizeof(double)) == 0);
}

// ---------------------------------------------------------------------------------------------
// The row math without fp64 arithmetic (float-float: layer_norm.cuh's row_moments_ff and
// ln_gelu_scale_ff, fused/math/float_float.cuh), for issue 36's engine
// ---------------------------------------------------------------------------------------------

// The float-float building blocks are exact where they say so: TwoSum's s + e is a + b and
// two_prod's p + e is a b, in long double, over magnitudes 2^-30..2^30 apart (a product's error
// term below fp32's normal range rounds: two_prod's "unless the product underflows").
RC_GTEST_PROP(FusedConvT3dLnGeluScaleMath, FloatFloatSumsAndProductsAreExact, ()) {
  namespace ff = fb::fused::ff;
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  std::normal_distribution<float> n01(0.0f, 1.0f);
  std::uniform_int_distribution<int> scale(-30, 30);
  for (int i = 0; i < 200; ++i) {
    const float a = std::ldexp(n01(rng), scale(rng)), b = std::ldexp(n01(rng), scale(rng));
    const ff::ff32 s = ff::two_sum(a, b);
    RC_ASSERT(static_cast<long double>(s.hi) + s.lo == static_cast<long double>(a) + b);
    const ff::ff32 p = ff::two_prod(a, b);
    RC_ASSERT(static_cast<long double>(p.hi) + p.lo == static_cast<long double>(a) * b);
  }
}

// hi + add_to_odd(lo, c) is hi + lo + c rounded once to nearest, where hi + lo is a float-float
// value and c lies far below lo. With lo exactly on hi's half-ulp tie, the sum lies just past the
// tie on c's side: it rounds to hi's neighbour on lo's side when c has lo's sign, else to hi (plain
// adds would absorb c into lo where c < ulp(lo) / 2, then break the tie to even). With lo anywhere
// below the tie the truth is the long double sum (c within 2^-38 of hi, so that it is exact there).
RC_GTEST_PROP(FusedConvT3dLnGeluScaleMath, FloatFloatRoundToOddAddsWithoutDoubleRounding, ()) {
  namespace ff = fb::fused::ff;
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f), fraction(-0.5f, 0.5f);
  std::uniform_int_distribution<int> exponent(-40, 40), far_below(26, 70), near_below(26, 38), coin(0, 1);
  for (int i = 0; i < 200; ++i) {
    const float m = mantissa(rng);
    RC_PRE(m != 1.0f);  // hi's neighbours equally far on both sides: one half-ulp tie
    const float hi = std::ldexp(m, exponent(rng)) * (coin(rng) ? 1.0f : -1.0f);
    const float ulp = std::fabs(std::nextafter(hi, 2.0f * hi) - hi);
    const bool tie = coin(rng) != 0;
    const float lo = tie ? 0.5f * ulp * (coin(rng) ? 1.0f : -1.0f) : fraction(rng) * ulp;
    float c = std::ldexp(fraction(rng), -(tie ? far_below(rng) : near_below(rng))) * std::fabs(hi);
    if (c == 0.0f) c = std::ldexp(std::fabs(hi), -70);
    float want;
    if (tie)
      want = (c > 0.0f) == (lo > 0.0f) ? std::nextafter(hi, lo > 0.0f ? 1e30f : -1e30f) : hi;
    else
      want = static_cast<float>(static_cast<long double>(hi) + lo + c);
    RC_ASSERT(fb::fused::rn::add32(hi, ff::add_to_odd(lo, c)) == want);
  }
}

/// A row of n values drawn for the float-float statistics: offset (x its scale) + spread, each value
/// times 2^scale; with `spread_binades` the values' magnitudes also span 2^-b..2^b (the wide attack).
std::vector<float> ff_row(std::mt19937_64& rng, int n, double offset, double spread, int row_scale, int spread_binades) {
  std::normal_distribution<double> n01(0.0, 1.0);
  std::uniform_int_distribution<int> binade(-spread_binades, spread_binades);
  std::vector<float> row(static_cast<std::size_t>(n));
  for (float& v : row)
    v = static_cast<float>(std::ldexp((offset + spread * n01(rng)) * std::ldexp(1.0, binade(rng)), row_scale));
  RC_PRE(std::all_of(row.begin(), row.end(), [](float v) { return std::isfinite(v); }));
  return row;
}

// row_moments_ff's mean and 1/sqrt(var + eps), read back from the row's scale, are within 2^-40 of
// the largest magnitude and 2^-38 relative of the long double truth, on offset rows (where E[y^2] -
// E[y]^2 cancels), rows spanning 80 binades, and whole rows from 2^-140 to 2^125 (the scale keeps
// every float-float intermediate in fp32's range; eps from 1e-30 to 0.5).
RC_GTEST_PROP(FusedConvT3dLnGeluScaleMath, FloatFloatRowMomentsMatchTheTruth, ()) {
  const int n = *rc::gen::inRange(1, 129);
  const double offset = *rc::gen::element(0.0, 3.0, 1000.0, 1e6);
  const double spread = *rc::gen::element(1e-3, 1.0);
  const int row_scale = *rc::gen::element(0, -140, -60, -20, 20, 60, 80);
  const int spread_binades = *rc::gen::element(0, 40);
  const double eps = *rc::gen::element(1e-30, 1e-6, 1e-5, 0.5);
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  std::vector<float> row = ff_row(rng, n, offset, spread, row_scale, spread_binades);
  long double largest = 0.0L;
  for (float v : row) largest = std::max(largest, std::fabs(static_cast<long double>(v)));
  const auto [mean, var] = long_double_moments(row);
  row.push_back(std::numeric_limits<float>::quiet_NaN());  // past the row: never read
  const ln::detail::row_norm_ff rn = ln::detail::row_moments_ff(row.data(), n, ln::detail::split_eps(eps));
  const long double got_mean =
      std::ldexp(static_cast<long double>(rn.c) + static_cast<long double>(rn.m1.hi) + rn.m1.lo, -rn.k);
  const long double got_rstd = std::ldexp(static_cast<long double>(rn.rstd.hi) + rn.rstd.lo, rn.k);
  const long double want_rstd = 1.0L / std::sqrt(var + eps);
  RC_ASSERT(std::fabs(got_mean - mean) <= std::ldexp(largest, -40));
  // A constant row whose eps 2^2k is below 2^-100 carries no rstd (its z are all 0: row_norm_ff);
  // where rstd 2^-k lies near fp32's smallest normal (rows of subnormal values, where eps decides),
  // its low part rounds away as a subnormal: fp32's 2^-23 there.
  const bool no_rstd = var == 0.0L && eps * std::ldexp(1.0, 2 * rn.k) < std::ldexp(1.0, -100);
  const int bits = std::fabs(rn.rstd.hi) < std::ldexp(1.0f, -102) ? 23 : 38;
  if (!no_rstd) RC_ASSERT(std::fabs(got_rstd - want_rstd) <= std::ldexp(want_rstd, -bits));
}

// The float-float normalised value u = gamma z + beta is the long double truth rounded to nearest
// fp32, but where the truth lies within 2^-40 |u| of a rounding tie (then either neighbour: z is
// float-float, ~2^-46), on offset rows (where the fp64 path's own mean rounds at 2^-53 of the
// offset), wide rows and tiny or huge ones. (Two-value rows put z within ~1e-16 of +-1, so u = beta
// -+ gamma lands on a tie whenever that sum needs a 25th bit.) On the default's inputs the kernel's
// outputs through it equal the fp64 path's: 0 of 1,069,464 sampled differ (H200 probe, 2026-11-29).
RC_GTEST_PROP(FusedConvT3dLnGeluScaleMath, FloatFloatNormalisedValuesAreTheRoundedTruth, ()) {
  const int n = *rc::gen::inRange(1, 129);
  const double offset = *rc::gen::element(0.0, 3.0, 1000.0, 1e6);
  const double spread = *rc::gen::element(1e-3, 1.0);
  const int row_scale = *rc::gen::element(0, -100, -20, 20, 60);
  const int spread_binades = *rc::gen::element(0, 20);
  const double eps = *rc::gen::element(1e-6, 1e-5, 0.5);
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  std::uniform_real_distribution<float> param(-2.0f, 2.0f);
  for (int r = 0; r < 20; ++r) {
    const std::vector<float> row = ff_row(rng, n, offset, spread, row_scale, spread_binades);
    const auto [mean, var] = long_double_moments(row);
    const long double rstd = 1.0L / std::sqrt(var + eps);
    const ln::detail::row_norm_ff rn = ln::detail::row_moments_ff(row.data(), n, ln::detail::split_eps(eps));
    for (float y : row) {
      const float gamma = param(rng), beta = param(rng);
      const long double truth = gamma * ((y - mean) * rstd) + beta;
      const auto nearest = static_cast<float>(truth);
      const float got = ln::detail::normalised_ff(y, rn, gamma, beta);
      if (got == nearest) continue;
      const float other = std::nextafter(nearest, static_cast<float>(truth > nearest ? 1e30 : -1e30));
      const long double tie = (static_cast<long double>(nearest) + other) / 2;
      RC_ASSERT(got == other);
      RC_ASSERT(std::fabs(truth - tie) <= std::ldexp(std::fabs(truth), -40));
    }
  }
}

// Special rows: zeros and a constant row normalise to 0 (outputs GELU(beta) exactly, as the fp64
// path), a row with an inf or a nan gives nan, and a row held as two segments has the whole row's
// statistics bit for bit (the partials rotate as row_moments').
TEST(FusedConvT3dLnGeluScaleMath, FloatFloatRowMomentsOfSpecialRows) {
  const ln::detail::eps_ff eps = ln::detail::split_eps(1e-5);
  for (float c : {0.0f, 3.0f, -1e30f, 1e-40f}) {
    const std::vector<float> row(64, c);
    const ln::detail::row_norm_ff rn = ln::detail::row_moments_ff(row.data(), 64, eps);
    const ln::detail::row_norm rn64 = ln::detail::row_moments(row.data(), 64, 1e-5);
    EXPECT_EQ(ln::detail::ln_gelu_scale_ff(c, rn, 0.7f, 0.3f, 2.0f), ln::detail::ln_gelu_scale(c, rn64.mean, rn64.rstd, 0.7f, 0.3f, 2.0f))
        << c;
  }
  for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    std::vector<float> row(16, 1.0f);
    row[5] = bad;
    const ln::detail::row_norm_ff rn = ln::detail::row_moments_ff(row.data(), 16, eps);
    EXPECT_TRUE(std::isnan(ln::detail::ln_gelu_scale_ff(1.0f, rn, 1.0f, 0.0f, 1.0f)));
  }
  std::mt19937_64 rng(7);
  const std::vector<float> row = ff_row(rng, 65, 3.0, 1.0, 0, 30);
  const ln::detail::row_norm_ff whole = ln::detail::row_moments_ff(row.data(), 65, eps);
  for (int split = 0; split <= 65; ++split) {
    const std::vector<float> a(row.begin(), row.begin() + split), b(row.begin() + split, row.end());
    const ln::detail::row_norm_ff part = ln::detail::row_moments_ff(a.data(), split, b.data(), 65 - split, eps);
    EXPECT_EQ(std::memcmp(&whole, &part, sizeof(whole)), 0) << split;
  }
}

// Exact erf GELU (not the tanh form, which differs by up to 4.7e-4), in fp32 as PyTorch writes it:
// within a few ulp of the exact value where |GELU| >= ~|u| / 4, and within 2e-7 |u| absolute in the
// far negative tail (where 1 + erf cancels); then gamma, beta and the scale.
TEST(FusedConvT3dLnGeluScaleMath, GeluIsTheErfForm) {
  for (float u = -12.0f; u <= 8.0f; u += 0.01f) {
    const long double want = 0.5L * u * std::erfc(-static_cast<long double>(u) / std::sqrt(2.0L));
    const double bound = 1e-6 * std::fabs(static_cast<double>(want)) + 2e-7 * std::fabs(u) * (u < 0.0f);
    EXPECT_LE(std::fabs(ln::detail::gelu_erf(u) - static_cast<double>(want)), bound) << u;
  }
  const float u = -1.5f;
  const double tanh_form = 0.5 * u * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (u + 0.044715 * u * u * u)));
  EXPECT_GT(std::fabs(ln::detail::gelu_erf(u) - tanh_form), 1e-4);
  // y = 2.25, mean 2, rstd 4: z = 1, u = 1 * 0.5 + (-1) = -0.5, out = -3 * gelu(-0.5)
  EXPECT_EQ(ln::detail::ln_gelu_scale(2.25f, 2.0, 4.0, 0.5, -1.0, -3.0f), ln::detail::gelu_erf(-0.5f) * -3.0f);
}

// The GELU's polynomial for the normal CDF's small side, across the fp32 range: every 65521st bit
// pattern with 1e-30 <= |u| <= 1e4 within 2^-22 |u| of u Phi(u) (measured: 1.83 x 2^-24 |u|, as
// 0.5 u (1 + erff(u / sqrt 2)) gives 1.8 x 2^-24 |u|); past the fit's range the small side keeps
// falling to 0 (a polynomial that turned back up would give GELU(-30) far from 0); specials as
// PyTorch's formula gives them.
TEST(FusedConvT3dLnGeluScaleMath, GeluIsWithinTwoUlpOfExactAcrossFp32) {
  int checked = 0;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 65521) {
    float u;
    const auto b32 = static_cast<uint32_t>(bits);
    std::memcpy(&u, &b32, sizeof u);
    if (!(std::fabs(u) >= 1e-30f && std::fabs(u) <= 1e4f)) continue;
    const long double want = 0.5L * u * std::erfc(-static_cast<long double>(u) / std::sqrt(2.0L));
    ASSERT_LE(std::fabs(static_cast<long double>(ln::detail::gelu_erf(u)) - want), std::ldexp(std::fabs(u), -22)) << u;
    ++checked;
  }
  EXPECT_GT(checked, 25000);  // 28922
  for (float u = -8.0f; u >= -1e4f; u *= 1.5f) EXPECT_LE(std::fabs(ln::detail::gelu_erf(u)), 1e-12f) << u;
  for (float u = 6.0f; u <= 1e4f; u *= 1.5f) EXPECT_EQ(ln::detail::gelu_erf(u), u) << u;
  EXPECT_EQ(ln::detail::gelu_erf(0.0f), 0.0f);
  EXPECT_EQ(ln::detail::gelu_erf(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(ln::detail::gelu_erf(std::numeric_limits<float>::quiet_NaN())));
}

// A row whose every tap reads zeros (border-only input, padding past the kernel) is exactly constant:
// the output is scale * GELU(beta[w']) bit for bit, as libtorch's exact zeros give.
TEST(FusedConvT3dLnGeluScaleHost, RowsOfZerosStayExact) {
  const ln::problem p{1, 19, 11, 3, 3, 6, 4, 3, 4, 1e-5, -3.0};  // the registry test's shrunk case
  ASSERT_EQ(convt_output_size(p.width, p.kernel_size, p.stride, p.padding, 0), p.out_channels);
  std::mt19937_64 rng(5);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(p.in_channels * p.depth * p.height * p.width), 0.0f);
  for (std::size_t e = 0; e < x.size(); ++e) {
    const int64_t in_plane = static_cast<int64_t>(e) % (p.height * p.width);
    const int64_t i = in_plane / p.width, j = in_plane % p.width;
    if (i == 0 || j == 0 || i == p.height - 1 || j == p.width - 1) x[e] = n01(rng);
  }
  std::vector<float> w(static_cast<std::size_t>(p.in_channels * p.out_channels * 64)), gamma(11), beta(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : w) v = 0.1f * u(rng);
  for (float& v : gamma) v = 2.0f * u(rng);
  for (float& v : beta) v = 2.0f * u(rng);
  std::vector<unsigned char> ws(ln::workspace_bytes(p));
  std::vector<float> out(static_cast<std::size_t>(p.out_channels * 2 * 2 * 11));
  ln::run_host(p, x.data(), w.data(), nullptr, gamma.data(), beta.data(), out.data(), ws.data());
  // Outputs (d', h') read input (d, h) = (1, 1) only (o + p = 3q + r, q = 1), whose only non-zero
  // columns 0 and 5 land outside W' = 11: every row reads zeros.
  for (std::size_t e = 0; e < out.size(); ++e) {
    const float want = ln::detail::gelu_erf(beta[e % 11]) * -3.0f;
    EXPECT_EQ(out[e], want) << e;
  }
}

// ---------------------------------------------------------------------------------------------
// Host executor vs fp64 brute force
// ---------------------------------------------------------------------------------------------

using fb::convt3d_test_inputs::dist;
using fb::convt3d_test_inputs::dist_name;
using fb::convt3d_test_inputs::fill_uniform;
using fb::convt3d_test_inputs::fill_x;

struct ln_case {
  ln::problem prob{};
  dist d = dist::uniform;
  std::vector<float> x, w, bias, gamma, beta;
  bool has_bias = true;
};

ln_case draw_case_of(const ln::problem& problem) {
  ln_case c;
  c.prob = problem;
  const ln::problem& p = c.prob;
  c.d = *rc::gen::element(dist::uniform, dist::normal, dist::offset, dist::border_only, dist::sparse);
  c.has_bias = *rc::gen::arbitrary<bool>();
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  const int64_t k3 = p.kernel_size * p.kernel_size * p.kernel_size;
  c.x.resize(static_cast<std::size_t>(p.batch * p.in_channels * p.depth * p.height * p.width));
  c.w.resize(static_cast<std::size_t>(p.in_channels * p.out_channels * k3));
  c.bias.resize(static_cast<std::size_t>(p.out_channels));
  c.gamma.resize(c.bias.size());
  c.beta.resize(c.bias.size());
  fill_x(c.x, p.height, p.width, c.d, rng);
  const float wb = 1.0f / std::sqrt(static_cast<float>(p.out_channels * k3));
  fill_uniform(c.w, -wb, wb, rng);
  fill_uniform(c.bias, -1.0f, 1.0f, rng);
  fill_uniform(c.gamma, -2.0f, 2.0f, rng);
  fill_uniform(c.beta, -2.0f, 2.0f, rng);
  return c;
}
ln_case draw_case(bool wide) { return draw_case_of(draw_problem(wide)); }

/// A problem the persistent program may serve: W a multiple of 4 (the tensor map's row pitch),
/// W' <= 128, all input channels staged at once where they fit.
ln::problem draw_persistent_problem() {
  ln::problem p{};
  p.kernel_size = *rc::gen::inRange<int64_t>(1, 5);
  p.stride = *rc::gen::inRange<int64_t>(1, 3);
  p.batch = *rc::gen::inRange<int64_t>(1, 3);
  p.in_channels = *rc::gen::inRange<int64_t>(1, 17);
  p.depth = *rc::gen::inRange<int64_t>(1, 6);
  p.height = *rc::gen::inRange<int64_t>(1, 8);
  p.width = 4 * *rc::gen::inRange<int64_t>(1, ((128 - p.kernel_size) / p.stride + 1) / 4 + 1);
  const int64_t pm = std::min({max_padding(p.depth, p.kernel_size, p.stride),
                               max_padding(p.height, p.kernel_size, p.stride),
                               max_padding(p.width, p.kernel_size, p.stride), p.kernel_size});
  p.padding = *rc::gen::inRange<int64_t>(0, pm + 1);
  p.out_channels = convt_output_size(p.width, p.kernel_size, p.stride, p.padding, 0);
  p.eps = *rc::gen::element(1e-5, 1e-3, 0.3, 1.0);
  p.scaling_factor = *rc::gen::element(1.0, -2.5, 0.37, 3.0);
  return p;
}

struct expected {
  std::vector<double> out;
  double conditioning;  ///< fp32 rounding amplification of the convolution through the LayerNorm
};

expected brute_force(const ln_case& c) {
  const ln::problem& p = c.prob;
  const int64_t k = p.kernel_size, s = p.stride, pd = p.padding;
  const fb::convt3d_test::convt3d_dims dims{p.batch, p.in_channels, p.out_channels, p.depth, p.height, p.width, k, s, pd};
  const int64_t Do = dims.out(p.depth), Ho = dims.out(p.height), Wo = dims.out(p.width);
  const int64_t Co = p.out_channels, B = p.batch;
  std::vector<double> mag2;
  const std::vector<double> y = fb::convt3d_test::conv_transpose3d_fp64(dims, c.x.data(), c.w.data(),
                                                                        c.has_bias ? c.bias.data() : nullptr, &mag2);
  expected ex;
  ex.out.resize(y.size());
  ex.conditioning = 0.0;
  for (int64_t row = 0; row < B * Co * Do * Ho; ++row) {
    const std::size_t r0 = static_cast<std::size_t>(row * Wo);
    double mean = 0.0;
    for (int64_t w = 0; w < Wo; ++w) mean += y[r0 + w];
    mean /= static_cast<double>(Wo);
    double var = 0.0;
    for (int64_t w = 0; w < Wo; ++w) var += (y[r0 + w] - mean) * (y[r0 + w] - mean);
    var /= static_cast<double>(Wo);
    const double inv = 1.0 / std::sqrt(var + p.eps);
    for (int64_t w = 0; w < Wo; ++w) {
      const double u = (y[r0 + w] - mean) * inv * c.gamma[w] + c.beta[w];
      ex.out[r0 + w] = p.scaling_factor * 0.5 * u * (1.0 + std::erf(u / std::sqrt(2.0)));
      ex.conditioning = std::max(ex.conditioning, (std::fabs(y[r0 + w]) + std::sqrt(mag2[r0 + w])) *
                                                      std::fabs(c.gamma[w]) * inv *
                                                      std::max(1.0, std::fabs(p.scaling_factor)));
    }
  }
  return ex;
}

/// Runs the host executor with the output poisoned with NaN and the workspace with 0xFF bytes.
/// cap_chunk > 0 stages at most that many input channels at once; block_program runs a persistent
/// plan's tiles as the block kernel does (one program per tile).
std::vector<float> run(const ln_case& c, int64_t cap_chunk = 0, bool block_program = false) {
  ln::detail::plan pl = ln::detail::make_plan(c.prob, cap_chunk);
  if (block_program) pl.persistent = false;
  if (cap_chunk > 0) RC_ASSERT(pl.g.chunk_ci <= cap_chunk);
  const std::size_t ws_bytes = ln::workspace_bytes(c.prob);
  std::vector<unsigned char> ws(std::max(ws_bytes, pl.workspace_bytes) + 64, 0xFF);
  const ln::problem& p = c.prob;
  std::vector<float> out(static_cast<std::size_t>(p.batch * p.out_channels * pl.g.dim[0].n_out * pl.g.dim[1].n_out *
                                                  pl.g.dim[2].n_out),
                         std::numeric_limits<float>::quiet_NaN());
  const ln::detail::args a{c.x.data(), c.w.data(), c.gamma.data(), c.beta.data(), out.data(),
                           fb::fused::detail::aligned_workspace(ws.data() + 4), c.has_bias ? c.bias.data() : nullptr};
  ln::detail::run_host_plan(pl, a);
  for (std::size_t i = pl.workspace_bytes + 4; i < ws.size(); ++i) RC_ASSERT(ws[i] == 0xFF);  // stays inside
  return out;
}

void check_against_brute_force(const ln_case& c, int64_t cap_chunk = 0) {
  const expected ex = brute_force(c);
  RC_PRE(ex.conditioning <= 20.0);  // as harness/verify/verify_plan.h's max_reference_conditioning
  const ln::problem& p = c.prob;
  RC_TAG(dist_name(c.d), c.has_bias ? "bias" : "no bias", p.out_channels > 64 ? "two groups, two passes" : "one group",
         cap_chunk > 0 ? "chunked" : "all channels staged");
  RC_LOG() << "B=" << p.batch << " Cin=" << p.in_channels << " Cout=W'=" << p.out_channels << " D=" << p.depth
           << " H=" << p.height << " W=" << p.width << " k=" << p.kernel_size << " s=" << p.stride
           << " p=" << p.padding << " eps=" << p.eps << " scale=" << p.scaling_factor << " " << dist_name(c.d)
           << " cond=" << ex.conditioning << "\n";
  // The host executor with the case's bias (added before the one rounding of y, as PyTorch does).
  const std::vector<float> got = run(c, cap_chunk);
  for (std::size_t i = 0; i < ex.out.size(); ++i) {
    const bool ok = std::isfinite(got[i]) && std::fabs(got[i] - ex.out[i]) <= 1e-5 + 1e-5 * std::fabs(ex.out[i]);
    if (!ok) RC_LOG() << "out[" << i << "] got " << got[i] << " want " << ex.out[i] << "\n";
    RC_ASSERT(ok);
  }
}

RC_GTEST_PROP(FusedConvT3dLnGeluScaleHost, MatchesFp64BruteForce, ()) { check_against_brute_force(draw_case(false)); }

RC_GTEST_PROP(FusedConvT3dLnGeluScaleHost, MatchesFp64BruteForceWithTwoGroupsAndTwoPasses, ()) {
  check_against_brute_force(draw_case(true));
}

RC_GTEST_PROP(FusedConvT3dLnGeluScaleHost, MatchesFp64BruteForceInChunks, ()) {
  const ln_case c = draw_case(*rc::gen::arbitrary<bool>());
  check_against_brute_force(c, *rc::gen::inRange<int64_t>(1, c.prob.in_channels + 1));
}

// y is rounded once from conv + bias, the value PyTorch's fp32 convolution rounds, not from conv
// alone (the bias cancels in exact arithmetic, but it sets the fp32 grid): on near-constant rows
// whose bias cancels their level, the kernel's output equals the LayerNorm (fp64) of fp32(conv +
// bias) to GELU's fp32 rounding, where rounding conv alone would be ulp(level) x rstd ~ 1e-4 off.
// The 4800d2d gate's failures (k = 1, near-constant inputs, a bias).
RC_GTEST_PROP(FusedConvT3dLnGeluScaleHost, RoundsConvPlusBiasOnceAsPyTorch, ()) {
  ln::problem p{};
  p.kernel_size = 1;
  p.stride = 1;
  p.padding = 0;
  p.batch = 1;
  p.in_channels = *rc::gen::inRange<int64_t>(4, 12);
  p.depth = *rc::gen::inRange<int64_t>(1, 3);
  p.height = *rc::gen::inRange<int64_t>(1, 4);
  p.width = *rc::gen::inRange<int64_t>(4, 9);
  p.out_channels = p.width;
  p.eps = 1e-12;
  p.scaling_factor = 1.0;
  ln_case c;
  c.prob = p;
  c.has_bias = true;
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  std::normal_distribution<float> normal;
  c.x.resize(static_cast<std::size_t>(p.in_channels * p.depth * p.height * p.width));
  for (float& v : c.x) v = 1.0f + 1e-3f * normal(rng);
  c.w.resize(static_cast<std::size_t>(p.in_channels * p.out_channels));
  for (float& v : c.w) v = normal(rng);
  // The bias cancels each channel's level sum_ci w (x ~ 1) but for a part in 1e3.
  c.bias.resize(static_cast<std::size_t>(p.out_channels));
  for (int64_t co = 0; co < p.out_channels; ++co) {
    double level = 0.0;
    for (int64_t ci = 0; ci < p.in_channels; ++ci) level += c.w[static_cast<std::size_t>(ci * p.out_channels + co)];
    c.bias[static_cast<std::size_t>(co)] = static_cast<float>(-level * (1.0 + 1e-3 * normal(rng)));
  }
  c.gamma.assign(static_cast<std::size_t>(p.out_channels), 1.0f);
  c.beta.assign(static_cast<std::size_t>(p.out_channels), 0.0f);
  const fb::convt3d_test::convt3d_dims dims{p.batch, p.in_channels, p.out_channels, p.depth, p.height, p.width, 1, 1, 0};
  const std::vector<double> y = fb::convt3d_test::conv_transpose3d_fp64(dims, c.x.data(), c.w.data(), c.bias.data(), nullptr);
  const std::vector<float> got = run(c);
  const int64_t n = p.width, rows = static_cast<int64_t>(y.size()) / n;
  double worst = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> y32(static_cast<std::size_t>(n));
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < n; ++i) mean += y32[i] = static_cast<float>(y[static_cast<std::size_t>(r * n + i)]);
    mean /= static_cast<double>(n);
    for (double v : y32) var += (v - mean) * (v - mean);
    const double rstd = 1.0 / std::sqrt(var / static_cast<double>(n) + p.eps);
    for (int64_t i = 0; i < n; ++i) {
      const double u = (y32[static_cast<std::size_t>(i)] - mean) * rstd;
      const double want = 0.5 * u * (1.0 + std::erf(u / std::sqrt(2.0)));
      worst = std::max(worst, std::fabs(got[static_cast<std::size_t>(r * n + i)] - want) / (1.0 + std::fabs(want)));
    }
  }
  RC_LOG() << "worst " << worst << "\n";
  RC_ASSERT(worst <= 2e-6);
}

// Repeating a call gives the same bits (determinism: a fixed order for every sum).
RC_GTEST_PROP(FusedConvT3dLnGeluScaleHost, RepeatedCallsAreBitwiseIdentical, ()) {
  const ln_case c = draw_case(false);
  const std::vector<float> base = run(c);
  const std::vector<float> again = run(c);
  RC_ASSERT(std::memcmp(base.data(), again.data(), base.size() * sizeof(float)) == 0);
}

// The persistent program computes each tile as the block program does: the same bits, whichever
// tiles a program runs one after another (its koff tables and columns kept across them, empty
// tiles skipped).
RC_GTEST_PROP(FusedConvT3dLnGeluScaleHost, PersistentProgramEqualsTheBlockProgram, ()) {
  const ln::problem problem = draw_persistent_problem();
  RC_PRE(problem.out_channels <= 128 && ln::detail::make_plan(problem).persistent);
  const ln_case c = draw_case_of(problem);
  const ln::detail::plan pl = ln::detail::make_plan(c.prob);
  RC_TAG(pl.last_into_x ? "split rows" : "whole rows", pl.g.n_groups > 1 ? "two groups" : "one group");
  const std::vector<float> persistent = run(c);
  const std::vector<float> blocks = run(c, 0, true);
  RC_ASSERT(std::memcmp(persistent.data(), blocks.data(), persistent.size() * sizeof(float)) == 0);
}

/// A grid of problems over C_in, W, k and s (padding 1 where k > 1 and s = 2; W' = C_out <= 128),
/// for checks of the plan's conditions.
std::vector<ln::problem> problem_grid(std::initializer_list<int64_t> c_ins, std::initializer_list<int64_t> widths) {
  std::vector<ln::problem> out;
  for (int64_t c_in : c_ins)
    for (int64_t w : widths)
      for (int64_t k : {1, 2, 3, 4})
        for (int64_t s : {1, 2}) {
          const int64_t pad = k > 1 && s == 2 ? 1 : 0, w_out = (w - 1) * s - 2 * pad + k;
          if (w_out >= 1 && w_out <= 128) out.push_back(ln::problem{2, c_in, w_out, 3, 4, w, k, s, pad, 1e-5, 1.0});
        }
  return out;
}
std::string grid_name(const ln::problem& p) {
  return "C_in " + std::to_string(p.in_channels) + " W " + std::to_string(p.width) + " k " +
         std::to_string(p.kernel_size) + " s " + std::to_string(p.stride);
}

// plan::rows_own_warp, worked out from the block's warp tiling instead of the C fragments: warp
// (warp_row, warp_col) holds positions [32 warp_row, +32) of each w phase (one position pass) and
// channels [32 warp_col, +32); the finish's thread t takes rows t, t + 128, ... So the flag holds
// exactly where every stored (position, channel) of every w phase lies in a row its own warp
// finishes, for persistent plans whose last w phase goes into x's memory.
TEST(FusedConvT3dLnGeluScale, RowsOwnWarpWhereEachWarpFinishesTheRowsItStored) {
  int own = 0, shared = 0;
  for (const ln::problem& p : problem_grid({1, 8, 32}, {4, 8, 16, 32, 60})) {
    const ln::detail::plan pl = ln::detail::make_plan(p);
    const conv::geometry& g = pl.g;
    bool expect = pl.persistent && pl.last_into_x;
    for (int rw = 0; rw < g.s[2] && expect; ++rw) {
      const int n_qw = g.order[2].count(rw);
      for (int m = 0; m < g.tile_h * n_qw && expect; ++m)
        for (int ch = 0; ch < pl.group_ch && expect; ++ch) {
          const int storing = (m / conv::k_warp_m) * g.warp_cols + ch / conv::k_warp_n;
          const int finishing = ((m / n_qw) * pl.group_ch + ch) % conv::k_threads / 32;
          expect = storing == finishing;
        }
    }
    EXPECT_EQ(pl.rows_own_warp, expect) << grid_name(p);
    (pl.rows_own_warp ? own : shared) += pl.persistent ? 1 : 0;
  }
  EXPECT_GT(own, 0);
  EXPECT_GT(shared, 0);
}

// The persistent kernel's x box, byte by byte, over a grid of problems: the tensor copy lands the
// fp32 box where the finish does not read (clear of the last w phase's rows in x's memory), and the
// conversion to fp64, round by round in the kernel's order (plane groups outer, element groups
// inner: mma_persistent_exec::commit_tile), reads every value before any round writes over it.
TEST(FusedConvT3dLnGeluScale, PersistentBoxIsClearOfTheRowsAndConvertsInPlace) {
  int persistent = 0;
  for (const ln::problem& p : problem_grid({1, 3, 8, 16, 32, 48}, {4, 8, 12, 16, 32})) {
    const ln::detail::plan pl = ln::detail::make_plan(p);
    if (!pl.persistent) continue;
    ++persistent;
    const conv::geometry& g = pl.g;
    enum : unsigned char { untouched, rows, box, box_read, converted };
    std::vector<unsigned char> mem(g.x_bytes, untouched);
    const std::size_t rows_bytes =
        pl.last_into_x ? static_cast<std::size_t>(pl.ln_rows) * pl.row_stride * sizeof(float) : 0;
    for (std::size_t b = 0; b < rows_bytes; ++b) mem[b] = rows;
    const int bw = conv::box_width(g), skip = conv::box_w_skip(g);
    const std::size_t base = conv::box_offset(g);
    ASSERT_EQ(base % 128, 0u);
    ASSERT_LE(base + conv::box_bytes(g), g.x_bytes) << grid_name(p);
    for (std::size_t b = base; b < base + conv::box_bytes(g); ++b) {
      ASSERT_NE(mem[b], rows) << "box over the rows: " << grid_name(p);
      mem[b] = box;
    }
    const int planes = static_cast<int>(g.c_in) * g.xd, plane_elems = g.xh * g.xw;
    for (int p0 = 0; p0 < planes; p0 += conv::k_warps * conv::k_commit_planes)
      for (int e0 = 0; e0 < plane_elems; e0 += 32 * conv::k_commit_elems) {
        const int p1 = std::min(p0 + conv::k_warps * conv::k_commit_planes, planes);
        const int e1 = std::min(e0 + 32 * conv::k_commit_elems, plane_elems);
        for (int q = p0; q < p1; ++q)
          for (int e = e0; e < e1; ++e) {
            const std::size_t at =
                base + (static_cast<std::size_t>(q) * g.xh * bw + (e / g.xw) * bw + skip + e % g.xw) * sizeof(float);
            for (std::size_t b = at; b < at + sizeof(float); ++b) {
              ASSERT_EQ(mem[b], box) << "read after a write: " << grid_name(p);
              mem[b] = box_read;
            }
          }
        for (int q = p0; q < p1; ++q)
          for (int e = e0; e < e1; ++e) {
            const std::size_t at =
                (static_cast<std::size_t>(q / g.xd) * g.x_ci_stride + (q % g.xd) * plane_elems + e) * sizeof(double);
            for (std::size_t b = at; b < at + sizeof(double); ++b) mem[b] = converted;
          }
        // Values of later rounds still there: checked when they are read.
      }
  }
  EXPECT_GT(persistent, 20);
}

}  // namespace
