#pragma once
/// convt3d_scale_bn_gap's finish program: per channel, batch statistics, out, running buffers.

#include "fused/convt3d_scale_bn_gap/params.cuh"

namespace fb::fused::convt3d_scale_bn_gap::detail {

FB_HOST_DEVICE int64_t finish_blocks(const params& p) { return (p.c_out + k_threads - 1) / k_threads; }

/// out[:, c] = A_c ybar + (beta_c - A_c mean_c); training also updates the running buffers (and
/// block 0's thread 0 the batch counter); eval normalises with the running buffers.
FB_HOST_DEVICE void finish_channel(const params& p, int64_t block, int t) {
  const int64_t c = block * k_threads + t;
  if (p.training && block == 0 && t == 0) *p.num_batches_tracked += 1;
  if (c >= p.c_out) return;
  const double gamma = static_cast<double>(p.gamma[c]);
  const double beta = static_cast<double>(p.beta[c]);
  math::batch_norm::affine a;
  if (p.training) {
    const math::batch_norm::channel_moments mom =
        math::batch_norm::combine_sample_moments(p.ybar + c, p.m2 + c, p.B, p.c_out, static_cast<double>(p.n_out));
    a = math::batch_norm::normalisation(mom.mean, mom.var_biased, gamma, beta, p.eps);
    math::batch_norm::update_running(p.running_mean, p.running_var, c, mom,
                                     static_cast<double>(p.B) * static_cast<double>(p.n_out), p.momentum);
  } else {
    a = math::batch_norm::normalisation(static_cast<double>(p.running_mean[c]), static_cast<double>(p.running_var[c]),
                                        gamma, beta, p.eps);
  }
  for (int64_t b = 0; b < p.B; ++b)
    p.out[b * p.c_out + c] = static_cast<float>(math::dft::dfma(a.scale, p.ybar[b * p.c_out + c], a.shift));
}

template <class Ex>
FB_HOST_DEVICE void finish_program(Ex& ex, const params& p, int64_t block) {
  static_assert(exec::is_block_executor_v<Ex>, "finish_program needs a block executor");
  ex.threads([&](int t) { finish_channel(p, block, t); });
}

}  // namespace fb::fused::convt3d_scale_bn_gap::detail
