// Property tests of the #34 fused pieces and host executor (torch-free): the convolution tile cut
// into boxes of outputs (every output exactly once, every tap inside the staged tile, a W' row in
// one block), the row math (LayerNorm statistics from centred values, exact erf GELU), and the host
// executor (the kernels' own block programs) against a plain fp64 ConvTranspose3d + LayerNorm over
// W' + GELU + scale written here, over every input distribution, with random gamma, beta, eps and
// scale; variants, chunks and repeated calls bitwise equal; validation and sizes.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "fused/common/convt3d_ln_gelu_scale_plan.h"
#include "fused/common/convt3d_tile.cuh"
#include "fused/common/convt_phase.cuh"
#include "fused/convt3d_ln_gelu_scale.h"

#include "property_tests/convt3d_test_inputs.h"

namespace {

namespace ln = fb::fused::convt3d_ln_gelu_scale;
namespace tile = fb::fused::convt3d_tile;
using fb::fused::convt_output_size;

/// Largest padding that keeps n_out >= 1.
int64_t max_padding(int64_t n_in, int64_t k, int64_t s) { return ((n_in - 1) * s + k - 1) / 2; }

/// A valid problem of the fuzz domain's kind, small enough for the brute force: W' == C_out <= 64.
/// wide: stride 1 and W' in 33..64 (two w sub-tiles per row) or, half the time, many input channels
/// (chunked staging when forced) and several d and h tiles.
ln::problem draw_problem(bool wide) {
  ln::problem p{};
  p.kernel_size = *rc::gen::inRange<int64_t>(1, wide ? 4 : 7);
  p.stride = wide ? 1 : *rc::gen::inRange<int64_t>(1, 5);
  p.batch = *rc::gen::inRange<int64_t>(1, 3);
  p.in_channels = *rc::gen::inRange<int64_t>(1, wide ? 9 : 6);
  p.depth = *rc::gen::inRange<int64_t>(1, wide ? 6 : 5);
  p.height = *rc::gen::inRange<int64_t>(1, wide ? 20 : 7);
  const int64_t w_target = wide ? *rc::gen::inRange<int64_t>(33, 65) : *rc::gen::inRange<int64_t>(1, 65);
  // Width from the target W' (padding 0), then a padding that keeps W' >= 1 and, for wide, > 32.
  p.width = std::max<int64_t>(1, (w_target - p.kernel_size) / p.stride + 1);
  const int64_t pm = std::min({max_padding(p.depth, p.kernel_size, p.stride),
                               max_padding(p.height, p.kernel_size, p.stride),
                               max_padding(p.width, p.kernel_size, p.stride), p.kernel_size});
  p.padding = *rc::gen::inRange<int64_t>(0, pm + 1);
  while (wide && p.padding > 0 && convt_output_size(p.width, p.kernel_size, p.stride, p.padding, 0) <= 32) --p.padding;
  p.out_channels = convt_output_size(p.width, p.kernel_size, p.stride, p.padding, 0);
  p.eps = *rc::gen::element(1e-5, 1e-3, 0.3, 1.0);
  p.scaling_factor = *rc::gen::element(1.0, -2.5, 0.37, 3.0);
  return p;
}

tile::geometry geometry_of(const ln::problem& p) { return ln::detail::make_plan(p).g; }

// Every output (b, co, od, oh, ow) is produced by exactly one (block, phase, sub-tile, thread, row,
// column), every tap of it that reads the input reads inside the block's staged tile, and a row
// (b, co, od, oh) lies in one block and one (d, h) phase pair: what the epilogue's row buffer needs.
RC_GTEST_PROP(FusedConvT3dLnGeluScaleTile, EveryOutputOnceTapsInsideRowsInOneBlock, ()) {
  const ln::problem p = draw_problem(*rc::gen::arbitrary<bool>());
  const tile::geometry g = geometry_of(p);
  RC_ASSERT(g.by_outputs == 1);
  RC_ASSERT(g.n_tile[2] == 1);
  const int64_t od_n = g.dim[0].n_out, oh_n = g.dim[1].n_out, ow_n = g.dim[2].n_out;
  const int64_t n_rows = p.batch * p.out_channels * od_n * oh_n;
  std::vector<int> hits(static_cast<std::size_t>(n_rows * ow_n), 0);
  std::vector<int64_t> row_owner(static_cast<std::size_t>(n_rows), -1);
  const int xdim[3] = {g.xd, g.xh, g.xw};
  for (int64_t block = 0; block < g.n_blocks; ++block) {
    const tile::block_pos bp = tile::block_of(g, block);
    for (int ph = 0; ph < g.n_phases; ++ph) {
      const tile::phase_pos pp = tile::phase_of(g, ph);
      const int64_t pair = pp.r[0] * p.stride + pp.r[1];
      for (int u = 0; u < g.w_sub; ++u)
        for (int tid = 0; tid < tile::k_threads; ++tid) {
          const tile::thread_pos t = tile::thread_in(tid, tile::w_shift(g, pp), u);
          const tile::thread_outputs o = tile::outputs_of(g, bp, pp, t);
          if (!o.active) continue;
          RC_ASSERT(tile::has_outputs(g, bp, pp, t) || o.n_co <= 0 ||
                    std::none_of(o.row_ok, o.row_ok + tile::k_rows, [](bool b) { return b; }));
          for (int r = 0; r < tile::k_rows; ++r) {
            if (!o.row_ok[r]) continue;
            const int64_t out_coord[3] = {o.od, o.oh[r], o.ow};
            const int64_t q[3] = {bp.q0[0] + t.dq, bp.q0[1] + t.hq + r, bp.q0[2] + t.wq};
            for (int d = 0; d < 3; ++d) {
              RC_ASSERT(g.dim[d].base_of(out_coord[d]) == q[d]);
              RC_ASSERT(g.dim[d].phase_of(out_coord[d]) == pp.r[d]);
              for (int64_t j = 0; j < g.dim[d].taps(pp.r[d]); ++j) {
                const int64_t pos = q[d] - bp.q0[d] + (g.j0 - 1) - j;
                RC_ASSERT(pos >= 0 && pos < xdim[d]);
              }
            }
            for (int c = 0; c < o.n_co; ++c) {
              const int64_t co = o.co0 + c;
              RC_ASSERT(co < p.out_channels);
              const int64_t row = ((bp.b * p.out_channels + co) * od_n + o.od) * oh_n + o.oh[r];
              const int64_t owner = block * 64 + pair;
              int64_t& ro = row_owner[static_cast<std::size_t>(row)];
              RC_ASSERT(ro == -1 || ro == owner);
              ro = owner;
              ++hits[static_cast<std::size_t>(row * ow_n + o.ow)];
            }
          }
        }
    }
  }
  for (int h : hits) RC_ASSERT(h == 1);
}

// The default geometry: 64 outputs per W' row in one tile of 33 bases (k 4, s 2, p 1), 9 x 5 x 1
// tiles per sample (17 d and 33 h bases), unrolled taps, all 32 input channels staged once, one
// block per SM.
TEST(FusedConvT3dLnGeluScale, DefaultPlan) {
  const ln::problem def{32, 32, 64, 16, 32, 32, 4, 2, 1, 1e-5, 1.0};
  const ln::detail::plan pl = ln::detail::make_plan(def);
  EXPECT_EQ(pl.g.variant, 2);
  EXPECT_EQ(pl.g.w_sub, 1);
  EXPECT_EQ(pl.g.n_tile[0], 9);
  EXPECT_EQ(pl.g.n_tile[1], 5);
  EXPECT_EQ(pl.g.n_tile[2], 1);
  EXPECT_EQ(pl.g.n_ci_chunks, 1);
  EXPECT_EQ(pl.g.n_blocks, 32 * 45 * 4);
  EXPECT_LE(pl.smem_bytes, tile::k_smem_max_bytes);
  EXPECT_EQ(pl.row_stride, 65);
  // Workspace: centre partials (32 x 32 x 2 x 256 doubles), centres (1024 floats), shares V (32 x
  // 64 x 64 doubles), K(o) per border class (32 x 8 phases x 64 x 64 doubles), arranged weights
  // (32 x 64 x 64 floats), alignment: 14,160,128 bytes.
  EXPECT_EQ(ln::workspace_bytes(def), (524288u + 512u + 131072u + 1048576u + 65536u) * 8u + 256u);
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
}

// ---------------------------------------------------------------------------------------------
// Row math
// ---------------------------------------------------------------------------------------------

// Mean and biased variance from centred values, exact to fp64 rounding on offset rows where
// E[y^2] - E[y]^2 in fp32 would cancel (the SPEC trap), and 1/sqrt(var + eps) with eps once.
RC_GTEST_PROP(FusedConvT3dLnGeluScaleMath, RowMomentsAreCentredAndBiased, ()) {
  const int n = *rc::gen::inRange(1, 129);
  const double offset = *rc::gen::element(0.0, 3.0, 1000.0);
  const double eps = *rc::gen::element(1e-6, 1e-5, 0.5);
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  std::normal_distribution<float> n01(0.0f, 1.0f);
  std::vector<float> row(static_cast<std::size_t>(n));
  for (float& v : row) v = static_cast<float>(offset) + 0.01f * n01(rng);
  long double mean = 0.0L;
  for (float v : row) mean += v;
  mean /= n;
  long double var = 0.0L;
  for (float v : row) var += (v - mean) * (v - mean);
  var /= n;  // biased
  const ln::detail::row_norm rn = ln::detail::row_moments(row.data(), n, eps);
  RC_ASSERT(std::fabs(rn.mean - static_cast<double>(mean)) <= 1e-15 * (std::fabs(static_cast<double>(mean)) + 1.0));
  const double want = static_cast<double>(1.0L / std::sqrt(var + eps));
  RC_ASSERT(std::fabs(rn.rstd - want) <= 1e-12 * want);
}

// Exact erf GELU (not the tanh form, which differs by up to 4.7e-4), gamma and beta, then the scale.
TEST(FusedConvT3dLnGeluScaleMath, GeluIsTheErfForm) {
  for (double u = -8.0; u <= 8.0; u += 0.01) {
    const long double want = 0.5L * u * (1.0L + std::erf(static_cast<long double>(u) / std::sqrt(2.0L)));
    EXPECT_NEAR(ln::detail::gelu_erf(u), static_cast<double>(want), 1e-15 * (1.0 + std::fabs(u))) << u;
  }
  const double u = -1.5;
  const double tanh_form = 0.5 * u * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (u + 0.044715 * u * u * u)));
  EXPECT_GT(std::fabs(ln::detail::gelu_erf(u) - tanh_form), 1e-4);
  const ln::detail::row_norm rn{2.0, 4.0};
  // y = 2.25: z = 1, u = 1 * 0.5 + (-1) = -0.5, out = -3 * gelu(-0.5)
  EXPECT_FLOAT_EQ(ln::detail::ln_gelu_scale(2.25f, rn, 0.5f, -1.0f, -3.0),
                  static_cast<float>(-3.0 * ln::detail::gelu_erf(-0.5)));
}

