// Property tests of convt3d_scale_bn_gap's fused math (torch-free): the DFT pieces (roots of unity,
// conjugate row pairs, Parseval on the half spectrum, the mirrored-pair accumulation), the kernels'
// own block programs for the input and weight spectra against fp64 brute-force DFTs, and the host
// executor (all five kernels' programs) against a plain fp64 direct transposed convolution + scale +
// BatchNorm + mean written here, in both modes, over every input distribution, with random
// parameters and buffers, and on shapes that cross the kernels' internal boundaries.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "fused/convt3d_scale_bn_gap/convt3d_scale_bn_gap.h"
#include "fused/convt3d_scale_bn_gap/plan.h"
#include "fused/convt3d_scale_bn_gap/programs.cuh"
#include "fused/math/dft.cuh"
#include "property_tests/convt3d_brute_force.h"
#include "property_tests/input_dist.h"

namespace {

namespace k77 = fb::fused::convt3d_scale_bn_gap;
namespace dft = fb::fused::math::dft;
using cd = std::complex<double>;

constexpr double k_two_pi = 6.283185307179586476925286766559;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Input distributions of the fuzz domain (SPEC 2), in 3-D: border_only is non-zero only on the
/// faces of each (d, h, w) volume.
using fb::test_inputs::dist;
using fb::test_inputs::dist_name;
using fb::test_inputs::fill_uniform;

dist draw_dist() {
  return *rc::gen::elementOf(std::vector<dist>(fb::test_inputs::all_dists.begin(), fb::test_inputs::all_dists.end()));
}

/// Fills volumes of D x H x W (contiguous, one after another) from distribution d.
void fill_volumes(std::vector<float>& v, int64_t dd, int64_t hh, int64_t ww, dist d, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u01(0.0f, 1.0f);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  for (std::size_t e = 0; e < v.size(); ++e) {
    const int64_t q = static_cast<int64_t>(e) % (dd * hh * ww);
    const int64_t i = q / (hh * ww);
    const int64_t j = (q / ww) % hh;
    const int64_t l = q % ww;
    switch (d) {
      case dist::uniform: v[e] = u01(rng); break;
      case dist::normal: v[e] = n01(rng); break;
      case dist::offset: v[e] = 100.0f + u01(rng); break;
      case dist::border_only: {
        const bool face = i == 0 || j == 0 || l == 0 || i == dd - 1 || j == hh - 1 || l == ww - 1;
        v[e] = face ? 1.0f + n01(rng) : 0.0f;
        break;
      }
      case dist::sparse: v[e] = u01(rng) < 0.05f ? 10.0f * n01(rng) : 0.0f; break;
    }
  }
}

bool close(double got, double expected, double atol, double rtol) {
  return std::isfinite(got) && std::fabs(got - expected) <= atol + rtol * std::fabs(expected);
}

/// e^{-2 pi i m / n} in fp64 (reference).
cd root(int64_t m, int64_t n) {
  const double th = k_two_pi * static_cast<double>(m % n) / static_cast<double>(n);
  return {std::cos(th), -std::sin(th)};
}

/// fp64 3-D DFT of a real volume (d0 x h0 x w0) zero-padded to nd x nh x nw, at the frequencies
/// with fw < fw_count: the triple sum over the input, term by term.
std::vector<cd> brute_dft3(const double* v, int64_t d0, int64_t h0, int64_t w0, int64_t nd, int64_t nh, int64_t nw,
                           int64_t fw_count) {
  std::vector<cd> out(static_cast<std::size_t>(nd * nh * fw_count));
  for (int64_t fd = 0; fd < nd; ++fd)
    for (int64_t fh = 0; fh < nh; ++fh)
      for (int64_t fw = 0; fw < fw_count; ++fw) {
        cd s = 0.0;
        for (int64_t d = 0; d < d0; ++d)
          for (int64_t h = 0; h < h0; ++h)
            for (int64_t w = 0; w < w0; ++w)
              s += v[(d * h0 + h) * w0 + w] * root(d * fd, nd) * root(h * fh, nh) * root(w * fw, nw);
        out[static_cast<std::size_t>((fd * nh + fh) * fw_count + fw)] = s;
      }
  return out;
}

/// A single-threaded executor for the block programs (as the host executor does: phases thread by
/// thread, barriers no-ops), so the tests can run one kernel's program and look at its output. The
/// order of the threads inside a phase is a parameter: on the GPU they run concurrently, so a
/// program whose result depends on that order has a missing barrier.
enum class order { forward, reverse, stride7 };

template <class State>
struct test_exec {
  using thread_state = State;
  order ord = order::forward;
  std::vector<State> st = std::vector<State>(k77::detail::k_threads);
  template <class F>
  void threads(F&& f) {
    constexpr int n = k77::detail::k_threads;
    for (int i = 0; i < n; ++i) {
      const int t = ord == order::forward ? i : ord == order::reverse ? n - 1 - i : (i * 7) % n;  // 7 is odd
      if constexpr (fb::fused::exec::detail::takes_thread_state<F, State>)
        f(t, st[static_cast<std::size_t>(t)]);
      else
        f(t);
    }
  }
  void sync() {}
};
static_assert(fb::fused::exec::is_block_executor_v<test_exec<k77::detail::x_state>, k77::detail::x_state>);

/// Runs `prog(ex, block, smem)` for every block, each with a NaN-poisoned shared memory of exactly
/// smem_bytes (a multiple of 16), in its own allocation (so AddressSanitizer sees any overrun).
template <class State, class Prog>
void run_all(int64_t blocks, std::size_t smem_bytes, Prog prog, order ord = order::forward) {
  test_exec<State> ex;
  ex.ord = ord;
  for (int64_t b = 0; b < blocks; ++b) {
    std::vector<double> buf(smem_bytes / sizeof(double));
    auto* smem = reinterpret_cast<unsigned char*>(buf.data());
    std::memset(smem, 0xFF, smem_bytes);
    prog(ex, b, smem);
  }
}

/// Every fw chunk's table image into p.xtab (what prep's first blocks do in the pipeline).
void write_table_images(const k77::detail::params& p) {
  run_all<k77::detail::no_state>(p.n_fw_chunks, 0, [&](auto& ex, int64_t q, unsigned char*) {
    k77::detail::x_tables_image_program(ex, p, static_cast<int>(q));
  });
}

/// Workspace of exactly `bytes` at a deliberately misaligned address, with guard bytes after it.
struct guarded_workspace {
  static constexpr std::size_t guard = 64;
  std::vector<unsigned char> buf;
  std::size_t bytes;
  explicit guarded_workspace(std::size_t n) : buf(n + 4 + guard, 0xA5), bytes(n) {}
  void* ptr() { return buf.data() + 4; }
  bool guard_intact() const {
    for (std::size_t i = 4 + bytes; i < buf.size(); ++i)
      if (buf[i] != 0xA5) return false;
    return true;
  }
};

// ---------------------------------------------------------------------------------------------
// DFT pieces
// ---------------------------------------------------------------------------------------------

// The exactly reduced root of unity is the fp32 rounding of the true value (within half an ulp plus
// the fp64 evaluation error), for sizes far beyond the fuzz domain and every m.
RC_GTEST_PROP(FusedK77Dft, UnitRootIsRoundedTrueValue, ()) {
  const int64_t n = *rc::gen::element<int64_t>(1, 2, 3, 4, 5, 7, 8, 12, 36, 46, 97, 1000, 4096, 100003);
  const int64_t m = *rc::gen::inRange<int64_t>(0, n);
  const dft::cplx r = dft::unit_root(m, n);
  const long double th = 2.0L * 3.141592653589793238462643383279502884L * static_cast<long double>(m) /
                         static_cast<long double>(n);
  const long double c = std::cos(th), s = -std::sin(th);
  const auto half_ulp = [](long double v) {
    const float f = static_cast<float>(v);
    return 0.5L * (std::nextafter(std::fabs(f), std::numeric_limits<float>::infinity()) - std::fabs(f));
  };
  RC_ASSERT(std::fabs(static_cast<long double>(r.re) - c) <= half_ulp(c) + 1e-15L);
  RC_ASSERT(std::fabs(static_cast<long double>(r.im) - s) <= half_ulp(s) + 1e-15L);
}

TEST(FusedK77Dft, UnitRootSymmetries) {
  for (int64_t n = 1; n <= 64; ++n)
    for (int64_t m = 0; m < n; ++m) {
      const dft::cplx a = dft::unit_root(m, n);
      const dft::cplx b = dft::unit_root((n - m) % n, n);
      EXPECT_EQ(a.re, b.re) << m << "/" << n;   // cos is even: bitwise, by the octant symmetry
      EXPECT_EQ(a.im, -b.im) << m << "/" << n;  // sin is odd
    }
  EXPECT_EQ(dft::unit_root(0, 7).re, 1.0f);
  EXPECT_EQ(dft::unit_root(0, 7).im, 0.0f);
  EXPECT_EQ(dft::unit_root(1, 4).re, 0.0f);
  EXPECT_EQ(dft::unit_root(1, 4).im, -1.0f);
}

// Every row (fd, fh) of an nd x nh plane is a representative or a partner exactly once, partners
// are the negated frequencies, representatives lie in fd <= nd/2.
RC_GTEST_PROP(FusedK77Dft, RowPairsCoverEveryRowOnce, ()) {
  const int64_t nd = *rc::gen::inRange<int64_t>(1, 50);
  const int64_t nh = *rc::gen::inRange<int64_t>(1, 50);
  const dft::row_pairs rp = dft::make_row_pairs(nd, nh);
  std::vector<int> seen(static_cast<std::size_t>(nd * nh), 0);
  for (int64_t p = 0; p < rp.count; ++p) {
    const dft::row_pair pr = dft::pair_at(rp, p);
    RC_ASSERT(pr.fd >= 0);
    RC_ASSERT(2 * pr.fd <= nd);
    RC_ASSERT(pr.fh >= 0);
    RC_ASSERT(pr.fh < nh);
    RC_ASSERT(pr.row == pr.fd * nh + pr.fh);
    const int64_t cfd = pr.conj_row / nh, cfh = pr.conj_row % nh;
    RC_ASSERT((pr.fd + cfd) % nd == 0);
    RC_ASSERT((pr.fh + cfh) % nh == 0);
    ++seen[static_cast<std::size_t>(pr.row)];
    if (pr.conj_row != pr.row) ++seen[static_cast<std::size_t>(pr.conj_row)];
  }
  for (int s : seen) RC_ASSERT(s == 1);
}

// Parseval on the half spectrum exactly as the gemm weighs it: over all (pair, fw) units,
// w_row |Z(row, fw)|^2 + w_conj |Z(conj, fw)|^2 with the mean (row 0, fw 0) left out and
// self-conjugate rows counted once equals N' * sum (z - zbar)^2. Sizes 1..9, odd and even.
RC_GTEST_PROP(FusedK77Dft, ParsevalOnTheWeightedHalfSpectrum, ()) {
  const int64_t nd = *rc::gen::inRange<int64_t>(1, 10);
  const int64_t nh = *rc::gen::inRange<int64_t>(1, 10);
  const int64_t nw = *rc::gen::inRange<int64_t>(1, 10);
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  std::normal_distribution<double> n01(3.0, 1.0);
  std::vector<double> z(static_cast<std::size_t>(nd * nh * nw));
  for (double& v : z) v = n01(rng);
  double mean = 0.0;
  for (double v : z) mean += v;
  mean /= static_cast<double>(z.size());
  double centred = 0.0;
  for (double v : z) centred += (v - mean) * (v - mean);
  const std::vector<cd> Z = brute_dft3(z.data(), nd, nh, nw, nd, nh, nw, nw);
  const dft::row_pairs rp = dft::make_row_pairs(nd, nh);
  const int64_t fws = nw / 2 + 1;
  double sum = 0.0;
  for (int64_t p = 0; p < rp.count; ++p) {
    const dft::row_pair pr = dft::pair_at(rp, p);
    for (int64_t fw = 0; fw < fws; ++fw) {
      const double hw = dft::half_weight(fw, nw);
      const double wr = (pr.row == 0 && fw == 0) ? 0.0 : hw;
      const double wc = pr.conj_row == pr.row ? 0.0 : hw;
      sum += wr * std::norm(Z[static_cast<std::size_t>(pr.row * nw + fw)]) +
             wc * std::norm(Z[static_cast<std::size_t>(pr.conj_row * nw + fw)]);
    }
  }
  RC_ASSERT(std::fabs(sum - static_cast<double>(z.size()) * centred) <= 1e-9 * (z.size() * centred + 1e-300));
}

// The mirrored-pair accumulation of the h- and d-stages: four products per input give the DFT of a
// complex line at f and at -f.
RC_GTEST_PROP(FusedK77Dft, MirroredPairAccumulationGivesBothFrequencies, ()) {
  const int n_in = *rc::gen::inRange(1, 47);
  const int n = n_in + *rc::gen::inRange(0, 7);
  const int f = *rc::gen::inRange(0, n / 2 + 1);
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  std::normal_distribution<float> n01(0.0f, 1.0f);
  std::vector<dft::cplx2> line(static_cast<std::size_t>(2 * n_in));
  for (auto& v : line) v = {{n01(rng), n01(rng)}, {n01(rng), n01(rng)}};
  k77::detail::pair_acc acc;
  acc.zero();
  int m = 0;
  for (int i = 0; i < n_in; ++i) {
    acc.add(&line[static_cast<std::size_t>(2 * i)], dft::unit_root(m, n));
    m = (m + f) % n;
  }
  for (int j = 0; j < k77::detail::k_jt; ++j) {
    cd plus = 0.0, minus = 0.0;
    double l1 = 0.0;
    for (int i = 0; i < n_in; ++i) {
      const dft::cplx2& v2 = line[static_cast<std::size_t>(2 * i + j / 2)];
      const dft::cplx v = (j % 2 == 0) ? v2.a : v2.b;
      plus += cd(v.re, v.im) * root(static_cast<int64_t>(i) * f, n);
      minus += cd(v.re, v.im) * std::conj(root(static_cast<int64_t>(i) * f, n));
      l1 += std::abs(cd(v.re, v.im));
    }
    RC_ASSERT(std::abs(cd(acc.plus(j).re, acc.plus(j).im) - plus) <= 1e-6 * (l1 + 1.0));
    RC_ASSERT(std::abs(cd(acc.minus(j).re, acc.minus(j).im) - minus) <= 1e-6 * (l1 + 1.0));
  }
}

// ---------------------------------------------------------------------------------------------
// The kernels' spectrum programs vs brute-force DFTs
// ---------------------------------------------------------------------------------------------

/// A training problem with small random sizes; sometimes with a volume of more than 256 rows (d, h)
/// (several staged slabs) or with more than 8 half-spectrum columns (several fw chunks).
k77::problem draw_spectrum_problem() {
  k77::problem p{};
  p.batch = *rc::gen::inRange<int64_t>(1, 3);
  p.in_channels = *rc::gen::inRange<int64_t>(1, 3);
  p.out_channels = *rc::gen::inRange<int64_t>(1, 5);
  p.kernel_size = *rc::gen::inRange<int64_t>(1, 8);
  const int shape = *rc::gen::inRange(0, 3);
  p.depth = shape == 1 ? *rc::gen::inRange<int64_t>(9, 12) : *rc::gen::inRange<int64_t>(1, 8);
  p.height = shape == 1 ? *rc::gen::inRange<int64_t>(29, 40) : *rc::gen::inRange<int64_t>(1, 9);
  p.width = shape == 2 ? *rc::gen::inRange<int64_t>(12, 30) : *rc::gen::inRange<int64_t>(1, 5);
  if (shape == 1) p.kernel_size = std::min<int64_t>(p.kernel_size, 2);
  if (p.depth * p.height * p.width * p.kernel_size == 1) p.batch = 2;  // training needs B*N' > 1
  p.scale_factor = 1.0;
  p.eps = 1e-5;
  p.momentum = 0.1;
  p.training = true;
  return p;
}

// X[fd, fh][ci][b][fw] from x_program (the x kernel's block program, all its chunks and slabs) equals
// the fp64 DFT of the zero-padded input at every half-spectrum frequency; S is the fp64 sum.
RC_GTEST_PROP(FusedK77Spectra, InputSpectrumMatchesBruteForce, ()) {
  const k77::problem prob = draw_spectrum_problem();
  const dist d = draw_dist();
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  const k77::detail::plan pl = k77::detail::make_plan(prob);
  k77::detail::params p = pl.prm;
  std::vector<float> x(static_cast<std::size_t>(p.B * p.c_in * p.D * p.H * p.W));
  fill_volumes(x, p.D, p.H, p.W, d, rng);
  std::vector<dft::cplx> X(static_cast<std::size_t>(int64_t{p.dft_d} * p.dft_h * p.c_in * p.B * p.n_fw), {NAN, NAN});
  std::vector<double> S(static_cast<std::size_t>(p.B * p.c_in), NAN);
  // The tables' images first (prep's first blocks in the pipeline), poisoned where not written.
  std::vector<unsigned char> xtab(k77::detail::x_table_images_bytes(p), 0xFF);
  p.x = x.data();
  p.X = X.data();
  p.S = S.data();
  p.xtab = xtab.data();
  write_table_images(p);
  run_all<k77::detail::x_state>(k77::detail::x_blocks(p, true), pl.x_smem, [&](auto& ex, int64_t blk, unsigned char* s) {
    k77::detail::x_program(ex, p, blk, s, true);
  });
  RC_TAG(p.n_fw_chunks > 1 ? "several fw chunks" : "one fw chunk");
  RC_TAG(int64_t{p.D} * p.H > p.slab_rows ? "several row slabs" : "one row slab");
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t ci = 0; ci < p.c_in; ++ci) {
      const float* xv = x.data() + (b * p.c_in + ci) * p.D * p.H * p.W;
      std::vector<double> v(xv, xv + p.D * p.H * p.W);
      double sum = 0.0, l1 = 0.0;
      for (double e : v) {
        sum += e;
        l1 += std::fabs(e);
      }
      RC_ASSERT(std::fabs(S[static_cast<std::size_t>(b * p.c_in + ci)] - sum) <= 1e-12 * (l1 + 1.0));
      const std::vector<cd> ref = brute_dft3(v.data(), p.D, p.H, p.W, p.dft_d, p.dft_h, p.dft_w, p.n_fw);
      for (int64_t row = 0; row < int64_t{p.dft_d} * p.dft_h; ++row)
        for (int64_t fw = 0; fw < p.n_fw; ++fw) {
          const dft::cplx got = X[static_cast<std::size_t>(((row * p.c_in + ci) * p.B + b) * p.n_fw + fw)];
          const cd want = ref[static_cast<std::size_t>(row * p.n_fw + fw)];
          RC_LOG() << "b=" << b << " ci=" << ci << " row=" << row << " fw=" << fw << " got=(" << got.re << ","
                   << got.im << ") want=" << want << " dist=" << dist_name(d) << "\n";
          // fp32 transforms: error ~ a few ulps of the l1 norm.
          RC_ASSERT(std::abs(cd(got.re, got.im) - want) <= 2e-6 * l1 + 1e-30);
        }
    }
}

