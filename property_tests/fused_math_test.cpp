// Property tests of fused/ math (torch-free): the transposed-convolution index map, the band layout,
// the exact tap-rectangle sums, the stable logsumexp, and both host executors against brute-force
// fp64 scatter-form transposed convolutions written here with plain loops.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "fused/convt2d_gap_bias_lse/convt2d_gap_bias_lse.h"
#include "fused/convt2d_mul_gap/convt2d_mul_gap.h"
#include "fused/math/border_sums.cuh"
#include "fused/math/convt_index.cuh"
#include "fused/math/logsumexp.cuh"
#include "property_tests/input_dist.h"

namespace {

using fb::fused::band_1d;
using fb::fused::index_interval;

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/// One spatial dimension of a transposed convolution, valid under PyTorch's rules.
struct geom_1d {
  int64_t n_in, k, s, p, op, n_out;
};

/// Largest padding that keeps n_out >= 1: (n-1)s + k + op - 2p >= 1.
int64_t max_padding(int64_t n_in, int64_t k, int64_t s, int64_t op) { return ((n_in - 1) * s + k + op - 1) / 2; }

/// Draws a geometry; padding ranges over everything valid (p > k, crops at both borders, empty taps).
geom_1d draw_geom(int64_t max_n, int64_t max_k) {
  geom_1d g{};
  g.n_in = *rc::gen::inRange<int64_t>(1, max_n + 1);
  g.k = *rc::gen::inRange<int64_t>(1, max_k + 1);
  g.s = *rc::gen::inRange<int64_t>(1, 5);
  g.op = *rc::gen::inRange<int64_t>(0, g.s);
  g.p = *rc::gen::inRange<int64_t>(0, max_padding(g.n_in, g.k, g.s, g.op) + 1);
  g.n_out = fb::fused::convt_output_size(g.n_in, g.k, g.s, g.p, g.op);
  return g;
}

/// Input distributions of the fuzz domain (SPEC 2).
using fb::test_inputs::dist;
using fb::test_inputs::dist_name;
using fb::test_inputs::fill_uniform;

dist draw_dist() {
  return *rc::gen::elementOf(std::vector<dist>(fb::test_inputs::all_dists.begin(), fb::test_inputs::all_dists.end()));
}

/// Fills planes of size (h x w) laid out contiguously, following distribution d.
void fill_planes(std::vector<float>& v, int64_t h, int64_t w, dist d, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u01(0.0f, 1.0f);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  const int64_t hw = h * w;
  for (std::size_t e = 0; e < v.size(); ++e) {
    const int64_t in_plane = static_cast<int64_t>(e) % hw;
    const int64_t i = in_plane / w;
    const int64_t j = in_plane % w;
    switch (d) {
      case dist::uniform: v[e] = u01(rng); break;
      case dist::normal: v[e] = n01(rng); break;
      case dist::offset: v[e] = 100.0f + u01(rng); break;
      case dist::border_only:
        v[e] = (i == 0 || j == 0 || i == h - 1 || j == w - 1) ? 1.0f + n01(rng) : 0.0f;
        break;
      case dist::sparse: v[e] = (u01(rng) < 0.05f) ? 10.0f * n01(rng) : 0.0f; break;
    }
  }
}

/// SPEC 1: a (C_in, C_out, k, k) vs (C_out, C_in, k, k) weight mix-up hides when C_in == C_out, so
/// three cases in four make the channel counts differ.
void distinct_channels(int64_t c_in, int64_t& c_out) {
  if (c_out == c_in && *rc::gen::element(true, true, true, false)) c_out = c_in + 1;
}

bool close(double got, double expected, double atol, double rtol) {
  return std::isfinite(got) && std::fabs(got - expected) <= atol + rtol * std::fabs(expected);
}

// ---------------------------------------------------------------------------------------------
// Index map
// ---------------------------------------------------------------------------------------------

RC_GTEST_PROP(FusedIndexMap, OutputSizeMatchesFormula, ()) {
  const geom_1d g = draw_geom(64, 9);
  RC_ASSERT(g.n_out == (g.n_in - 1) * g.s - 2 * g.p + g.k + g.op);
  RC_ASSERT(g.n_out >= 1);
}

RC_GTEST_PROP(FusedIndexMap, FloorCeilDivMatchMath, ()) {
  const int64_t a = *rc::gen::inRange<int64_t>(-1000, 1001);
  const int64_t b = *rc::gen::inRange<int64_t>(1, 50);
  RC_ASSERT(fb::fused::floor_div(a, b) == static_cast<int64_t>(std::floor(static_cast<double>(a) / b)));
  RC_ASSERT(fb::fused::ceil_div(a, b) == static_cast<int64_t>(std::ceil(static_cast<double>(a) / b)));
}

// The interval of each tap equals the brute-force scatter set { i : 0 <= i*s - p + t < n_out }.
RC_GTEST_PROP(FusedIndexMap, TapIntervalMatchesScatterBruteForce, ()) {
  const geom_1d g = draw_geom(48, 9);
  for (int64_t t = 0; t < g.k; ++t) {
    const index_interval iv = fb::fused::convt_tap_interval(g.n_in, g.n_out, g.s, g.p, t);
    RC_ASSERT(iv.lo >= 0);
    RC_ASSERT(iv.hi <= g.n_in || iv.empty());
    RC_ASSERT(iv.hi >= iv.lo);
    int64_t count = 0;
    for (int64_t i = 0; i < g.n_in; ++i) {
      const int64_t o = i * g.s - g.p + t;
      const bool lands = o >= 0 && o < g.n_out;
      RC_ASSERT(lands == iv.contains(i));
      count += lands ? 1 : 0;
    }
    RC_ASSERT(count == iv.size());
  }
}

// Gather form (SPEC 1): output o gets tap t from i = (o + p - t)/s when divisible and in range. The
// number of (o, t) pairs with a source must equal the number of (i, t) pairs that land.
RC_GTEST_PROP(FusedIndexMap, ScatterAndGatherCountsAgree, ()) {
  const geom_1d g = draw_geom(40, 7);
  int64_t scatter = 0;
  for (int64_t t = 0; t < g.k; ++t) scatter += fb::fused::convt_tap_interval(g.n_in, g.n_out, g.s, g.p, t).size();
  int64_t gather = 0;
  for (int64_t o = 0; o < g.n_out; ++o)
    for (int64_t t = 0; t < g.k; ++t) {
      const int64_t num = o + g.p - t;
      if (num >= 0 && num % g.s == 0 && num < g.n_in * g.s) ++gather;
    }
  RC_ASSERT(scatter == gather);
}

// Every line outside a non-empty tap interval is a band line; band lines are increasing and unique.
RC_GTEST_PROP(FusedIndexMap, BandCoversEveryCroppedLine, ()) {
  const geom_1d g = draw_geom(48, 9);
  const band_1d band = fb::fused::convt_band(g.n_in, g.n_out, g.k, g.s, g.p);
  RC_ASSERT(band.low_end <= band.high_begin);
  RC_ASSERT(band.count() >= 0);
  RC_ASSERT(band.count() <= g.n_in);
  std::vector<char> is_band(static_cast<std::size_t>(g.n_in), 0);
  int64_t prev = -1;
  for (int64_t b = 0; b < band.count(); ++b) {
    const int64_t line = band.line(b);
    RC_ASSERT(line > prev);
    RC_ASSERT(line < g.n_in);
    is_band[static_cast<std::size_t>(line)] = 1;
    prev = line;
  }
  for (int64_t t = 0; t < g.k; ++t) {
    const index_interval iv = fb::fused::convt_tap_interval(g.n_in, g.n_out, g.s, g.p, t);
    if (iv.empty()) continue;
    for (int64_t i = 0; i < g.n_in; ++i)
      if (!iv.contains(i)) RC_ASSERT(is_band[static_cast<std::size_t>(i)] == 1);
  }
}

TEST(FusedIndexMap, DefaultSize44CropsOneLowRowOnly) {
  // #44 default: n_in 128, k 3, s 2, p 1, op 1 -> n_out 256; tap 0 loses row 0, nothing else is cropped.
  const int64_t n_out = fb::fused::convt_output_size(128, 3, 2, 1, 1);
  EXPECT_EQ(n_out, 256);
  const index_interval t0 = fb::fused::convt_tap_interval(128, n_out, 2, 1, 0);
  const index_interval t1 = fb::fused::convt_tap_interval(128, n_out, 2, 1, 1);
  const index_interval t2 = fb::fused::convt_tap_interval(128, n_out, 2, 1, 2);
  EXPECT_EQ(t0.lo, 1);
  EXPECT_EQ(t0.hi, 128);
  EXPECT_EQ(t1.lo, 0);
  EXPECT_EQ(t1.hi, 128);
  EXPECT_EQ(t2.lo, 0);
  EXPECT_EQ(t2.hi, 128);
  const band_1d band = fb::fused::convt_band(128, n_out, 3, 2, 1);
  EXPECT_EQ(band.count(), 1);
  EXPECT_EQ(band.line(0), 0);
}

TEST(FusedIndexMap, PaddingCropsBothBorders) {
  // n_in 4, k 2, s 2, p 2, op 0 -> n_out 4. Tap 0: o = 2i - 2 in [0, 4) -> i in [1, 3);
  // tap 1: o = 2i - 1 in [0, 4) -> i in [1, 3). Both taps lose row 0 (low crop) and row 3 (high crop).
  const int64_t n_out = fb::fused::convt_output_size(4, 2, 2, 2, 0);
  EXPECT_EQ(n_out, 4);
  for (int64_t t = 0; t < 2; ++t) {
    const index_interval iv = fb::fused::convt_tap_interval(4, n_out, 2, 2, t);
    EXPECT_EQ(iv.lo, 1) << "t=" << t;
    EXPECT_EQ(iv.hi, 3) << "t=" << t;
  }
  const band_1d band = fb::fused::convt_band(4, n_out, 2, 2, 2);
  EXPECT_EQ(band.count(), 2);
  EXPECT_EQ(band.line(0), 0);
  EXPECT_EQ(band.line(1), 3);
}

TEST(FusedIndexMap, EmptyTapWhenPaddingExceedsReach) {
  // n_in 1, k 5, s 1, p 2, op 0 -> n_out 1: only tap 2 lands (o = 0); the others are empty.
  const int64_t n_out = fb::fused::convt_output_size(1, 5, 1, 2, 0);
  EXPECT_EQ(n_out, 1);
  for (int64_t t = 0; t < 5; ++t)
    EXPECT_EQ(fb::fused::convt_tap_interval(1, n_out, 1, 2, t).empty(), t != 2) << "t=" << t;
  EXPECT_EQ(fb::fused::convt_band(1, n_out, 5, 1, 2).count(), 0);
}

RC_GTEST_PROP(FusedBorderSums, ColumnRowsInFlatRangeMatchesBruteForce, ()) {
  const int64_t h = *rc::gen::inRange<int64_t>(1, 60);
  const int64_t w = *rc::gen::inRange<int64_t>(1, 60);
  const int64_t a = *rc::gen::inRange<int64_t>(0, h * w + 1);
  const int64_t b = *rc::gen::inRange<int64_t>(a, h * w + 1);
  const int64_t j = *rc::gen::inRange<int64_t>(0, w);
  const index_interval rows = fb::fused::math::column_rows_in_flat_range(a, b, j, w, h);
  for (int64_t i = 0; i < h; ++i) {
    const int64_t e = i * w + j;
    RC_ASSERT((e >= a && e < b) == rows.contains(i));
  }
}

// ---------------------------------------------------------------------------------------------
// Tap-rectangle sums by inclusion-exclusion vs brute force
// ---------------------------------------------------------------------------------------------

RC_GTEST_PROP(FusedBorderSums, TapRectSumMatchesBruteForce, ()) {
  // Independent geometry per dimension (the kernel uses the same k, s, p, op for both, which is a
  // special case); crops at both borders and p > k included.
  const geom_1d gh = draw_geom(40, 7);
  geom_1d gw = draw_geom(40, 7);
  const dist d = draw_dist();
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  std::mt19937_64 rng(seed);
  std::vector<float> plane(static_cast<std::size_t>(gh.n_in * gw.n_in));
  fill_planes(plane, gh.n_in, gw.n_in, d, rng);
  const int64_t w = gw.n_in;
  const band_1d bh = fb::fused::convt_band(gh.n_in, gh.n_out, gh.k, gh.s, gh.p);
  const band_1d bw = fb::fused::convt_band(gw.n_in, gw.n_out, gw.k, gw.s, gw.p);
  // The whole plane, or (half the cases) a random flat chunk of it: every sum is restricted to it.
  const int64_t hw = gh.n_in * w;
  const bool whole = *rc::gen::arbitrary<bool>();
  const int64_t a = whole ? 0 : *rc::gen::inRange<int64_t>(0, hw + 1);
  const int64_t b_end = whole ? hw : *rc::gen::inRange<int64_t>(a, hw + 1);
  const auto in_chunk = [&](int64_t f) { return f >= a && f < b_end; };
  double total = 0.0;
  double total_abs = 0.0;
  for (int64_t f = a; f < b_end; ++f) {
    total += plane[static_cast<std::size_t>(f)];
    total_abs += std::fabs(plane[static_cast<std::size_t>(f)]);
  }
  std::vector<double> row_sums(static_cast<std::size_t>(bh.count()));
  std::vector<double> col_sums(static_cast<std::size_t>(bw.count()));
  for (int64_t b = 0; b < bh.count(); ++b) {
    double s = 0.0;
    for (int64_t j = 0; j < w; ++j)
      if (in_chunk(bh.line(b) * w + j)) s += plane[static_cast<std::size_t>(bh.line(b) * w + j)];
    row_sums[static_cast<std::size_t>(b)] = s;
  }
  for (int64_t b = 0; b < bw.count(); ++b) {
    double s = 0.0;
    for (int64_t i = 0; i < gh.n_in; ++i)
      if (in_chunk(i * w + bw.line(b))) s += plane[static_cast<std::size_t>(i * w + bw.line(b))];
    col_sums[static_cast<std::size_t>(b)] = s;
  }
  // The corners as a kernel gathers them beforehand (every band x band element, as stored).
  std::vector<double> corners(static_cast<std::size_t>(bh.count() * bw.count()));
  for (int64_t br = 0; br < bh.count(); ++br)
    for (int64_t bc = 0; bc < bw.count(); ++bc)
      corners[static_cast<std::size_t>(br * bw.count() + bc)] = plane[static_cast<std::size_t>(bh.line(br) * w + bw.line(bc))];
  for (int64_t th = 0; th < gh.k; ++th)
    for (int64_t tw = 0; tw < gw.k; ++tw) {
      const index_interval ih = fb::fused::convt_tap_interval(gh.n_in, gh.n_out, gh.s, gh.p, th);
      const index_interval iw = fb::fused::convt_tap_interval(gw.n_in, gw.n_out, gw.s, gw.p, tw);
      double brute = 0.0;
      for (int64_t i = 0; i < gh.n_in; ++i)
        for (int64_t j = 0; j < w; ++j) {
          const int64_t oh = i * gh.s - gh.p + th;
          const int64_t ow = j * gw.s - gw.p + tw;
          if (oh >= 0 && oh < gh.n_out && ow >= 0 && ow < gw.n_out && in_chunk(i * w + j))
            brute += plane[static_cast<std::size_t>(i * w + j)];
        }
      const double got = fb::fused::math::tap_rect_sum(total, bh, bw, ih, iw, row_sums.data(), col_sums.data(),
                                                       fb::fused::math::corners_from_plane{plane.data()}, w, a, b_end);
      RC_ASSERT(std::fabs(got - brute) <= 1e-12 * (total_abs + 1.0));
      const double gathered = fb::fused::math::tap_rect_sum(
          total, bh, bw, ih, iw, row_sums.data(), col_sums.data(),
          fb::fused::math::corners_gathered{corners.data(), bw.count()}, w, a, b_end);
      RC_ASSERT(std::memcmp(&gathered, &got, sizeof got) == 0);
    }
}

// ---------------------------------------------------------------------------------------------
// logsumexp
// ---------------------------------------------------------------------------------------------

RC_GTEST_PROP(FusedLogsumexp, MatchesNaiveAndIsStable, ()) {
  const int n = *rc::gen::inRange(1, 200);
  const double shift = *rc::gen::element(0.0, 500.0, -800.0, 1e4);
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01(0.0, 3.0);
  std::vector<double> z(static_cast<std::size_t>(n));
  for (double& v : z) v = n01(rng);
  double naive = 0.0;
  for (double v : z) naive += std::exp(v);
  naive = std::log(naive);
  for (double& v : z) v += shift;
  const double got = fb::fused::math::logsumexp(z.data(), n);
  RC_ASSERT(std::isfinite(got));
  RC_ASSERT(std::fabs(got - (naive + shift)) <= 1e-12 * (std::fabs(shift) + std::fabs(naive) + 1.0));
}

// ---------------------------------------------------------------------------------------------
// Host executors vs brute-force fp64 scatter-form transposed convolution
// ---------------------------------------------------------------------------------------------

/// fp64 ConvTranspose2d in scatter form: y[b, co, oh, ow] = bias[co] + sum x[b, ci, i, j] W[ci, co, th, tw]
/// over all (i, j, th, tw) with oh = i*s - p + th, ow = j*s - p + tw inside the output.
std::vector<double> brute_convt2d(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& bias,
                                  int64_t batch, int64_t c_in, int64_t c_out, int64_t h, int64_t wd, int64_t k,
                                  int64_t s, int64_t p, int64_t ho, int64_t wo) {
  std::vector<double> y(static_cast<std::size_t>(batch * c_out * ho * wo), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t co = 0; co < c_out; ++co)
      for (int64_t o = 0; o < ho * wo; ++o) y[static_cast<std::size_t>((b * c_out + co) * ho * wo + o)] = bias[co];
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t ci = 0; ci < c_in; ++ci)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < wd; ++j) {
          const double xv = x[static_cast<std::size_t>(((b * c_in + ci) * h + i) * wd + j)];
          for (int64_t co = 0; co < c_out; ++co)
            for (int64_t th = 0; th < k; ++th) {
              const int64_t oh = i * s - p + th;
              if (oh < 0 || oh >= ho) continue;
              for (int64_t tw = 0; tw < k; ++tw) {
                const int64_t ow = j * s - p + tw;
                if (ow < 0 || ow >= wo) continue;
                y[static_cast<std::size_t>(((b * c_out + co) * ho + oh) * wo + ow)] +=
                    xv * w[static_cast<std::size_t>(((ci * c_out + co) * k + th) * k + tw)];
              }
            }
        }
  return y;
}

