#pragma once
/// convt3d_scale_bn_gap's reduce program: m2 and ybar per (b, c).

#include "fused/convt3d_scale_bn_gap/params.cuh"

namespace fb::fused::convt3d_scale_bn_gap::detail {

FB_HOST_DEVICE int64_t reduce_ctiles(const params& p) { return (p.c_out + k_reduce_channels - 1) / k_reduce_channels; }
FB_HOST_DEVICE int64_t reduce_blocks(const params& p) { return p.B * reduce_ctiles(p); }
constexpr std::size_t k_reduce_smem = k_reduce_slices * k_reduce_channels * sizeof(double);
static_assert(k_reduce_slices * k_reduce_channels == k_threads, "reduce: one thread per (slice, channel)");

/// Thread (slice s, channel c) of a block (b, 8 channels): the sum of groups s, s + 32, s + 64, ...
/// in 4 interleaved accumulators (group s + 32 j into j % 4), each in increasing order, then the 4
/// in order. The loads go out 16 at a time before any is added: the kernel is latency-bound, and a
/// tile of 8 channels gives it B * C_out / 8 blocks (256 at the default, about two per SM; 32-channel
/// tiles gave 64 blocks and 23 us).
FB_HOST_DEVICE void reduce_slices(const params& p, unsigned char* smem, int64_t b, int64_t ct, int t) {
  const int s = t / k_reduce_channels;
  const int c = t % k_reduce_channels;
  const int64_t cg = ct * k_reduce_channels + c;
  constexpr int k_sub = 4;
  double acc[k_sub] = {0.0, 0.0, 0.0, 0.0};
  if (cg < p.c_out) {
    const double* col = p.partial + b * p.c_out + cg;  // + g * B * C_out
    const int64_t stride = p.B * p.c_out;
    constexpr int k_rounds = 4;
    constexpr int64_t k_batch = static_cast<int64_t>(k_reduce_slices) * k_sub * k_rounds;  // groups per batch
    for (int64_t g0 = 0; g0 < p.n_groups; g0 += k_batch) {
      double v[k_rounds][k_sub];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int r = 0; r < k_rounds; ++r)
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
        for (int j = 0; j < k_sub; ++j) {
          const int64_t g = g0 + k_reduce_slices * (k_sub * r + j) + s;
          v[r][j] = g < p.n_groups ? load_ro(col + g * stride) : 0.0;
        }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int r = 0; r < k_rounds; ++r)
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
        for (int j = 0; j < k_sub; ++j)
          if (g0 + k_reduce_slices * (k_sub * r + j) + s < p.n_groups) acc[j] += v[r][j];
    }
  }
  at<double>(smem, 0)[s * k_reduce_channels + c] = ((acc[0] + acc[1]) + acc[2]) + acc[3];
}

/// m2[b, c] = scale^2 / N' * (slices in order) (training); ybar[b, c] = scale * (bias_c + (1/N')
/// sum_ci S[b, ci] Wsum[ci, c]).
FB_HOST_DEVICE void reduce_finish(const params& p, unsigned char* smem, int64_t b, int64_t ct, int t) {
  if (t >= k_reduce_channels) return;
  const int64_t c = ct * k_reduce_channels + t;
  if (c >= p.c_out) return;
  const double n = static_cast<double>(p.n_out);
  if (p.training) {
    const double* red = at<double>(smem, 0);
    double tot = 0.0;
    for (int s = 0; s < k_reduce_slices; ++s) tot += red[s * k_reduce_channels + t];
    p.m2[b * p.c_out + c] = p.scale * p.scale * (tot / n);
  }
  double acc = 0.0;
  for (int64_t ci = 0; ci < p.c_in; ++ci)
    acc = math::dft::dfma(load_ro(p.S + b * p.c_in + ci), load_ro(p.wsum + ci * p.c_out + c), acc);
  p.ybar[b * p.c_out + c] = p.scale * (static_cast<double>(load_ro(p.conv_bias + c)) + acc / n);
}

template <class Ex>
FB_HOST_DEVICE void reduce_program(Ex& ex, const params& p, int64_t block, unsigned char* smem) {
  static_assert(exec::is_block_executor_v<Ex>, "reduce_program needs a block executor");
  const int64_t ct = block % reduce_ctiles(p);
  const int64_t b = block / reduce_ctiles(p);
  if (p.training) {
    ex.threads([&](int t) { reduce_slices(p, smem, b, ct, t); });
    ex.sync();
  }
  ex.threads([&](int t) { reduce_finish(p, smem, b, ct, t); });
}

}  // namespace fb::fused::convt3d_scale_bn_gap::detail