// The tables' image program writes every byte of each chunk's image, padding included: x blocks
// copy whole images, and a byte left unwritten is an uninitialised read on the device (the gate's
// initcheck). Two runs over images poisoned differently must leave the same bytes.
RC_GTEST_PROP(FusedK77Spectra, TablesImageWritesEveryByte, ()) {
  const k77::problem prob = draw_spectrum_problem();
  k77::detail::params p = k77::detail::make_plan(prob).prm;
  const std::size_t bytes = k77::detail::x_table_images_bytes(p);
  std::vector<unsigned char> a(bytes, 0x00), b(bytes, 0xFF);
  for (std::vector<unsigned char>* image : {&a, &b}) {
    p.xtab = image->data();
    write_table_images(p);
  }
  RC_ASSERT(a == b);
}

// H1[ci][fd][th][tw][c] from prep_program equals the fp64 depth DFT of the taps; Wsum the tap sums.
RC_GTEST_PROP(FusedK77Spectra, WeightDepthTransformMatchesBruteForce, ()) {
  const k77::problem prob = draw_spectrum_problem();
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  const k77::detail::plan pl = k77::detail::make_plan(prob);
  k77::detail::params p = pl.prm;
  const int64_t k = p.k;
  std::vector<float> w(static_cast<std::size_t>(p.c_in * p.c_out * k * k * k));
  fill_uniform(w, -1.0f, 1.0f, rng);
  std::vector<dft::cplx> h1(static_cast<std::size_t>(p.c_in * p.n_d_pairs * k * k * p.c_out), {NAN, NAN});
  std::vector<double> wsum(static_cast<std::size_t>(p.c_in * p.c_out), NAN);
  std::vector<unsigned char> xtab(k77::detail::x_table_images_bytes(p), 0xFF);
  p.weight = w.data();
  p.h1 = h1.data();
  p.wsum = wsum.data();
  p.xtab = xtab.data();
  run_all<k77::detail::no_state>(k77::detail::prep_blocks(p), k77::detail::prep_smem(p),
                                 [&](auto& ex, int64_t blk, unsigned char* s) { k77::detail::prep_program(ex, p, blk, s); });
  for (int64_t ci = 0; ci < p.c_in; ++ci)
    for (int64_t c = 0; c < p.c_out; ++c) {
      const float* wt = w.data() + (ci * p.c_out + c) * k * k * k;
      double sum = 0.0;
      for (int64_t i = 0; i < k * k * k; ++i) sum += wt[i];
      RC_ASSERT(std::fabs(wsum[static_cast<std::size_t>(ci * p.c_out + c)] - sum) <= 1e-12 * (k * k * k));
      for (int64_t fd = 0; fd < p.n_d_pairs; ++fd)
        for (int64_t th = 0; th < k; ++th)
          for (int64_t tw = 0; tw < k; ++tw) {
            cd want = 0.0;
            for (int64_t td = 0; td < k; ++td)
              want += static_cast<double>(wt[(td * k + th) * k + tw]) * root(td * fd, p.dft_d);
            const dft::cplx got =
                h1[static_cast<std::size_t>((((ci * p.n_d_pairs + fd) * k + th) * k + tw) * p.c_out + c)];
            RC_ASSERT(std::abs(cd(got.re, got.im) - want) <= 1e-6 * static_cast<double>(k));
          }
    }
}

