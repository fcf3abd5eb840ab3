// DMMA convolution probe for issue 11 (#34): how fast is #34's transposed convolution on the fp64
// tensor cores, fed from fp32 inputs, at its default size?
//
// Why fp64 MMA. Products of fp32 numbers are exact in fp64 (24 + 24 < 53 bits), so an fp64
// accumulation of K = 256 of them, rounded to fp32 once, is correctly rounded but for ~2^-45
// relative: far more accurate than any fp32 order. The split-precision TF32 schemes need Kahan
// additions on the SIMT units that cost about half of a plain SIMT convolution's instructions
// (NOTES 2026-11-25). The question is the rate: m8n8k4 DMMA measured 33.1 TFLOP/s on the H100
// (probe-2026-11-23-tile), and #34 needs ~42 TFLOP/s overall to reach 10x. tc_precision_bench
// measures the sm_90 shapes m16n8k{4,8,16} in registers; this probe measures m16n8k16 inside a
// real tile loop. Prediction: at least 0.7x the register-only m16n8k16 rate, if that rate is
// well above 33 TFLOP/s.
//
// The convolution (ConvTranspose3d, stride 2, kernel 4, padding 1: the default of #34; B, C_in,
// D, H, W from the command line, C_out 64): phase (sub-pixel) decomposition. Output o, t = o + p,
// phase r = t mod 2, base q = t div 2, taps k = r + 2j (j = 0, 1), input i = q - j. Per phase
// (rd, rh, rw) a GEMM: M = bases (qd, qh, qw), N = C_out, K = C_in x 8 taps.
//
// Two variants (`variant`), both looping over a quarter of a phase's qd bases and over qh in groups
// of 4 (x staged per group as fp64 with its halo, zero outside the input, columns for both w phases);
// warp w takes qh row w / 2 of the group and 32 channels (w % 2) x all 32 qw bases: 2 m16 x 4 n8
// accumulator tiles of fp64, K in steps of 16.
//   one w phase:   a block per (b, rd, rh, rw, qd quarter), the phase's weights staged once as fp64;
//   both w phases: a block per (b, rd, rh, qd quarter) computing rw = 0 then 1 on the same x, so
//                  it holds whole W' rows, as #34's LayerNorm epilogue needs; weights fp32 (two
//                  phases in fp64 would not fit beside x), converted as they are loaded.
// Output: y in phase-major order [b][co][rd][rh][rw][qd][qh][qw] (fp32), what #15 stores (a real
// #34 kernel would run the LayerNorm epilogue instead). Requires W == 32 bases per w phase
// (W' = 64 = C_out, #34's rule).
//
// Checks: 4096 sampled outputs against an fp64 (long double) sum on the host: max error relative
// to sum |products|, and how many differ from the fp32 rounding of the exact sum. Exit 1 if any
// sample is off by more than 1e-6 relative (a layout or index bug, not rounding).
//
// Build: probes/tc_precision/build.sh (build/probe/dmma_conv_bench). Run on the GPU host:
// build/probe/dmma_conv_bench [B C_in D H] (default 32 32 16 32). Anywhere (no GPU needed):
// build/probe/dmma_conv_bench --host-check, the kernel's staging and operand offsets emulated on the
// host against the definition.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <type_traits>
#include <vector>

#include "fused/math/convt_phase.cuh"
#include "probes/probe_main.h"
#include "tc_common.cuh"