/// Workspace of exactly `bytes`, handed out at a deliberately misaligned address, with guard bytes
/// after it that must stay untouched (checks workspace_bytes covers the alignment slack).
struct guarded_workspace {
  static constexpr std::size_t guard = 64;
  std::vector<unsigned char> buf;
  std::size_t bytes;
  explicit guarded_workspace(std::size_t n) : buf(n + 4 + guard, 0xA5), bytes(n) {}
  void* ptr() { return buf.data() + 4; }  // 4 bytes past the allocator's (>= 8-byte) alignment
  bool guard_intact() const {
    for (std::size_t i = 4 + bytes; i < buf.size(); ++i)
      if (buf[i] != 0xA5) return false;
    return true;
  }
};

RC_GTEST_PROP(FusedHostExecutor, MulGapMatchesBruteForce, ()) {
  namespace mg = fb::fused::convt2d_mul_gap;
  // Small planes (many configs) or, one case in four, planes of 30000-67600 elements: one to three
  // work items of k_item_elems (32768) each, so the per-item inclusion-exclusion is exercised with
  // band rows, columns and corners split across items.
  // RapidCheck scales inRange with its size parameter, so early cases are small and later ones larger.
  const bool big = *rc::gen::element(true, false, false, false);
  mg::problem prob{};
  prob.batch = *rc::gen::inRange<int64_t>(1, big ? 2 : 4);
  prob.in_channels = *rc::gen::inRange<int64_t>(1, big ? 3 : 7);
  prob.out_channels = *rc::gen::inRange<int64_t>(1, big ? 3 : 7);
  distinct_channels(prob.in_channels, prob.out_channels);
  prob.height = big ? *rc::gen::inRange<int64_t>(150, 261) : *rc::gen::inRange<int64_t>(1, 14);
  prob.width = big ? *rc::gen::inRange<int64_t>(200, 261) : *rc::gen::inRange<int64_t>(1, 14);
  prob.kernel_size = *rc::gen::inRange<int64_t>(1, big ? 4 : 8);
  prob.stride = *rc::gen::inRange<int64_t>(1, 5);
  prob.output_padding = *rc::gen::inRange<int64_t>(0, prob.stride);
  const int64_t pmax = std::min(max_padding(prob.height, prob.kernel_size, prob.stride, prob.output_padding),
                                max_padding(prob.width, prob.kernel_size, prob.stride, prob.output_padding));
  // Half the cases: usual paddings (p <= k); the rest anywhere valid (p > k, crops at both borders).
  const bool any_padding = *rc::gen::element(true, false);
  prob.padding = *rc::gen::inRange<int64_t>(0, (any_padding ? pmax : std::min(pmax, prob.kernel_size)) + 1);
  prob.multiplier = *rc::gen::element(0.5f, -1.75f, 3.0f, -0.01f);
  const dist d = draw_dist();
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  std::mt19937_64 rng(seed);

  const int64_t k = prob.kernel_size;
  std::vector<float> x(static_cast<std::size_t>(prob.batch * prob.in_channels * prob.height * prob.width));
  std::vector<float> w(static_cast<std::size_t>(prob.in_channels * prob.out_channels * k * k));
  std::vector<float> bias(static_cast<std::size_t>(prob.out_channels));
  fill_planes(x, prob.height, prob.width, d, rng);
  fill_uniform(w, -1.0f, 1.0f, rng);
  fill_uniform(bias, -2.0f, 2.0f, rng);
  std::vector<float> out(static_cast<std::size_t>(prob.batch * prob.out_channels),
                         std::numeric_limits<float>::quiet_NaN());
  guarded_workspace ws(mg::workspace_bytes(prob));
  mg::run_host(prob, x.data(), w.data(), bias.data(), out.data(), ws.ptr());
  RC_ASSERT(ws.guard_intact());

  const int64_t ho = fb::fused::convt_output_size(prob.height, k, prob.stride, prob.padding, prob.output_padding);
  const int64_t wo = fb::fused::convt_output_size(prob.width, k, prob.stride, prob.padding, prob.output_padding);
  const std::vector<double> y = brute_convt2d(x, w, bias, prob.batch, prob.in_channels, prob.out_channels,
                                              prob.height, prob.width, k, prob.stride, prob.padding, ho, wo);
  for (int64_t b = 0; b < prob.batch; ++b)
    for (int64_t co = 0; co < prob.out_channels; ++co) {
      double mean = 0.0;
      const std::size_t base = static_cast<std::size_t>((b * prob.out_channels + co) * ho * wo);
      for (int64_t o = 0; o < ho * wo; ++o) mean += static_cast<double>(prob.multiplier) * y[base + o];
      mean /= static_cast<double>(ho * wo);
      const double got = out[static_cast<std::size_t>(b * prob.out_channels + co)];
      RC_LOG() << "b=" << b << " co=" << co << " got=" << got << " expected=" << mean << " dist=" << dist_name(d)
               << " H=" << prob.height << " W=" << prob.width << " k=" << k << " s=" << prob.stride
               << " p=" << prob.padding << " op=" << prob.output_padding << "\n";
      RC_ASSERT(close(got, mean, 1e-5, 1e-5));
    }
}

