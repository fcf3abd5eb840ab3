#pragma once
/// BatchNorm statistics written once for the fused models that normalise over the batch (#15
/// convt3d_bn_sub, #77 convt3d_scale_bn_gap), their kernels and their host executors.
///
/// Both models know, per (sample b, channel c), the spatial mean ybar[b, c] of the normalised tensor
/// and its centred sum of squares m2[b, c] = sum over the S spatial positions of (y - ybar[b, c])^2,
/// each computed without E[y^2] - E[y]^2 cancellation. The channel's batch statistics follow exactly:
///   mean_c       = (1/B) sum_b ybar[b, c]
///   var_biased_c = (1/(B*S)) * (sum_b m2[b, c] + S * sum_b (ybar[b, c] - mean_c)^2)
/// (the within-sample and between-sample parts of the variance, both sums of non-negative terms).
#include <cmath>
#include <cstdint>

#include "fused/arch/host_device.cuh"

namespace fb::fused::math::batch_norm {

/// Batch statistics of one channel.
struct channel_moments {
  double mean = 0;        ///< mean over (B, spatial)
  double var_biased = 0;  ///< biased variance over (B, spatial): the one that normalises
};

/// Combines per-sample moments of one channel, in a fixed order (deterministic). ybar[b * stride] and
/// m2[b * stride] for b in [0, batch); spatial_count = S > 0.
FB_HOST_DEVICE channel_moments combine_sample_moments(const double* ybar, const double* m2, int64_t batch,
                                                      int64_t stride, double spatial_count) {
  double mean = 0;
  for (int64_t b = 0; b < batch; ++b) mean += ybar[b * stride];
  mean /= static_cast<double>(batch);
  double within = 0, between = 0;
  for (int64_t b = 0; b < batch; ++b) {
    within += m2[b * stride];
    const double d = ybar[b * stride] - mean;
    between += d * d;
  }
  return {mean, (within + spatial_count * between) / (static_cast<double>(batch) * spatial_count)};
}

/// y_hat = scale * y + shift normalises y as BatchNorm does: scale = gamma / sqrt(var + eps) (eps
/// added once, inside the root), shift = beta - scale * mean.
struct affine {
  double scale = 1;
  double shift = 0;
};

/// The normalising affine map from a mean and a variance (batch statistics in training mode, the
/// running buffers in eval mode).
FB_HOST_DEVICE affine normalisation(double mean, double var, double gamma, double beta, double eps) {
  const double scale = gamma / sqrt(var + eps);
  return {scale, beta - scale * mean};
}

/// Training-mode buffer update of one channel, as nn.BatchNorm does it:
///   running_mean = (1 - momentum) * running_mean + momentum * mean
///   running_var  = (1 - momentum) * running_var  + momentum * var_biased * N / (N - 1)
/// with N = B * S values per channel (N > 1: PyTorch refuses training with one value per channel).
FB_HOST_DEVICE void update_running(float* running_mean, float* running_var, int64_t c, const channel_moments& m,
                                   double values_per_channel, double momentum) {
  const double unbiased = m.var_biased * values_per_channel / (values_per_channel - 1.0);
  running_mean[c] = static_cast<float>((1.0 - momentum) * static_cast<double>(running_mean[c]) + momentum * m.mean);
  running_var[c] = static_cast<float>((1.0 - momentum) * static_cast<double>(running_var[c]) + momentum * unbiased);
}

}  // namespace fb::fused::math::batch_norm