namespace {

constexpr int kS = 2, kK = 4, kP = 1;  // stride, kernel, padding
constexpr int kCo = 64;                // output channels (W' = C_out = 64 for #34)
constexpr int kQw = 32;                // w bases per w phase
constexpr int kRows = 4;               // qh rows per group
constexpr int kThreads = 256;
constexpr int kWPitch = kCo + 4;       // fp64 weights per K row in shared memory (bank spread)
constexpr int kXw = kQw + 2;           // staged x columns: w = qw - jw for qw in [0, 33) (both w phases), jw in {0, 1}
constexpr int kXh = kRows + 1;         // staged x rows per (ci, jd)

struct geom {
  int b, ci, d, h, w;  // input sizes
  int od, oh, ow;      // output sizes
  fb::fused::phase_order pd, ph, pw;  // per dimension: each phase's first base, count, offset
};

geom make_geom(int b, int ci, int d, int h, int w) {
  auto dim = [](int n) {
    return fb::fused::phase_dim{n, fb::fused::convt_output_size(n, kK, kS, kP, 0), kK, kS, kP};
  };
  const fb::fused::phase_dim dd = dim(d), dh = dim(h), dw = dim(w);
  return geom{b,
              ci,
              d,
              h,
              w,
              static_cast<int>(dd.n_out),
              static_cast<int>(dh.n_out),
              static_cast<int>(dw.n_out),
              fb::fused::phase_order_of(dd),
              fb::fused::phase_order_of(dh),
              fb::fused::phase_order_of(dw)};
}

/// Phase-major order inside a (b, co) plane, as #15's buffer (phase_block_of): phases (rd, rh, rw)
/// in order, each a dense box [qd][qh][qw] of its bases.
__host__ __device__ inline int64_t y_index(const geom& g, int b, int co, int rd, int rh, int rw, int qd, int qh, int qw) {
  const int64_t plane = (static_cast<int64_t>(b) * kCo + co) * g.od * g.oh * g.ow;
  const int64_t n_d = g.pd.count(rd), n_h = g.ph.count(rh), n_w = g.pw.count(rw);
  const int64_t box = g.pd.offset(rd) * static_cast<int64_t>(g.oh) * g.ow + n_d * (g.ph.offset(rh) * static_cast<int64_t>(g.ow) + n_h * g.pw.offset(rw));
  return plane + box + ((qd - g.pd.first_base(rd)) * n_h + (qh - g.ph.first_base(rh))) * n_w + (qw - g.pw.first_base(rw));
}

/// Where a block finds its operands in shared memory, shared by the kernel and the host emulation
/// (--host-check). Weights: slot (w phase slot, row k = ci * 8 + jd * 4 + jh * 2 + jw), column co.
/// x: staged element e = ((ci * 2 + jd) * kXh + u) * kXw + c holds input (d = qd - jd,
/// h = qh0 - 1 + u, w = c - 1): columns for every base qw in [0, 33) of either w phase.
__host__ __device__ inline int w_offset(int K, int slot, int k, int co) { return (slot * K + k) * kWPitch + co; }
/// A[m = qw (base), k] for the group's row `row`: x at (qd - jd, qh0 + row - jh, qw - jw).
__host__ __device__ inline int a_offset(int k, int row, int qw) {
  const int ci = k / 8, jd = (k >> 2) & 1, jh = (k >> 1) & 1, jw = k & 1;
  return ((ci * 2 + jd) * kXh + (row - jh + 1)) * kXw + (qw - jw + 1);
}
/// The input element staged at e (0 outside the input).
__host__ __device__ inline float x_staged(const float* x, const geom& g, int b, int qd, int qh0, int e) {
  const int c = e % kXw, u = (e / kXw) % kXh, jd = (e / (kXw * kXh)) % 2, ci = e / (kXw * kXh * 2);
  const int id = qd - jd, ih = qh0 - 1 + u, iw = c - 1;
  if (id < 0 || id >= g.d || ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) return 0.0f;
  return x[(((static_cast<int64_t>(b) * g.ci + ci) * g.d + id) * g.h + ih) * g.w + iw];
}
/// Weight row k of phase (rd, rh, rw), channel co: w[ci][co][rd + 2jd][rh + 2jh][rw + 2jw].
__host__ __device__ inline float w_phase(const float* w, int rd, int rh, int rw, int k, int co) {
  const int ci = k / 8, jd = (k >> 2) & 1, jh = (k >> 1) & 1, jw = k & 1;
  const int kd = rd + 2 * jd, kh = rh + 2 * jh, kw = rw + 2 * jw;
  return w[((static_cast<int64_t>(ci) * kCo + co) * kK + kd) * kK * kK + kh * kK + kw];
}
/// The block's qd range: quarter `quarter` of phase rd's bases.
__host__ __device__ inline void qd_range(const geom& g, int rd, int quarter, int& begin, int& end) {
  const int per_quarter = (g.pd.count(rd) + 3) / 4;
  begin = g.pd.first_base(rd) + quarter * per_quarter;
  end = min(g.pd.first_base(rd) + g.pd.count(rd), begin + per_quarter);
}

/// The two variants. kBothW false: a block per (b, rd, rh, rw, qd quarter), its weights fp64.
/// kBothW true: a block per (b, rd, rh, qd quarter) computing both w phases, so that it holds whole
/// W' rows as #34's LayerNorm epilogue needs; its two phases' weights fp32 (fp64 would not fit),
/// converted as they are loaded into B fragments.
template <bool kBothW>
struct variant {
  using weight_t = std::conditional_t<kBothW, float, double>;
  static constexpr int kWPhases = kBothW ? 2 : 1;
  static constexpr int kPhaseBlocks = kBothW ? 4 : 8;  // blocks per (b, quarter)
  static size_t smem_bytes(int ci) {
    return sizeof(weight_t) * kWPhases * static_cast<size_t>(ci) * 8 * kWPitch +
           sizeof(double) * static_cast<size_t>(ci) * 2 * kXh * kXw;
  }
  /// Block index -> (b, rd, rh, first rw, quarter).
  __host__ __device__ static void split(int block, int& b, int& rd, int& rh, int& rw0, int& quarter) {
    const int phase = block % kPhaseBlocks;
    rd = kBothW ? phase >> 1 : phase >> 2;
    rh = kBothW ? phase & 1 : (phase >> 1) & 1;
    rw0 = kBothW ? 0 : phase & 1;
    quarter = (block / kPhaseBlocks) % 4;
    b = block / (kPhaseBlocks * 4);
  }
};

/// See the file's header and `variant`. Dynamic shared memory: weights [kWPhases][C_in * 8][kWPitch]
/// (weight_t), then x fp64 [C_in][2][kXh][kXw].
template <bool kBothW>
__global__ void __launch_bounds__(kThreads, 1) dmma_conv_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                                                float* __restrict__ y, const __grid_constant__ geom g) {
  using V = variant<kBothW>;
  using weight_t = typename V::weight_t;
  extern __shared__ double smem[];
  const int K = g.ci * 8;
  weight_t* ws = reinterpret_cast<weight_t*>(smem);
  double* xs = smem + (sizeof(weight_t) * V::kWPhases * static_cast<size_t>(K) * kWPitch) / sizeof(double);
  int b, rd, rh, rw0, quarter;
  V::split(blockIdx.x, b, rd, rh, rw0, quarter);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, gq = lane / 4, tq = lane % 4;

  for (int e = tid; e < V::kWPhases * K * kCo; e += kThreads) {
    const int slot = e / (K * kCo), k = (e / kCo) % K, co = e % kCo;
    ws[w_offset(K, slot, k, co)] = static_cast<weight_t>(w_phase(w, rd, rh, rw0 + slot, k, co));
  }

  int qd_begin, qd_end;
  qd_range(g, rd, quarter, qd_begin, qd_end);
  const int row = warp / 2, n0 = (warp % 2) * 32;
  for (int qd = qd_begin; qd < qd_end; ++qd)
    for (int qh0 = g.ph.first_base(rh); qh0 < g.ph.first_base(rh) + g.ph.count(rh); qh0 += kRows) {
      __syncthreads();  // the previous group's x is no longer read (and, first time, nothing)
      for (int e = tid; e < g.ci * 2 * kXh * kXw; e += kThreads) xs[e] = static_cast<double>(x_staged(x, g, b, qd, qh0, e));
      __syncthreads();
      const int qh = qh0 + row;
      for (int slot = 0; slot < V::kWPhases; ++slot) {
        const int rw = rw0 + slot, qw0 = g.pw.first_base(rw);
        double acc[2][4][4] = {};
        for (int k0 = 0; k0 < K; k0 += 16) {
          double a[2][8], bf[4][4];
#pragma unroll
          for (int j = 0; j < 4; ++j) {  // k = k0 + tq + 4j: A (g, k), (g + 8, k); B (k, g)
            const int k = k0 + tq + 4 * j;
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
              a[mt][2 * j] = xs[a_offset(k, row, qw0 + mt * 16 + gq)];
              a[mt][2 * j + 1] = xs[a_offset(k, row, qw0 + mt * 16 + gq + 8)];
            }
#pragma unroll
            for (int nt = 0; nt < 4; ++nt) bf[nt][j] = static_cast<double>(ws[w_offset(K, slot, k, n0 + nt * 8 + gq)]);
          }
#pragma unroll
          for (int mt = 0; mt < 2; ++mt)
#pragma unroll
            for (int nt = 0; nt < 4; ++nt) mma_f64_m16n8<16>(acc[mt][nt], a[mt], bf[nt]);
        }
        // C fragment: (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1) = (qw, co).
        if (qh < g.ph.first_base(rh) + g.ph.count(rh))
#pragma unroll
          for (int mt = 0; mt < 2; ++mt)
#pragma unroll
            for (int nt = 0; nt < 4; ++nt)
#pragma unroll
              for (int i = 0; i < 4; ++i) {
                const int qw = qw0 + mt * 16 + gq + (i >= 2 ? 8 : 0);
                const int co = n0 + nt * 8 + 2 * tq + (i & 1);
                y[y_index(g, b, co, rd, rh, rw, qd, qh, qw)] = static_cast<float>(acc[mt][nt][i]);
              }
      }
    }
}