// ---------------------------------------------------------------------------------------------
// Host executor vs brute force
// ---------------------------------------------------------------------------------------------

/// Outputs and buffers of the model in fp64 from a direct scatter-form transposed convolution.
struct brute_result {
  std::vector<double> out;           // (B, C_out)
  std::vector<double> running_mean;  // after the call
  std::vector<double> running_var;
  std::vector<double> var;  // biased batch variance per channel (training)
  /// Per channel: how much fp32 rounding of the convolution can move the centred sum of squares,
  /// kappa = sum |y - ybar_bc| m / sum (y - ybar_bc)^2 with m = |scale| conv(|x - xbar_bci|, |w|),
  /// the magnitude of the terms an fp32 sum forms after centring each input volume (as the kernel
  /// does). An fp32 algorithm's relative variance error is ~ eps_32 * kappa at best.
  std::vector<double> kappa;
};

brute_result brute_force(const k77::problem& p, const std::vector<float>& x, const std::vector<float>& w,
                         const std::vector<float>& bias, const std::vector<float>& gamma, const std::vector<float>& beta,
                         const std::vector<float>& rm, const std::vector<float>& rv) {
  const int64_t k = p.kernel_size;
  // #77's convolution has stride 1 and no padding.
  const fb::convt3d_test::convt3d_dims dims{p.batch, p.in_channels, p.out_channels, p.depth, p.height, p.width, k, 1, 0};
  const int64_t n = dims.out_volume();
  std::vector<double> y = fb::convt3d_test::conv_transpose3d_fp64(dims, x.data(), w.data(), bias.data());
  for (double& v : y) v *= p.scale_factor;  // the scale multiplies the bias too
  // Magnitudes of the centred terms: conv(|x - xbar|, |w|).
  const int64_t volume = p.depth * p.height * p.width;
  std::vector<double> x_spread(x.size());
  for (int64_t bc = 0; bc < p.batch * p.in_channels; ++bc) {
    const float* xv = x.data() + bc * volume;
    double xbar = 0.0;
    for (int64_t e = 0; e < volume; ++e) xbar += xv[e];
    xbar /= static_cast<double>(volume);
    for (int64_t e = 0; e < volume; ++e) x_spread[static_cast<std::size_t>(bc * volume + e)] = std::fabs(xv[e] - xbar);
  }
  std::vector<float> w_abs(w.size());
  for (std::size_t e = 0; e < w.size(); ++e) w_abs[e] = std::fabs(w[e]);
  const std::vector<double> mag = fb::convt3d_test::conv_transpose3d_fp64(dims, x_spread.data(), w_abs.data(), nullptr);
  brute_result r;
  r.out.resize(static_cast<std::size_t>(p.batch * p.out_channels));
  r.running_mean.assign(rm.begin(), rm.end());
  r.running_var.assign(rv.begin(), rv.end());
  r.var.assign(static_cast<std::size_t>(p.out_channels), 0.0);
  r.kappa.assign(static_cast<std::size_t>(p.out_channels), 0.0);
  const double count = static_cast<double>(p.batch * n);
  for (int64_t c = 0; c < p.out_channels; ++c) {
    double mean = 0.0;
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t o = 0; o < n; ++o) mean += y[static_cast<std::size_t>((b * p.out_channels + c) * n + o)];
    mean /= count;
    double var = 0.0;
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t o = 0; o < n; ++o) {
        const double dv = y[static_cast<std::size_t>((b * p.out_channels + c) * n + o)] - mean;
        var += dv * dv;
      }
    double within = 0.0, weighted = 0.0;
    for (int64_t b = 0; b < p.batch; ++b) {
      const double* yb = y.data() + (b * p.out_channels + c) * n;
      double ybar = 0.0;
      for (int64_t o = 0; o < n; ++o) ybar += yb[o];
      ybar /= static_cast<double>(n);
      for (int64_t o = 0; o < n; ++o) {
        within += (yb[o] - ybar) * (yb[o] - ybar);
        weighted += std::fabs(yb[o] - ybar) * std::fabs(p.scale_factor) * mag[static_cast<std::size_t>((b * p.out_channels + c) * n + o)];
      }
    }
    r.kappa[static_cast<std::size_t>(c)] = within > 0 ? weighted / within : 0.0;
    var /= count;
    r.var[static_cast<std::size_t>(c)] = var;
    const double mu = p.training ? mean : rm[c];
    const double sigma2 = p.training ? var : rv[c];
    const double inv = 1.0 / std::sqrt(sigma2 + p.eps);
    for (int64_t b = 0; b < p.batch; ++b) {
      double acc = 0.0;  // BatchNorm elementwise, then the average pool
      for (int64_t o = 0; o < n; ++o)
        acc += (y[static_cast<std::size_t>((b * p.out_channels + c) * n + o)] - mu) * inv * gamma[c] + beta[c];
      r.out[static_cast<std::size_t>(b * p.out_channels + c)] = acc / static_cast<double>(n);
    }
    if (p.training) {
      r.running_mean[static_cast<std::size_t>(c)] = (1.0 - p.momentum) * rm[c] + p.momentum * mean;
      r.running_var[static_cast<std::size_t>(c)] = (1.0 - p.momentum) * rv[c] + p.momentum * var * count / (count - 1.0);
    }
  }
  return r;
}

