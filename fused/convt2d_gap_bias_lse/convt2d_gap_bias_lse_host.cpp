// Host executor of convt2d_gap_bias_lse: the same passes as the CUDA path (plane-chunk sums and
// weight-tap sums -> per-sample channel means -> stable logsumexp), run serially.
#include "fused/convt2d_gap_bias_lse/convt2d_gap_bias_lse.h"
#include "fused/convt2d_gap_bias_lse/plan.h"
#include "fused/math/convt_index.cuh"
#include "fused/math/logsumexp.cuh"
#include "fused/runtime/plan_util.h"

namespace fb::fused::convt2d_gap_bias_lse {

std::size_t workspace_bytes(const problem& prob) {
  return fb::fused::detail::workspace_bytes_for(detail::make_plan(prob).n_doubles);
}

void run_host(const problem& prob, const float* x, const float* weight, const float* conv_bias, const float* bias,
              float* out, void* workspace) {
  using fb::fused::detail::require_ptr;
  const detail::plan pl = detail::make_plan(prob);
  constexpr const char* m = "convt2d_gap_bias_lse::run_host";
  require_ptr(x, m, "x");
  require_ptr(weight, m, "weight");
  require_ptr(conv_bias, m, "conv_bias");
  require_ptr(bias, m, "bias");
  require_ptr(out, m, "out");
  require_ptr(workspace, m, "workspace");
  double* ws = fb::fused::detail::aligned_workspace(workspace);
  double* part = ws + pl.off_part;
  double* wsum = ws + pl.off_wsum;
  double* s = ws + pl.off_s;
  double* z = ws + pl.off_z;

  // Pass 1: plane-chunk sums and Wsum[ci, co] (recomputed every call: parameters change).
  for (int64_t pair = 0; pair < pl.c_in * pl.c_out; ++pair)
    wsum[pair] = detail::weight_tap_sum(weight + pair * pl.n_taps, pl.n_taps);
  for (int64_t plane = 0; plane < pl.n_planes; ++plane) {
    const float* xp = x + plane * pl.plane_size;
    for (int64_t q = 0; q < pl.chunks_per_plane; ++q) {
      const detail::chunk_range r = detail::chunk_of(q, pl.plane_size);
      double acc = 0.0;
      for (int64_t e = r.begin; e < r.end; ++e) acc += static_cast<double>(xp[e]);
      part[plane * pl.chunks_per_plane + q] = acc;
    }
  }

  // Pass 2: S, z[b, co] = conv_bias + (1/H'W') sum_ci S Wsum + bias, out[b] = 10 * logsumexp_co z.
  for (int64_t b = 0; b < pl.batch; ++b) {
    double* sb = s + b * pl.c_in;
    for (int64_t ci = 0; ci < pl.c_in; ++ci) {
      double acc = 0.0;
      const int64_t plane = b * pl.c_in + ci;
      for (int64_t q = 0; q < pl.chunks_per_plane; ++q) acc += part[plane * pl.chunks_per_plane + q];
      sb[ci] = acc;
    }
    double* zb = z + b * pl.c_out;
    for (int64_t co = 0; co < pl.c_out; ++co)
      zb[co] = detail::channel_logit(sb, wsum, pl.c_in, pl.c_out, co, pl.inv_area, conv_bias[co], bias[co]);
    out[b] = static_cast<float>(detail::k_output_scale * math::logsumexp(zb, pl.c_out));
  }
}

}  // namespace fb::fused::convt2d_gap_bias_lse