/// The output (b, co, od, oh, ow) straight from the definition, in long double; mag = sum |products|.
long double conv_ref(const std::vector<float>& x, const std::vector<float>& w, const geom& g, int b, int co, int od,
                     int oh, int ow, long double& mag) {
  long double acc = 0;
  mag = 0;
  for (int ci = 0; ci < g.ci; ++ci)
    for (int kd = 0; kd < kK; ++kd)
      for (int kh = 0; kh < kK; ++kh)
        for (int kw = 0; kw < kK; ++kw) {
          const int td = od + kP - kd, th = oh + kP - kh, tw = ow + kP - kw;  // = i * s
          if (td < 0 || th < 0 || tw < 0 || td % kS || th % kS || tw % kS) continue;
          const int id = td / kS, ih = th / kS, iw = tw / kS;
          if (id >= g.d || ih >= g.h || iw >= g.w) continue;
          const long double p =
              static_cast<long double>(x[(((static_cast<size_t>(b) * g.ci + ci) * g.d + id) * g.h + ih) * g.w + iw]) *
              w[((static_cast<size_t>(ci) * kCo + co) * kK + kd) * kK * kK + kh * kK + kw];
          acc += p;
          mag += std::fabs(p);
        }
  return acc;
}

/// Every output of y against conv_ref: max |err| / sum |products| and the outputs off by > 1e-6
/// (NaN: never written).
void compare_all(const std::vector<float>& x, const std::vector<float>& w, const geom& g, const std::vector<float>& y,
                 double& max_rel, size_t& bad) {
  max_rel = 0;
  bad = 0;
  for (int b = 0; b < g.b; ++b)
    for (int co = 0; co < kCo; ++co)
      for (int od = 0; od < g.od; ++od)
        for (int oh = 0; oh < g.oh; ++oh)
          for (int ow = 0; ow < g.ow; ++ow) {
            long double mag = 0;
            const long double want = conv_ref(x, w, g, b, co, od, oh, ow, mag);
            const int td = od + kP, th = oh + kP, tw = ow + kP;
            const float got = y[y_index(g, b, co, td % 2, th % 2, tw % 2, td / 2, th / 2, tw / 2)];
            const double rel = mag > 0 ? static_cast<double>(std::fabs(got - want) / mag) : std::fabs(got);
            if (!(rel <= 1e-6)) ++bad;
            if (std::isfinite(rel)) max_rel = std::max(max_rel, rel);
          }
}