/// Appends "what (details)" to err when ok is false.
void expect(bool ok, std::string& err, const std::string& what) {
  if (!ok && err.size() < 2000) err += what + "; ";
}

/// One case: random parameters and buffers, run_host on a guarded misaligned workspace, checks
/// against brute force at the gate's tolerance (1e-5), the variance itself (momentum 1 makes
/// running_var the unbiased batch variance), the counter, untouched inputs and bitwise
/// determinism. Returns "" when everything held, else what failed.
std::string compare_with_brute_force(const k77::problem& p, dist d, uint64_t seed) {
  std::string err;
  std::mt19937_64 rng(seed);
  const int64_t k = p.kernel_size;
  std::vector<float> x(static_cast<std::size_t>(p.batch * p.in_channels * p.depth * p.height * p.width));
  std::vector<float> w(static_cast<std::size_t>(p.in_channels * p.out_channels * k * k * k));
  std::vector<float> bias(static_cast<std::size_t>(p.out_channels)), gamma(bias.size()), beta(bias.size()),
      rm(bias.size()), rv(bias.size());
  fill_volumes(x, p.depth, p.height, p.width, d, rng);
  const float wb = 1.0f / std::sqrt(static_cast<float>(p.out_channels * k * k * k));  // PyTorch's scale
  fill_uniform(w, -wb, wb, rng);
  fill_uniform(bias, -1.0f, 1.0f, rng);
  fill_uniform(gamma, -2.0f, 2.0f, rng);
  fill_uniform(beta, -1.0f, 1.0f, rng);
  fill_uniform(rm, -1.0f, 1.0f, rng);
  fill_uniform(rv, 0.1f, 3.0f, rng);
  const brute_result ref = brute_force(p, x, w, bias, gamma, beta, rm, rv);

  std::vector<float> out(static_cast<std::size_t>(p.batch * p.out_channels), std::numeric_limits<float>::quiet_NaN());
  std::vector<float> rm_got = rm, rv_got = rv;
  int64_t counter = 41;
  guarded_workspace ws(k77::workspace_bytes(p));
  const std::vector<float> x0 = x, w0 = w;
  k77::run_host(p, x.data(), w.data(), bias.data(), gamma.data(), beta.data(), rm_got.data(), rv_got.data(), &counter,
                out.data(), ws.ptr());
  expect(ws.guard_intact(), err, "workspace guard overwritten");
  expect(x == x0 && w == w0, err, "inputs written");
  expect(counter == (p.training ? 42 : 41), err, "num_batches_tracked " + std::to_string(counter));
  const auto num = [](double v) { return std::to_string(v); };
  for (std::size_t i = 0; i < out.size(); ++i)
    expect(close(out[i], ref.out[i], 1e-5, 1e-5), err,
           "out[" + std::to_string(i) + "] " + num(out[i]) + " vs " + num(ref.out[i]) + " (" + dist_name(d) + ")");
  for (std::size_t c = 0; c < rm.size(); ++c) {
    const std::string at = "[" + std::to_string(c) + "] ";
    expect(close(rm_got[c], ref.running_mean[c], 1e-5, 1e-5), err,
           "running_mean" + at + num(rm_got[c]) + " vs " + num(ref.running_mean[c]));
    expect(close(rv_got[c], ref.running_var[c], 1e-5, 1e-5), err,
           "running_var" + at + num(rv_got[c]) + " vs " + num(ref.running_var[c]));
    if (!p.training) expect(rm_got[c] == rm[c] && rv_got[c] == rv[c], err, "eval updated the buffers" + at);
    if (p.training && p.momentum == 1.0) {
      // running_var = the unbiased batch variance, rounded to fp32 once (6e-8): the variance itself
      // must be far inside the gate, as far as fp32 arithmetic allows: within 5e-7 + 4 u kappa
      // (u = 2^-24). Measured: up to ~4u = 2.4e-7 where kappa ~ 0 (fp32 products summed over C_in),
      // ~1.2 u kappa on ill-conditioned channels (e.g. kappa 14: N' = 2, offset inputs).
      const double bound = 5e-7 + 4.0 * std::ldexp(1.0, -24) * ref.kappa[c];
      // (1e-20 absolute: the fp64 brute force itself leaves ~1e-29 where the variance is 0, x = 0.)
      const double rel = std::fabs(rv_got[c] - ref.running_var[c]) / std::fabs(ref.running_var[c]);
      expect(std::fabs(rv_got[c] - ref.running_var[c]) <= bound * std::fabs(ref.running_var[c]) + 1e-20, err,
             "variance" + at + "relative error " + num(rel) + " > " + num(bound) + " (kappa " + num(ref.kappa[c]) + ")");
    }
  }
  // Bitwise repeatable.
  std::vector<float> out2(out.size(), std::numeric_limits<float>::quiet_NaN());
  std::vector<float> rm2 = rm, rv2 = rv;
  int64_t counter2 = 41;
  k77::run_host(p, x.data(), w.data(), bias.data(), gamma.data(), beta.data(), rm2.data(), rv2.data(), &counter2,
                out2.data(), ws.ptr());
  expect(std::memcmp(out.data(), out2.data(), out.size() * sizeof(float)) == 0 &&
             std::memcmp(rm_got.data(), rm2.data(), rm2.size() * sizeof(float)) == 0 &&
             std::memcmp(rv_got.data(), rv2.data(), rv2.size() * sizeof(float)) == 0,
         err, "not bitwise repeatable");
  return err;
}

