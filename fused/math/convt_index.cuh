#pragma once
/// The transposed-convolution index map (SPEC section 1), written once for kernels, host executors
/// and the libtorch-free parts of reference/. Plain C++17 + FB_HOST_DEVICE: compiles with g++ alone.
///
/// Scatter form: input index i with tap t lands on o = i*s - p + t and counts only when
/// 0 <= o < n_out. For a fixed tap the valid i form one interval [lo, hi) of [0, n_in).
#include <cstdint>

#include "fused/arch/host_device.cuh"

namespace fb::fused {

/// floor(a / b) for b > 0 and any sign of a (C++ '/' truncates toward zero).
FB_HOST_DEVICE int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/// ceil(a / b) for b > 0 and any sign of a.
FB_HOST_DEVICE int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

FB_HOST_DEVICE int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
FB_HOST_DEVICE int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

/// Output size of one spatial dimension: (n_in - 1)*s - 2p + k + op. May be <= 0 for invalid configs
/// (callers validate).
FB_HOST_DEVICE int64_t convt_output_size(int64_t n_in, int64_t k, int64_t s, int64_t p, int64_t op) {
  return (n_in - 1) * s - 2 * p + k + op;
}

/// Half-open interval [lo, hi) of input indices; empty when hi <= lo (normalised to hi == lo).
struct index_interval {
  int64_t lo;
  int64_t hi;
  /// True when no index lies in the interval.
  FB_HOST_DEVICE bool empty() const { return hi <= lo; }
  /// Number of indices in the interval.
  FB_HOST_DEVICE int64_t size() const { return hi > lo ? hi - lo : 0; }
  /// True when i lies in [lo, hi).
  FB_HOST_DEVICE bool contains(int64_t i) const { return i >= lo && i < hi; }
};

/// Valid input interval of tap t: { i in [0, n_in) : 0 <= i*s - p + t < n_out }.
/// Lower bound from i*s >= p - t, upper from i*s <= n_out - 1 + p - t (exact integer floor/ceil,
/// so large padding (p > k), cropping at both borders, and empty intervals are all handled).
FB_HOST_DEVICE index_interval convt_tap_interval(int64_t n_in, int64_t n_out, int64_t s, int64_t p,
                                                 int64_t t) {
  const int64_t lo = max_i64(0, ceil_div(p - t, s));
  const int64_t hi = min_i64(n_in, floor_div(n_out - 1 + p - t, s) + 1);
  return index_interval{lo, hi > lo ? hi : lo};
}

/// The "band" of one dimension: the lines (rows or columns) that fall outside the interval of at
/// least one non-empty tap. Every non-empty tap interval I(t) satisfies
/// [0, n) \ I(t) subset of band, since lo(t) <= low_end and hi(t) >= high_begin.
/// Band lines are [0, low_end) followed by [high_begin, n); when those would overlap the whole
/// dimension is the band (low_end = high_begin = n), so band index == line index.
struct band_1d {
  int64_t n;           ///< input size of this dimension
  int64_t low_end;     ///< lines [0, low_end) are band lines
  int64_t high_begin;  ///< lines [high_begin, n) are band lines; low_end <= high_begin

  /// Number of band lines.
  FB_HOST_DEVICE int64_t count() const { return low_end + (n - high_begin); }
  /// Line index of band index b in [0, count()).
  FB_HOST_DEVICE int64_t line(int64_t b) const { return b < low_end ? b : high_begin + (b - low_end); }
};

/// Band of one dimension for a transposed convolution with k taps (see band_1d).
/// O(k); taps whose interval is empty contribute nothing (their rectangle sums are zero).
FB_HOST_DEVICE band_1d convt_band(int64_t n_in, int64_t n_out, int64_t k, int64_t s, int64_t p) {
  int64_t low_end = 0;
  int64_t high_begin = n_in;
  for (int64_t t = 0; t < k; ++t) {
    const index_interval iv = convt_tap_interval(n_in, n_out, s, p, t);
    if (iv.empty()) continue;
    low_end = max_i64(low_end, iv.lo);
    high_begin = min_i64(high_begin, iv.hi);
  }
  if (low_end >= high_begin) {  // bands meet: every line is a band line
    low_end = n_in;
    high_begin = n_in;
  }
  return band_1d{n_in, low_end, high_begin};
}

}  // namespace fb::fused