RC_GTEST_PROP(FusedHostExecutor, GapBiasLseMatchesBruteForce, ()) {
  namespace gl = fb::fused::convt2d_gap_bias_lse;
  const bool big = *rc::gen::element(true, false, false, false);
  gl::problem prob{};
  prob.batch = *rc::gen::inRange<int64_t>(1, big ? 2 : 4);
  prob.in_channels = *rc::gen::inRange<int64_t>(1, big ? 3 : 7);
  prob.out_channels = *rc::gen::inRange<int64_t>(1, big ? 3 : 9);
  distinct_channels(prob.in_channels, prob.out_channels);
  prob.height = big ? *rc::gen::inRange<int64_t>(150, 261) : *rc::gen::inRange<int64_t>(1, 14);
  prob.width = big ? *rc::gen::inRange<int64_t>(200, 261) : *rc::gen::inRange<int64_t>(1, 14);
  prob.kernel_size = *rc::gen::inRange<int64_t>(1, big ? 4 : 8);
  const float bias_scale = *rc::gen::element(1.0f, 50.0f, 500.0f);  // large biases test the stable form
  const dist d = draw_dist();
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  std::mt19937_64 rng(seed);

  const int64_t k = prob.kernel_size;
  std::vector<float> x(static_cast<std::size_t>(prob.batch * prob.in_channels * prob.height * prob.width));
  std::vector<float> w(static_cast<std::size_t>(prob.in_channels * prob.out_channels * k * k));
  std::vector<float> conv_bias(static_cast<std::size_t>(prob.out_channels));
  std::vector<float> bias(static_cast<std::size_t>(prob.out_channels));
  fill_planes(x, prob.height, prob.width, d, rng);
  fill_uniform(w, -1.0f, 1.0f, rng);
  fill_uniform(conv_bias, -2.0f, 2.0f, rng);
  fill_uniform(bias, -bias_scale, bias_scale, rng);
  std::vector<float> out(static_cast<std::size_t>(prob.batch), std::numeric_limits<float>::quiet_NaN());
  guarded_workspace ws(gl::workspace_bytes(prob));
  gl::run_host(prob, x.data(), w.data(), conv_bias.data(), bias.data(), out.data(),
               ws.ptr());
  RC_ASSERT(ws.guard_intact());

  const int64_t ho = prob.height + k - 1;
  const int64_t wo = prob.width + k - 1;
  const std::vector<double> y = brute_convt2d(x, w, conv_bias, prob.batch, prob.in_channels, prob.out_channels,
                                              prob.height, prob.width, k, 1, 0, ho, wo);
  for (int64_t b = 0; b < prob.batch; ++b) {
    std::vector<double> z(static_cast<std::size_t>(prob.out_channels));
    for (int64_t co = 0; co < prob.out_channels; ++co) {
      double mean = 0.0;
      const std::size_t base = static_cast<std::size_t>((b * prob.out_channels + co) * ho * wo);
      for (int64_t o = 0; o < ho * wo; ++o) mean += y[base + o];
      z[static_cast<std::size_t>(co)] = mean / static_cast<double>(ho * wo) + bias[static_cast<std::size_t>(co)];
    }
    double zmax = z[0];
    for (double v : z) zmax = std::max(zmax, v);
    double sum = 0.0;
    for (double v : z) sum += std::exp(v - zmax);
    const double expected = 10.0 * (zmax + std::log(sum));
    const double got = out[static_cast<std::size_t>(b)];
    RC_LOG() << "b=" << b << " got=" << got << " expected=" << expected << " dist=" << dist_name(d) << "\n";
    RC_ASSERT(close(got, expected, 1e-5, 1e-5));
  }
}