void check_against_brute_force(const k77::problem& p, dist d, uint64_t seed) {
  const std::string err = compare_with_brute_force(p, d, seed);
  RC_LOG() << err << "\n";
  RC_ASSERT(err.empty());
}

/// SPEC 1: a (C_in, C_out, ...) vs (C_out, C_in, ...) mix-up hides when C_in == C_out.
void distinct_channels(int64_t c_in, int64_t& c_out) {
  if (c_out == c_in && *rc::gen::element(true, true, true, false)) c_out = c_in + 1;
}

k77::problem draw_scalars(k77::problem p) {
  p.scale_factor = *rc::gen::element(2.0, -1.5, 0.37, -3.0, 0.01);
  p.eps = *rc::gen::element(1e-5, 1e-6, 0.1, 1.0);
  p.momentum = *rc::gen::element(0.1, 1.0, 0.5, 0.003);
  p.training = *rc::gen::element(true, true, false);
  return p;
}

bool valid_for_bn(const k77::problem& p) {
  const int64_t k = p.kernel_size;
  return !p.training || p.batch * (p.depth + k - 1) * (p.height + k - 1) * (p.width + k - 1) > 1;
}

RC_GTEST_PROP(FusedK77HostExecutor, MatchesBruteForce, ()) {
  k77::problem p{};
  p.batch = *rc::gen::inRange<int64_t>(1, 5);
  p.in_channels = *rc::gen::inRange<int64_t>(1, 7);
  p.out_channels = *rc::gen::inRange<int64_t>(1, 41);  // crosses the 32-channel tile
  distinct_channels(p.in_channels, p.out_channels);
  p.depth = *rc::gen::inRange<int64_t>(1, 7);
  p.height = *rc::gen::inRange<int64_t>(1, 8);
  p.width = *rc::gen::inRange<int64_t>(1, 9);
  p.kernel_size = *rc::gen::inRange<int64_t>(1, 6);
  p = draw_scalars(p);
  RC_PRE(valid_for_bn(p));
  const dist d = draw_dist();
  RC_TAG(p.training ? "training" : "eval", dist_name(d));
  check_against_brute_force(p, d, *rc::gen::arbitrary<uint64_t>());
}

