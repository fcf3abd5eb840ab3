#pragma once
/// Exact tap-box sums of one input volume for a cubic 3-D transposed convolution, written once for
/// kernels and host executors. For tap (td, th, tw) the inputs that land inside the output form a
/// box I_d(td) x I_h(th) x I_w(tw) (convt_tap_interval per dimension), and
///   sum over the output of y[b, co] = sum_ci sum_taps W[ci, co, tap] * R[b, ci, tap] (+ N' * bias),
///   R[tap] = sum of x over the tap's box,
/// the 3-D form of the #44 identity (SPEC 1.4), here the exact per-(b, c) means of #15.
///
/// Separably, in fp64 (sums of exactly converted fp32 values, fixed increasing order, so
/// deterministic; ~1e-16 relative error instead of the ~1e-7 of fp32 partials):
///   A[i][th][l]   = sum_{j in I_h(th)} x[i][j][l]      (threads over (i, th, l): coalesced in l)
///   B[i][th][tw]  = sum_{l in I_w(tw)} A[i][th][l]
///   R[td][th][tw] = sum_{i in I_d(td)} B[i][th][tw]
/// Cost: k passes over the volume (L1-resident) for A, then tiny. Each step is a function of the
/// thread index; a block barrier separates the steps.
#include <cstdint>

#include "fused/arch/host_device.cuh"
#include "fused/math/convt_phase.cuh"

namespace fb::fused::math::box_sums {

/// Step 1 for thread tid of n_threads: A[(i*k + th)*W + l] for every (i, th, l).
FB_HOST_DEVICE void step_h(const phase_dim& d, const phase_dim& h, const phase_dim& w, const float* x, double* a,
                           int tid, int n_threads) {
  const int64_t k = h.k, W = w.n_in, H = h.n_in;
  const int64_t n = d.n_in * k * W;
  for (int64_t e = tid; e < n; e += n_threads) {
    const int64_t l = e % W;
    const int64_t th = (e / W) % k;
    const int64_t i = e / (W * k);
    const index_interval ih = convt_tap_interval(H, h.n_out, h.s, h.p, th);
    const float* col = x + (i * H) * W + l;
    double acc = 0.0;
    for (int64_t j = ih.lo; j < ih.hi; ++j) acc += static_cast<double>(col[j * W]);
    a[e] = acc;
  }
}

/// Step 2: B[(i*k + th)*k + tw] = sum over l in I_w(tw) of A[(i*k + th)*W + l].
FB_HOST_DEVICE void step_w(const phase_dim& d, const phase_dim& w, const double* a, double* b, int tid, int n_threads) {
  const int64_t k = w.k, W = w.n_in;
  const int64_t n = d.n_in * k * k;
  for (int64_t e = tid; e < n; e += n_threads) {
    const int64_t tw = e % k;
    const int64_t row = e / k;  // i*k + th
    const index_interval iw = convt_tap_interval(W, w.n_out, w.s, w.p, tw);
    double acc = 0.0;
    for (int64_t l = iw.lo; l < iw.hi; ++l) acc += a[row * W + l];
    b[e] = acc;
  }
}

/// Step 3: R[(td*k + th)*k + tw] = sum over i in I_d(td) of B[(i*k + th)*k + tw].
FB_HOST_DEVICE void step_d(const phase_dim& d, const double* b, double* r, int tid, int n_threads) {
  const int64_t k = d.k, kk = k * k;
  for (int64_t e = tid; e < kk * k; e += n_threads) {
    const int64_t td = e / kk;
    const int64_t hw = e % kk;  // th*k + tw
    const index_interval id = convt_tap_interval(d.n_in, d.n_out, d.s, d.p, td);
    double acc = 0.0;
    for (int64_t i = id.lo; i < id.hi; ++i) acc += b[i * kk + hw];
    r[e] = acc;
  }
}

/// Scratch doubles per volume: A (D*k*W) and B (D*k*k).
FB_HOST_DEVICE int64_t scratch_a(const phase_dim& d, const phase_dim& w) { return d.n_in * w.k * w.n_in; }
FB_HOST_DEVICE int64_t scratch_b(const phase_dim& d, const phase_dim& w) { return d.n_in * w.k * w.k; }

}  // namespace fb::fused::math::box_sums