/// --host-check: every block of the kernel on the host, thread by thread, with the same block split,
/// staging and operand offsets, and the m16n8k16 f64 MMA emulated with the fragment layout the
/// kernel assumes (A (g, t + 4j) in a[2j], (g + 8, t + 4j) in a[2j + 1]; B (t + 4j, g) in b[j]; C (g, 2t),
/// (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1)); then every output against conv_ref. What it cannot check
/// is the hardware's layout itself: tc_precision_bench's LAYOUT lines do that on the GPU.
template <bool kBothW>
int host_check_variant(const geom& g, const std::vector<float>& x, const std::vector<float>& w) {
  using V = variant<kBothW>;
  const size_t n_y = static_cast<size_t>(g.b) * kCo * g.od * g.oh * g.ow;
  std::vector<float> y(n_y, std::nanf(""));
  const int K = g.ci * 8;
  std::vector<typename V::weight_t> ws(static_cast<size_t>(V::kWPhases) * K * kWPitch);
  std::vector<double> xs(static_cast<size_t>(g.ci) * 2 * kXh * kXw);
  for (int block = 0; block < g.b * V::kPhaseBlocks * 4; ++block) {
    int b, rd, rh, rw0, quarter;
    V::split(block, b, rd, rh, rw0, quarter);
    for (int e = 0; e < V::kWPhases * K * kCo; ++e) {
      const int slot = e / (K * kCo), k = (e / kCo) % K, co = e % kCo;
      ws[w_offset(K, slot, k, co)] = static_cast<typename V::weight_t>(w_phase(w.data(), rd, rh, rw0 + slot, k, co));
    }
    int qd_begin, qd_end;
    qd_range(g, rd, quarter, qd_begin, qd_end);
    for (int qd = qd_begin; qd < qd_end; ++qd)
      for (int qh0 = g.ph.first_base(rh); qh0 < g.ph.first_base(rh) + g.ph.count(rh); qh0 += kRows) {
        for (size_t e = 0; e < xs.size(); ++e) xs[e] = x_staged(x.data(), g, b, qd, qh0, static_cast<int>(e));
        for (int warp = 0; warp < kThreads / 32; ++warp)
          for (int slot = 0; slot < V::kWPhases; ++slot) {
            const int row = warp / 2, n0 = (warp % 2) * 32, rw = rw0 + slot, qw0 = g.pw.first_base(rw);
            double acc[32][2][4][4] = {};  // [lane][mt][nt][i]
            for (int k0 = 0; k0 < K; k0 += 16) {
              double a[32][2][8], bf[32][4][4];
              for (int lane = 0; lane < 32; ++lane) {
                const int gq = lane / 4, tq = lane % 4;
                for (int j = 0; j < 4; ++j) {
                  const int k = k0 + tq + 4 * j;
                  for (int mt = 0; mt < 2; ++mt) {
                    a[lane][mt][2 * j] = xs[a_offset(k, row, qw0 + mt * 16 + gq)];
                    a[lane][mt][2 * j + 1] = xs[a_offset(k, row, qw0 + mt * 16 + gq + 8)];
                  }
                  for (int nt = 0; nt < 4; ++nt)
                    bf[lane][nt][j] = static_cast<double>(ws[w_offset(K, slot, k, n0 + nt * 8 + gq)]);
                }
              }
              for (int mt = 0; mt < 2; ++mt)
                for (int nt = 0; nt < 4; ++nt)
                  for (int lane = 0; lane < 32; ++lane)
                    for (int i = 0; i < 4; ++i) {
                      const int m = lane / 4 + (i >= 2 ? 8 : 0), n = 2 * (lane % 4) + (i & 1);
                      double sum = acc[lane][mt][nt][i];
                      for (int kk = 0; kk < 16; ++kk) {
                        const int j = kk / 4, t = kk % 4;
                        sum += a[(m % 8) * 4 + t][mt][2 * j + (m >= 8 ? 1 : 0)] * bf[n * 4 + t][nt][j];
                      }
                      acc[lane][mt][nt][i] = sum;
                    }
            }
            const int qh = qh0 + row;
            if (qh >= g.ph.first_base(rh) + g.ph.count(rh)) continue;
            for (int lane = 0; lane < 32; ++lane)
              for (int mt = 0; mt < 2; ++mt)
                for (int nt = 0; nt < 4; ++nt)
                  for (int i = 0; i < 4; ++i) {
                    const int qw = qw0 + mt * 16 + lane / 4 + (i >= 2 ? 8 : 0);
                    const int co = n0 + nt * 8 + 2 * (lane % 4) + (i & 1);
                    y[y_index(g, b, co, rd, rh, rw, qd, qh, qw)] = static_cast<float>(acc[lane][mt][nt][i]);
                  }
          }
      }
  }
  double max_rel = 0;
  size_t bad = 0;
  compare_all(x, w, g, y, max_rel, bad);
  std::printf("HOSTCHECK dmma_conv %s (B=%d C_in=%d D,H,W=%d,%d,%d -> %dx%dx%d): %zu outputs, max |err|/sum|ab| %.3e, %zu wrong\n",
              kBothW ? "both w phases, fp32 weights" : "one w phase, fp64 weights", g.b, g.ci, g.d, g.h, g.w, g.od,
              g.oh, g.ow, n_y, max_rel, bad);
  return bad == 0 ? 0 : 1;
}