// Shapes that cross each kernel's internal boundaries: input-channel chunks (kc = 8), several
// channel tiles (32) and batch tiles (16), fw chunks (8 columns), row slabs (256 rows), groups of
// 8 units spanning several row pairs (Fw < 8), n' = 1, a batch tile of 8 (the gemm's X copies of a
// thread two channels apart), and odd/even sizes in every dimension.
RC_GTEST_PROP(FusedK77HostExecutor, MatchesBruteForceAcrossKernelBoundaries, ()) {
  k77::problem p{};
  const int shape = *rc::gen::inRange(0, 7);
  p.batch = *rc::gen::inRange<int64_t>(1, 4);
  p.in_channels = *rc::gen::inRange<int64_t>(1, 4);
  p.out_channels = *rc::gen::inRange<int64_t>(1, 6);
  p.depth = *rc::gen::inRange<int64_t>(1, 4);
  p.height = *rc::gen::inRange<int64_t>(1, 4);
  p.width = *rc::gen::inRange<int64_t>(1, 4);
  p.kernel_size = *rc::gen::inRange<int64_t>(1, 4);
  switch (shape) {
    case 0:  // several input-channel chunks, several channel tiles
      p.in_channels = *rc::gen::inRange<int64_t>(9, 20);
      p.out_channels = *rc::gen::inRange<int64_t>(33, 70);
      RC_TAG("ci chunks + channel tiles");
      break;
    case 1:  // two batch tiles of 16
      p.batch = *rc::gen::inRange<int64_t>(17, 20);
      RC_TAG("batch tiles");
      break;
    case 2:  // fw chunks: W' >= 15
      p.width = *rc::gen::inRange<int64_t>(12, 24);
      p.kernel_size = *rc::gen::inRange<int64_t>(1, 8);
      RC_TAG("fw chunks");
      break;
    case 3:  // more than 256 rows (d, h): several slabs
      p.depth = *rc::gen::inRange<int64_t>(7, 10);
      p.height = *rc::gen::inRange<int64_t>(37, 41);
      p.width = *rc::gen::inRange<int64_t>(1, 3);
      p.kernel_size = *rc::gen::inRange<int64_t>(1, 3);
      RC_TAG("row slabs");
      break;
    case 4:  // n' = 1 (needs B >= 2 in training)
      p.depth = p.height = p.width = p.kernel_size = 1;
      p.batch = *rc::gen::inRange<int64_t>(2, 5);
      RC_TAG("n' = 1");
      break;
    case 5:  // a batch tile of 8: each thread stages X for every second channel of a chunk
      p.batch = *rc::gen::inRange<int64_t>(5, 9);
      p.in_channels = *rc::gen::inRange<int64_t>(3, 9);
      RC_TAG("batch tile 8, strided X copies");
      break;
    default:  // k = 7, small W: groups of 8 units span several row pairs
      p.kernel_size = 7;
      p.width = 1;
      RC_TAG("k 7, small W");
      break;
  }
  distinct_channels(p.in_channels, p.out_channels);
  p = draw_scalars(p);
  RC_PRE(valid_for_bn(p));
  check_against_brute_force(p, draw_dist(), *rc::gen::arbitrary<uint64_t>());
}

// ---------------------------------------------------------------------------------------------
// The five programs with every array allocated on its own, threads in three orders
// ---------------------------------------------------------------------------------------------

/// Every array of one call, each in its own exact-size allocation.
struct pipeline_run {
  std::vector<float> out, rm, rv;
  int64_t batches = 7;
  std::vector<double> S, wsum, ybar, m2, partial;
  std::vector<dft::cplx> h1, G, X;
  std::vector<unsigned char> xtab;
};