// Only offset volumes are centred: a volume of mostly zeros keeps its exact zeros (rows that read
// only zeros stay exactly constant, as in libtorch).
TEST(FusedConvT3dLnGeluScaleMath, CentresOnlyOffsetVolumes) {
  // 2 + u, u in [0, 1): mean 2.5, variance 1/12.
  EXPECT_EQ(ln::detail::centre_of(2.5 * 12, (2.5 * 2.5 + 1.0 / 12.0) * 12, 12), 2.5f);
  // Border-only normals: mean ~0, variance ~ the fraction on the border.
  EXPECT_EQ(ln::detail::centre_of(0.3, 9.0, 40), 0.0f);
  EXPECT_EQ(ln::detail::centre_of(0.0, 0.0, 40), 0.0f);  // all zeros
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
    const float want = static_cast<float>(-3.0 * ln::detail::gelu_erf(beta[e % 11]));
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

ln_case draw_case(bool wide) {
  ln_case c;
  c.prob = draw_problem(wide);
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

struct expected {
  std::vector<double> out;
  double conditioning;  ///< fp32 rounding amplification of the convolution through the LayerNorm
};

expected brute_force(const ln_case& c) {
  const ln::problem& p = c.prob;
  const int64_t k = p.kernel_size, s = p.stride, pd = p.padding;
  const int64_t Do = convt_output_size(p.depth, k, s, pd, 0), Ho = convt_output_size(p.height, k, s, pd, 0);
  const int64_t Wo = convt_output_size(p.width, k, s, pd, 0);
  const int64_t Co = p.out_channels, Ci = p.in_channels, B = p.batch, S = Do * Ho * Wo;
  std::vector<double> y(static_cast<std::size_t>(B * Co * S), 0.0), mag2(y.size(), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t co = 0; co < Co; ++co)
      for (int64_t e = 0; e < S; ++e) y[static_cast<std::size_t>((b * Co + co) * S + e)] = c.has_bias ? c.bias[co] : 0.0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t ci = 0; ci < Ci; ++ci)
      for (int64_t i = 0; i < p.depth; ++i)
        for (int64_t j = 0; j < p.height; ++j)
          for (int64_t l = 0; l < p.width; ++l) {
            const double xv = c.x[static_cast<std::size_t>((((b * Ci + ci) * p.depth + i) * p.height + j) * p.width + l)];
            if (xv == 0.0) continue;
            for (int64_t td = 0; td < k; ++td) {
              const int64_t od = i * s - pd + td;
              if (od < 0 || od >= Do) continue;
              for (int64_t th = 0; th < k; ++th) {
                const int64_t oh = j * s - pd + th;
                if (oh < 0 || oh >= Ho) continue;
                for (int64_t tw = 0; tw < k; ++tw) {
                  const int64_t ow = l * s - pd + tw;
                  if (ow < 0 || ow >= Wo) continue;
                  for (int64_t co = 0; co < Co; ++co) {
                    const double wv = c.w[static_cast<std::size_t>((((ci * Co + co) * k + td) * k + th) * k + tw)];
                    const std::size_t at = static_cast<std::size_t>((b * Co + co) * S + (od * Ho + oh) * Wo + ow);
                    y[at] += xv * wv;
                    mag2[at] += (xv * wv) * (xv * wv);
                  }
                }
              }
            }
          }
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
/// cap_chunk > 0 forces input-channel chunks of at most that many channels.
std::vector<float> run(const ln_case& c, bool force_generic = false, int64_t cap_chunk = 0) {
  ln::detail::plan pl = ln::detail::make_plan(c.prob, force_generic);
  if (cap_chunk > 0 && pl.g.ci_chunk > cap_chunk) {
    pl.g.ci_chunk = cap_chunk;
    pl.g.n_ci_chunks = fb::fused::ceil_div(pl.g.c_in, cap_chunk);
  }
  const std::size_t ws_bytes = ln::workspace_bytes(c.prob);
  RC_ASSERT(ws_bytes == pl.workspace_bytes);
  std::vector<unsigned char> ws(ws_bytes + 64, 0xFF);
  const ln::problem& p = c.prob;
  std::vector<float> out(static_cast<std::size_t>(p.batch * p.out_channels * pl.g.dim[0].n_out * pl.g.dim[1].n_out *
                                                  pl.g.dim[2].n_out),
                         std::numeric_limits<float>::quiet_NaN());
  const ln::detail::args a{c.x.data(), c.w.data(), c.gamma.data(), c.beta.data(), out.data(),
                           fb::fused::detail::aligned_workspace(ws.data() + 4)};
  ln::detail::run_host_plan(pl, a);
  for (std::size_t i = ws_bytes + 4; i < ws.size(); ++i) RC_ASSERT(ws[i] == 0xFF);  // stays inside
  return out;
}

void check_against_brute_force(const ln_case& c) {
  const expected ex = brute_force(c);
  RC_PRE(ex.conditioning <= 20.0);  // as harness/verify_plan.h's max_reference_conditioning
  const ln::problem& p = c.prob;
  RC_TAG(dist_name(c.d), c.has_bias ? "bias" : "no bias", p.stride == 1 && p.out_channels > 32 ? "two w sub-tiles" : "one");
  RC_LOG() << "B=" << p.batch << " Cin=" << p.in_channels << " Cout=W'=" << p.out_channels << " D=" << p.depth
           << " H=" << p.height << " W=" << p.width << " k=" << p.kernel_size << " s=" << p.stride
           << " p=" << p.padding << " eps=" << p.eps << " scale=" << p.scaling_factor << " " << dist_name(c.d)
           << " cond=" << ex.conditioning << "\n";
  // Passing the host executor directly in ws/outputs: bias is not an argument (it cancels).
  const std::vector<float> got = run(c);
  for (std::size_t i = 0; i < ex.out.size(); ++i) {
    const bool ok = std::isfinite(got[i]) && std::fabs(got[i] - ex.out[i]) <= 1e-5 + 1e-5 * std::fabs(ex.out[i]);
    if (!ok) RC_LOG() << "out[" << i << "] got " << got[i] << " want " << ex.out[i] << "\n";
    RC_ASSERT(ok);
  }
}

RC_GTEST_PROP(FusedConvT3dLnGeluScaleHost, MatchesFp64BruteForce, ()) { check_against_brute_force(draw_case(false)); }

RC_GTEST_PROP(FusedConvT3dLnGeluScaleHost, MatchesFp64BruteForceWithTwoWSubTiles, ()) {
  check_against_brute_force(draw_case(true));
}

// The unrolled tap loops, the generic loop, and any input-channel chunking sum every output in the
// same order: bitwise the same results. Repeating a call gives the same bits (determinism).
RC_GTEST_PROP(FusedConvT3dLnGeluScaleHost, VariantsAndChunksAreBitwiseIdentical, ()) {
  ln_case c = draw_case(*rc::gen::arbitrary<bool>());
  c.prob.batch = 1;
  c.x.resize(static_cast<std::size_t>(c.prob.in_channels * c.prob.depth * c.prob.height * c.prob.width));
  const std::vector<float> base = run(c);
  const std::vector<float> again = run(c);
  const std::vector<float> generic = run(c, /*force_generic=*/true);
  const std::vector<float> chunked = run(c, false, *rc::gen::inRange<int64_t>(1, c.prob.in_channels + 1));
  const auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
    return std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  };
  RC_ASSERT(same(base, again));
  RC_ASSERT(same(base, generic));
  RC_ASSERT(same(base, chunked));
}

}  // namespace