// ---------------------------------------------------------------------------------------------
// Validation and sizing
// ---------------------------------------------------------------------------------------------

std::string invalid_message(const fb::fused::convt2d_mul_gap::problem& p) {
  try {
    (void)fb::fused::convt2d_mul_gap::workspace_bytes(p);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(FusedValidation, MulGapRejectsInvalidConfigsNamingTheField) {
  const fb::fused::convt2d_mul_gap::problem ok{16, 64, 128, 128, 128, 3, 2, 1, 1, 0.5f};
  EXPECT_EQ(invalid_message(ok), "");
  auto p = ok;
  p.output_padding = 2;
  EXPECT_NE(invalid_message(p).find("output_padding"), std::string::npos);
  p = ok;
  p.stride = 0;
  EXPECT_NE(invalid_message(p).find("stride"), std::string::npos);
  p = ok;
  p.padding = 1000;
  EXPECT_NE(invalid_message(p).find("padding"), std::string::npos);
  p = ok;
  p.in_channels = 0;
  EXPECT_NE(invalid_message(p).find("in_channels"), std::string::npos);
  p = ok;
  p.padding = -1;
  EXPECT_NE(invalid_message(p).find("padding"), std::string::npos);
}

TEST(FusedValidation, GapBiasLseRejectsInvalidConfigs) {
  fb::fused::convt2d_gap_bias_lse::problem p{16, 64, 128, 512, 512, 3};
  EXPECT_GT(fb::fused::convt2d_gap_bias_lse::workspace_bytes(p), 0u);
  p.kernel_size = 0;
  EXPECT_THROW((void)fb::fused::convt2d_gap_bias_lse::workspace_bytes(p), std::invalid_argument);
}

TEST(FusedValidation, WorkspaceIsSmallAtDefaultSizes) {
  // #44: 1024 items x (1 band row + 1 band column + 9 R values + 128 contributions) fp64, + 16 counters.
  const std::size_t ws44 = fb::fused::convt2d_mul_gap::workspace_bytes({16, 64, 128, 128, 128, 3, 2, 1, 1, 0.5f});
  EXPECT_LT(ws44, 1152u * 1024u);
  // #42: 65536 chunk sums + 8192 Wsum + 1024 S + 2048 z.
  const std::size_t ws42 = fb::fused::convt2d_gap_bias_lse::workspace_bytes({16, 64, 128, 512, 512, 3});
  EXPECT_LT(ws42, 1024u * 1024u);
}

}  // namespace
