#pragma once
/// Numerically stable logsumexp pieces (max-subtracted form), written once for kernels and host
/// executors. All in fp64: the inputs are fp64 channel means, and exp(z - max) <= 1 never overflows.
#include <math.h>

#include <cstdint>

#include "fused/arch/host_device.cuh"

namespace fb::fused::math {

/// One term of the stable sum: exp(z - z_max), in (0, 1] for z <= z_max.
FB_HOST_DEVICE double lse_term(double z, double z_max) { return ::exp(z - z_max); }

/// logsumexp from the maximum and the sum of lse_term over all inputs: z_max + log(sum).
FB_HOST_DEVICE double lse_finish(double z_max, double sum_terms) { return z_max + ::log(sum_terms); }

/// Serial stable logsumexp of z[0..n) (n >= 1): max first, then the sum of exp(z - max) in index
/// order. Used by the host executor and tests; the kernel uses lse_term/lse_finish with block
/// reductions.
FB_HOST_DEVICE double logsumexp(const double* z, int64_t n) {
  double z_max = z[0];
  for (int64_t i = 1; i < n; ++i) z_max = z[i] > z_max ? z[i] : z_max;
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += lse_term(z[i], z_max);
  return lse_finish(z_max, sum);
}

}  // namespace fb::fused::math
