#pragma once
/// The phase (sub-pixel) decomposition of a transposed convolution along one dimension, written
/// once for kernels and host executors (#15 now, #34 later). Plain C++17 + FB_HOST_DEVICE.
///
/// Gather form (SPEC section 1): output o takes tap t from input i = (o + p - t)/s when that is an
/// integer in [0, n_in). Write o + p = q*s + r with r = (o + p) mod s (the phase) and
/// q = floor((o + p)/s) (the base). Then t = r + j*s for j = 0, 1, ... while t < k, and i = q - j:
///   - every output of phase r has the same taps, J(r) = ceil((k - r)/s) of them (0 when r >= k);
///   - along q the outputs of one phase form a stride-1 correlation of x with the taps
///     t = r, r + s, ...: a dense problem, no divisibility tests, and a warp whose lanes share one
///     phase runs one uniform tap loop.
/// Padding shifts (q, r) only; p > k, crops at both borders and phases without taps (k < s) are all
/// covered: an input index i = q - j outside [0, n_in) contributes nothing.
#include <cstdint>

#include "fused/arch/host_device.cuh"
#include "fused/math/convt_index.cuh"

namespace fb::fused {

/// One spatial dimension of a transposed convolution (no output_padding needed here: it only
/// enlarges n_out, and n_out is given).
struct phase_dim {
  int64_t n_in;   ///< input size
  int64_t n_out;  ///< output size
  int64_t k;      ///< kernel size
  int64_t s;      ///< stride
  int64_t p;      ///< padding (>= 0)

  /// Phase of output o: (o + p) mod s.
  FB_HOST_DEVICE int64_t phase_of(int64_t o) const { return (o + p) % s; }
  /// Base of output o: floor((o + p) / s) (o + p >= 0 for o >= 0, p >= 0).
  FB_HOST_DEVICE int64_t base_of(int64_t o) const { return (o + p) / s; }
  /// The output with base q and phase r: q*s + r - p (may lie outside [0, n_out)).
  FB_HOST_DEVICE int64_t output_of(int64_t q, int64_t r) const { return q * s + r - p; }
  /// True when output_of(q, r) is an output.
  FB_HOST_DEVICE bool has_output(int64_t q, int64_t r) const {
    const int64_t o = output_of(q, r);
    return o >= 0 && o < n_out;
  }
  /// Taps of phase r: the t = r + j*s < k, J(r) = ceil((k - r)/s), 0 when r >= k.
  FB_HOST_DEVICE int64_t taps(int64_t r) const { return r < k ? (k - r + s - 1) / s : 0; }
  /// The most taps of any phase: J(0) = ceil(k/s) >= 1.
  FB_HOST_DEVICE int64_t max_taps() const { return taps(0); }
  /// Kernel tap index of the j-th tap of phase r.
  FB_HOST_DEVICE int64_t tap(int64_t r, int64_t j) const { return r + j * s; }
  /// Input index read by the j-th tap at base q (valid only when in [0, n_in)).
  FB_HOST_DEVICE static int64_t input_of(int64_t q, int64_t j) { return q - j; }
  /// Smallest base of any output: base_of(0).
  FB_HOST_DEVICE int64_t q_min() const { return base_of(0); }
  /// Number of bases of outputs: base_of(n_out - 1) - base_of(0) + 1. Every base in the range has
  /// at least one output (consecutive outputs have bases that differ by at most 1).
  FB_HOST_DEVICE int64_t q_count() const { return base_of(n_out - 1) - base_of(0) + 1; }
  /// Valid (input, tap) pairs summed over all taps: sum_t |{i : 0 <= i*s - p + t < n_out}|. The
  /// product over the three dimensions, times C_in*C_out*B, is the convolution's multiply-adds.
  FB_HOST_DEVICE int64_t valid_pairs() const {
    int64_t n = 0;
    for (int64_t t = 0; t < k; ++t) n += convt_tap_interval(n_in, n_out, s, p, t).size();
    return n;
  }
};

/// Phase-major order along one dimension: the outputs of phase 0 by base, then those of phase 1,
/// and so on. Output o of phase r = phase_of(o) sits at offset(r) + base_of(o) - first_base(r).
/// Closed forms from two divisions made once (t = o + p runs over [p, p + n_out); phase r holds the
/// t with t mod s = r), all 32-bit: p + n_out fits (require_convt3d_sizes: inputs and padding
/// <= 2^20, k and s <= 64, so p + n_out < 2^27), and the GPU divides 64-bit
/// numbers in a called routine (a per-output loop of 64-bit divisions made #15's rows launch 4x
/// slower than its memory traffic, H100 2026-11-25).
struct phase_order {
  int qa, ra;  ///< p = qa * s + ra
  int qb, rb;  ///< p + n_out = qb * s + rb

  /// The first base of phase r (valid when count(r) > 0).
  FB_HOST_DEVICE int first_base(int r) const { return qa + (ra > r ? 1 : 0); }
  /// Outputs of phase r: #{t in [p, p + n_out) : t mod s = r}.
  FB_HOST_DEVICE int count(int r) const { return qb + (rb > r ? 1 : 0) - first_base(r); }
  /// Outputs of the phases before r: #{t in [p, p + n_out) : t mod s < r}.
  FB_HOST_DEVICE int offset(int r) const {
    return (qb - qa) * r + (rb < r ? rb : r) - (ra < r ? ra : r);
  }
};

FB_HOST_DEVICE phase_order phase_order_of(const phase_dim& d) {
  phase_order o;
  o.qa = static_cast<int>(d.p / d.s);
  o.ra = static_cast<int>(d.p % d.s);
  o.qb = static_cast<int>((d.p + d.n_out) / d.s);
  o.rb = static_cast<int>((d.p + d.n_out) % d.s);
  return o;
}

}  // namespace fb::fused