pipeline_run run_pipeline(const k77::problem& prob, const std::vector<float>& x, const std::vector<float>& w,
                          const std::vector<float>& bias, const std::vector<float>& gamma,
                          const std::vector<float>& beta, const std::vector<float>& rm, const std::vector<float>& rv,
                          order ord) {
  namespace d = k77::detail;
  const d::plan pl = d::make_plan(prob);
  d::params p = pl.prm;
  pipeline_run r;
  r.out.assign(static_cast<std::size_t>(p.B * p.c_out), std::numeric_limits<float>::quiet_NaN());
  r.rm = rm;
  r.rv = rv;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r.S.assign(static_cast<std::size_t>(p.B * p.c_in), nan);
  r.wsum.assign(static_cast<std::size_t>(p.c_in * p.c_out), nan);
  r.ybar.assign(static_cast<std::size_t>(p.B * p.c_out), nan);
  if (p.training) {
    r.m2.assign(static_cast<std::size_t>(p.B * p.c_out), nan);
    r.partial.assign(static_cast<std::size_t>(p.n_groups * p.B * p.c_out), nan);
    r.h1.assign(static_cast<std::size_t>(p.c_in * p.n_d_pairs * p.k * p.k * p.c_out), {NAN, NAN});
    r.G.assign(static_cast<std::size_t>(p.c_in * p.pairs.count * p.k * p.c_out), {NAN, NAN});
    r.X.assign(static_cast<std::size_t>(int64_t{p.dft_d} * p.dft_h * p.c_in * p.B * p.n_fw), {NAN, NAN});
    r.xtab.assign(d::x_table_images_bytes(p), 0xFF);
  }
  p.x = x.data();
  p.weight = w.data();
  p.conv_bias = bias.data();
  p.gamma = gamma.data();
  p.beta = beta.data();
  p.running_mean = r.rm.data();
  p.running_var = r.rv.data();
  p.num_batches_tracked = &r.batches;
  p.out = r.out.data();
  p.S = r.S.data();
  p.wsum = r.wsum.data();
  p.ybar = r.ybar.data();
  p.m2 = r.m2.data();
  p.partial = r.partial.data();
  p.h1 = r.h1.data();
  p.G = r.G.data();
  p.X = r.X.data();
  p.xtab = r.xtab.data();
  run_all<d::no_state>(d::prep_blocks(p), d::prep_smem(p),
                       [&](auto& ex, int64_t b, unsigned char* s) { d::prep_program(ex, p, b, s); }, ord);
  run_all<d::no_state>(d::gspec_blocks(p), d::gspec_smem(p),
                       [&](auto& ex, int64_t b, unsigned char* s) { d::gspec_program(ex, p, b, s); }, ord);
  run_all<d::x_state>(d::x_blocks(p, p.training), pl.x_smem,
                      [&](auto& ex, int64_t b, unsigned char* s) { d::x_program(ex, p, b, s, p.training); }, ord);
  if (p.training) {
    const auto gemm = [&](auto tb) {
      constexpr int TB = decltype(tb)::value;
      run_all<d::gemm_state<TB>>(d::gemm_blocks(p), pl.gemm_smem,
                                 [&](auto& ex, int64_t b, unsigned char* s) { d::gemm_program<TB>(ex, p, b, s); }, ord);
    };
    switch (p.batch_tile) {
      case 1: gemm(std::integral_constant<int, 1>{}); break;
      case 2: gemm(std::integral_constant<int, 2>{}); break;
      case 4: gemm(std::integral_constant<int, 4>{}); break;
      case 8: gemm(std::integral_constant<int, 8>{}); break;
      default: gemm(std::integral_constant<int, 16>{}); break;
    }
  }
  run_all<d::no_state>(d::reduce_blocks(p), d::k_reduce_smem,
                       [&](auto& ex, int64_t b, unsigned char* s) { d::reduce_program(ex, p, b, s); }, ord);
  run_all<d::no_state>(d::finish_blocks(p), 16, [&](auto& ex, int64_t b, unsigned char*) { d::finish_program(ex, p, b); },
                       ord);
  return r;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// The programs do not depend on the order of the threads inside a phase (no thread reads what
// another writes between two barriers), and, run by hand here, equal run_host bitwise: every
// intermediate array (S, Wsum, H1, G, X, partials, ybar, m2) and every result.
RC_GTEST_PROP(FusedK77Programs, ThreadOrderInsidePhasesDoesNotMatter, ()) {
  k77::problem p{};
  p.batch = *rc::gen::inRange<int64_t>(1, 18);
  p.in_channels = *rc::gen::inRange<int64_t>(1, 11);
  p.out_channels = *rc::gen::inRange<int64_t>(1, 40);
  p.depth = *rc::gen::inRange<int64_t>(1, 6);
  p.height = *rc::gen::inRange<int64_t>(1, 7);
  p.width = *rc::gen::inRange<int64_t>(1, 14);
  p.kernel_size = *rc::gen::inRange<int64_t>(1, 6);
  if (*rc::gen::element(false, false, true)) {  // several row slabs
    p.depth = 8;
    p.height = 33;
    p.width = *rc::gen::inRange<int64_t>(1, 3);
    p.kernel_size = *rc::gen::inRange<int64_t>(1, 3);
  }
  p = draw_scalars(p);
  RC_PRE(valid_for_bn(p));
  const dist d = draw_dist();
  std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
  const int64_t k = p.kernel_size;
  std::vector<float> x(static_cast<std::size_t>(p.batch * p.in_channels * p.depth * p.height * p.width));
  std::vector<float> w(static_cast<std::size_t>(p.in_channels * p.out_channels * k * k * k));
  std::vector<float> bias(static_cast<std::size_t>(p.out_channels)), gamma(bias.size()), beta(bias.size()),
      rm(bias.size()), rv(bias.size());
  fill_volumes(x, p.depth, p.height, p.width, d, rng);
  fill_uniform(w, -0.3f, 0.3f, rng);
  fill_uniform(bias, -1.0f, 1.0f, rng);
  fill_uniform(gamma, -2.0f, 2.0f, rng);
  fill_uniform(beta, -1.0f, 1.0f, rng);
  fill_uniform(rm, -1.0f, 1.0f, rng);
  fill_uniform(rv, 0.1f, 3.0f, rng);
  const pipeline_run a = run_pipeline(p, x, w, bias, gamma, beta, rm, rv, order::forward);
  for (const order o : {order::reverse, order::stride7}) {
    const pipeline_run b = run_pipeline(p, x, w, bias, gamma, beta, rm, rv, o);
    RC_ASSERT(same_bits(a.S, b.S));
    RC_ASSERT(same_bits(a.wsum, b.wsum));
    RC_ASSERT(same_bits(a.h1, b.h1));
    RC_ASSERT(same_bits(a.G, b.G));
    RC_ASSERT(same_bits(a.X, b.X));
    RC_ASSERT(same_bits(a.partial, b.partial));
    RC_ASSERT(same_bits(a.ybar, b.ybar));
    RC_ASSERT(same_bits(a.m2, b.m2));
    RC_ASSERT(same_bits(a.out, b.out));
    RC_ASSERT(same_bits(a.rm, b.rm));
    RC_ASSERT(same_bits(a.rv, b.rv));
    RC_ASSERT(a.batches == b.batches);
  }
  for (float v : a.out) RC_ASSERT(std::isfinite(v));  // every output written (NaN-poisoned before)
  // run_host (threads, FMA clone, one workspace) gives the same bits.
  std::vector<float> out(a.out.size(), std::numeric_limits<float>::quiet_NaN()), rm2 = rm, rv2 = rv;
  int64_t batches = 7;
  guarded_workspace ws(k77::workspace_bytes(p));
  k77::run_host(p, x.data(), w.data(), bias.data(), gamma.data(), beta.data(), rm2.data(), rv2.data(), &batches,
                out.data(), ws.ptr());
  RC_ASSERT(same_bits(a.out, out));
  RC_ASSERT(same_bits(a.rm, rm2));
  RC_ASSERT(same_bits(a.rv, rv2));
  RC_ASSERT(a.batches == batches);
}

// The extreme shapes of the fuzz domain (D, H, W 1..40, k 1..7): the largest spectra and
// shared-memory plans (40^3 with k 7: 46^3 grid, 4-column fw chunks), degenerate axes, n' = 1.
// Against brute force, and through the exact-allocation pipeline (AddressSanitizer builds see any
// overrun of a block's shared memory or of an array).
TEST(FusedK77HostExecutor, ExtremeShapesOfTheFuzzDomain) {
  const k77::problem shapes[] = {
      {1, 1, 2, 40, 40, 40, 7, -3.0, 1e-6, 1.0, true},  {2, 2, 1, 40, 40, 40, 1, 0.5, 1e-3, 1.0, true},
      {1, 2, 3, 40, 1, 40, 7, 1.5, 1e-5, 1.0, true},    {1, 3, 2, 1, 40, 40, 6, -1.0, 1e-5, 1.0, true},
      {2, 1, 3, 40, 40, 1, 7, 2.0, 1e-5, 1.0, false},   {3, 2, 33, 1, 1, 1, 1, 1.0, 1.0, 1.0, true},
      {1, 1, 1, 39, 37, 35, 2, 3.0, 1e-6, 1.0, true},
  };
  std::mt19937_64 rng(77);
  for (const k77::problem& p : shapes)
    for (const dist d : {dist::uniform, dist::offset, dist::border_only}) {
      EXPECT_EQ(compare_with_brute_force(p, d, rng()), "")
          << p.depth << "x" << p.height << "x" << p.width << " k" << p.kernel_size << " " << dist_name(d);
    }
  for (const k77::problem& p : shapes) {
    const int64_t k = p.kernel_size;
    std::vector<float> x(static_cast<std::size_t>(p.batch * p.in_channels * p.depth * p.height * p.width));
    std::vector<float> w(static_cast<std::size_t>(p.in_channels * p.out_channels * k * k * k));
    std::vector<float> v(static_cast<std::size_t>(p.out_channels), 0.5f);
    fill_volumes(x, p.depth, p.height, p.width, dist::normal, rng);
    fill_uniform(w, -0.3f, 0.3f, rng);
    const pipeline_run r = run_pipeline(p, x, w, v, v, v, v, v, order::forward);
    for (float o : r.out) EXPECT_TRUE(std::isfinite(o));
  }
}

// ---------------------------------------------------------------------------------------------
// Validation and sizing
// ---------------------------------------------------------------------------------------------

std::string invalid_message(const k77::problem& p) {
  try {
    (void)k77::workspace_bytes(p);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(FusedK77Validation, RejectsInvalidProblemsNamingTheField) {
  const k77::problem ok{16, 64, 128, 16, 32, 32, 5, 2.0, 1e-5, 0.1, true};
  EXPECT_EQ(invalid_message(ok), "");
  auto p = ok;
  p.in_channels = 0;
  EXPECT_NE(invalid_message(p).find("in_channels"), std::string::npos);
  p = ok;
  p.kernel_size = 0;
  EXPECT_NE(invalid_message(p).find("kernel_size"), std::string::npos);
  p = ok;
  p.eps = 0.0;
  EXPECT_NE(invalid_message(p).find("eps"), std::string::npos);
  p = ok;
  p.momentum = 1.5;
  EXPECT_NE(invalid_message(p).find("momentum"), std::string::npos);
  p = ok;
  p.scale_factor = std::numeric_limits<double>::infinity();
  EXPECT_NE(invalid_message(p).find("scale_factor"), std::string::npos);
  p = {1, 3, 4, 1, 1, 1, 1, 1.0, 1e-5, 0.1, true};  // one value per channel in training
  EXPECT_NE(invalid_message(p).find("batch"), std::string::npos);
  p.training = false;  // fine in eval
  EXPECT_EQ(invalid_message(p), "");
}

TEST(FusedK77Validation, WorkspaceAtTheDefaultConfig) {
  // X: 20*36*64*16*19 complex (112 MB), H1: 64*11*25*128 complex (18 MB), G: 64*362*5*128 complex
  // (119 MB), partials ceil(362*19/8)*16*128 fp64 (14 MB), plus a few KB of sums.
  const std::size_t train = k77::workspace_bytes({16, 64, 128, 16, 32, 32, 5, 2.0, 1e-5, 0.1, true});
  EXPECT_GT(train, 258u * 1000 * 1000);
  EXPECT_LT(train, 268u * 1000 * 1000);
  const std::size_t eval = k77::workspace_bytes({16, 64, 128, 16, 32, 32, 5, 2.0, 1e-5, 0.1, false});
  EXPECT_LT(eval, 128u * 1024);
}

TEST(FusedK77Validation, DefaultDecomposition) {
  const auto pl = k77::detail::make_plan({16, 64, 128, 16, 32, 32, 5, 2.0, 1e-5, 0.1, true});
  const auto& p = pl.prm;
  EXPECT_EQ(p.n_fw, 19);
  EXPECT_EQ(p.pairs.count, 19 + 9 * 36 + 19);  // fd = 0, 1..9, 10
  EXPECT_EQ(p.n_units, p.pairs.count * 19);
  EXPECT_EQ(p.batch_tile, 16);
  EXPECT_EQ(p.n_ctiles, 4);
  EXPECT_EQ(p.pair_rows, 2);
  EXPECT_EQ(p.chunk_channels, 8);
  EXPECT_EQ(p.chunk_columns, 8);
  // Two blocks per SM for both big kernels.
  EXPECT_LE(pl.gemm_smem, k77::detail::k_smem_two_blocks);
  EXPECT_LE(pl.x_smem, k77::detail::k_smem_two_blocks);
}

// Every shape of the fuzz domain (D, H, W <= 40, k <= 7) gets a plan (no "not supported").
TEST(FusedK77Validation, WholeFuzzDomainIsPlanned) {
  for (int64_t k = 1; k <= 7; ++k)
    for (int64_t d : {1, 2, 17, 39, 40})
      for (int64_t h : {1, 2, 23, 40})
        for (int64_t w : {1, 2, 31, 40}) {
          const k77::problem p{8, 64, 64, d, h, w, k, -3.0, 1e-6, 1.0, true};
          EXPECT_EQ(invalid_message(p), "") << d << "x" << h << "x" << w << " k" << k;
        }
}

}  // namespace