int host_check() {
  const geom g = make_geom(2, 4, 3, 5, 32);  // H' = 8: qh groups of 4 with a short phase (4 or 5 bases per h phase)
  rng_t rng{7};
  std::vector<float> x(static_cast<size_t>(g.b) * g.ci * g.d * g.h * g.w), w(static_cast<size_t>(g.ci) * kCo * kK * kK * kK);
  for (auto& v : x) v = draw_x(dist::normal, rng);
  for (auto& v : w) v = static_cast<float>(2 * rng.u01() - 1);
  const int one = host_check_variant<false>(g, x, w);
  const int both = host_check_variant<true>(g, x, w);
  return one | both;
}

/// Times variant kBothW on the GPU and checks 4096 sampled outputs. Returns 0 when all are right.
template <bool kBothW>
int run_variant(const geom& g, const std::vector<float>& x, const std::vector<float>& w, const float* dx, const float* dw,
                float* dy, rng_t& rng) {
  using V = variant<kBothW>;
  const char* name = kBothW ? "both w phases, fp32 weights" : "one w phase, fp64 weights";
  const size_t smem = V::smem_bytes(g.ci);
  cudaDeviceProp prop{};
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (smem > static_cast<size_t>(prop.sharedMemPerBlockOptin)) {
    std::printf("SKIP dmma_conv %s: C_in=%d needs %zu B of shared memory, the GPU allows %zu\n", name, g.ci, smem,
                static_cast<size_t>(prop.sharedMemPerBlockOptin));
    return 0;
  }
  const size_t n_y = static_cast<size_t>(g.b) * kCo * g.od * g.oh * g.ow;
  FB_CUDA_CHECK(cudaMemset(dy, 0xFF, n_y * sizeof(float)));  // NaN: an output never written shows
  FB_CUDA_CHECK(cudaFuncSetAttribute(dmma_conv_kernel<kBothW>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  const int blocks = g.b * V::kPhaseBlocks * 4;
  const double ms = time_ms([&] { dmma_conv_kernel<kBothW><<<blocks, kThreads, smem>>>(dx, dw, dy, g); });
  std::vector<float> y(n_y);
  FB_CUDA_CHECK(cudaMemcpy(y.data(), dy, n_y * sizeof(float), cudaMemcpyDeviceToHost));
  // MACs: every tap of every output, zero-padded ones included.
  const double macs_all = static_cast<double>(n_y) * g.ci * 8;
  std::printf("RATE dmma_conv m16n8k16 %s: %.3f ms, %.1f TFLOP/s counting every tap (%.3g MACs; %d blocks, %zu B shared)\n",
              name, ms, 2 * macs_all / ms / 1e9, macs_all, blocks, smem);
  size_t bad = 0, not_rn = 0, nan = 0;
  double max_rel = 0;
  for (int s = 0; s < 4096; ++s) {
    const int b = static_cast<int>(rng.next() % g.b), co = static_cast<int>(rng.next() % kCo);
    const int od = static_cast<int>(rng.next() % g.od), oh = static_cast<int>(rng.next() % g.oh);
    const int ow = static_cast<int>(rng.next() % g.ow);
    long double mag = 0;
    const long double acc = conv_ref(x, w, g, b, co, od, oh, ow, mag);
    const int td = od + kP, th = oh + kP, tw = ow + kP;
    const float got = y[y_index(g, b, co, td % 2, th % 2, tw % 2, td / 2, th / 2, tw / 2)];
    if (!std::isfinite(got)) {
      ++nan;
      continue;
    }
    const double rel = mag > 0 ? std::fabs(static_cast<double>(got) - static_cast<double>(acc)) / static_cast<double>(mag) : 0.0;
    max_rel = std::max(max_rel, rel);
    bad += rel > 1e-6;
    not_rn += got != static_cast<float>(acc);
  }
  std::printf("ACC dmma_conv %s: 4096 samples, max |err|/sum|ab| %.3e, %zu not the fp32 rounding of the exact sum, %zu off by > 1e-6, %zu not written\n",
              name, max_rel, not_rn, bad, nan);
  return bad == 0 && nan == 0 ? 0 : 1;
}

}  // namespace

static int probe(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--host-check") return host_check();
  const int B = argc > 1 ? std::atoi(argv[1]) : 32, Ci = argc > 2 ? std::atoi(argv[2]) : 32;
  const int D = argc > 3 ? std::atoi(argv[3]) : 16, H = argc > 4 ? std::atoi(argv[4]) : 32, W = 32;
  const geom g = make_geom(B, Ci, D, H, W);
  if (g.ow != 2 * kQw || B < 1 || Ci < 2 || Ci % 2 != 0 || D < 1 || H < 1) {
    std::fprintf(stderr, "dmma_conv_bench: needs W' = 64 (W = 32), B >= 1, an even C_in >= 2, D, H >= 1\n");
    return 2;
  }
  cudaDeviceProp prop{};
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("dmma_conv_bench: %s, B=%d C_in=%d C_out=%d D,H,W=%d,%d,%d k=%d s=%d p=%d -> %dx%dx%d, output %.2f GB\n",
              prop.name, B, Ci, kCo, D, H, W, kK, kS, kP, g.od, g.oh, g.ow,
              4.0 * B * kCo * g.od * g.oh * g.ow / 1e9);
  rng_t rng{20261125};
  std::vector<float> x(static_cast<size_t>(B) * Ci * D * H * W), w(static_cast<size_t>(Ci) * kCo * kK * kK * kK);
  for (auto& v : x) v = draw_x(dist::uniform, rng);
  const double wb = 1.0 / std::sqrt(static_cast<double>(kCo * kK * kK * kK));
  for (auto& v : w) v = static_cast<float>((2 * rng.u01() - 1) * wb);
  const size_t n_y = static_cast<size_t>(B) * kCo * g.od * g.oh * g.ow;
  float *dx, *dw, *dy;
  FB_CUDA_CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
  FB_CUDA_CHECK(cudaMalloc(&dw, w.size() * sizeof(float)));
  FB_CUDA_CHECK(cudaMalloc(&dy, n_y * sizeof(float)));
  FB_CUDA_CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaMemcpy(dw, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
  const int one = run_variant<false>(g, x, w, dx, dw, dy, rng);
  const int both = run_variant<true>(g, x, w, dx, dw, dy, rng);
  FB_CUDA_CHECK(cudaFree(dx));
  FB_CUDA_CHECK(cudaFree(dw));
  FB_CUDA_CHECK(cudaFree(dy));
  return one | both;
}

int main(int argc, char** argv) {
  return fb::probes::run_probe("dmma_conv_bench", [&] { return probe(argc, argv); });
}
