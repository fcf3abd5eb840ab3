// Times convt3d_scale_bn_gap's run_cuda (KernelBench #77, training mode) alone at its default
// problem, L2 flushed by a read before each call (probes/cold_l2.cuh), and writes the output and
// the fp64 |Z|^2 partials (the variance's sums, workspace) to a file: two builds (two versions of
// the kernels) run one after another on the GPU host are compared side by side, in time and bitwise,
// without a libtorch build. The gate remains the proof of correctness.
//
//   k77_time [--reps N] [--out FILE] [--compare FILE]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "fused/convt3d_scale_bn_gap/convt3d_scale_bn_gap.h"
#include "fused/convt3d_scale_bn_gap/plan.h"
#include "fused/runtime/cuda_check.h"
#include "probes/batch_norm_buffers.cuh"
#include "probes/cold_l2.cuh"
#include "probes/probe_main.h"

namespace {

int probe(int argc, char** argv) {
  namespace sg = fb::fused::convt3d_scale_bn_gap;
  const sg::problem p{16, 64, 128, 16, 32, 32, 5, 2.0, 1e-5, 0.1, true};
  const fb::probes::timing_options opt = fb::probes::parse_timing_options(argc, argv, 21);
  const int64_t k3 = p.kernel_size * p.kernel_size * p.kernel_size;
  const int64_t n_x = p.batch * p.in_channels * p.depth * p.height * p.width;
  const int64_t n_w = p.in_channels * p.out_channels * k3;
  const int64_t n_out = p.batch * p.out_channels;
  fb::probes::batch_norm_buffers buf(n_x, n_w, p.out_channels, p.out_channels * k3, n_out, sg::workspace_bytes(p));
  cudaStream_t s;
  FB_CUDA_CHECK(cudaStreamCreate(&s));
  const auto call = [&] {
    sg::run_cuda(p, buf.x, buf.weight, buf.conv_bias, buf.gamma, buf.beta, buf.running_mean, buf.running_var,
                 buf.num_batches_tracked, buf.out, buf.workspace, s);
  };
  fb::probes::l2_flush flush(512u << 20);
  cudaDeviceProp prop;
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  buf.reset(s);
  const std::vector<float> ms = fb::probes::time_cold_ms(s, opt.reps, flush, true, call);
  std::printf("K77TIME %s: median %.2f us, min %.2f, max %.2f (%d reps, read-flushed L2)\n", prop.name,
              ms[ms.size() / 2] * 1000.0f, ms.front() * 1000.0f, ms.back() * 1000.0f, opt.reps);
  buf.reset(s);
  call();
  // The outputs, then the m2 sums (B*C_out fp64, as two floats each): m2 carries the variance's
  // bits, which the outputs round away.
  const sg::detail::plan pl = sg::detail::make_plan(p);
  std::vector<float> out(n_out + 2 * n_out);
  FB_CUDA_CHECK(cudaMemcpy(out.data(), buf.out, n_out * 4, cudaMemcpyDeviceToHost));
  const sg::detail::params bound =
      sg::detail::bind(pl, buf.x, buf.weight, buf.conv_bias, buf.gamma, buf.beta, buf.running_mean,
                       buf.running_var, buf.num_batches_tracked, buf.out, buf.workspace);
  FB_CUDA_CHECK(cudaMemcpy(out.data() + n_out, bound.m2, n_out * 8, cudaMemcpyDeviceToHost));
  fb::probes::save_and_compare("K77TIME", out, opt.out_path, opt.compare_path, static_cast<std::size_t>(n_out));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return fb::probes::run_probe("k77_time", [&] { return probe(argc, argv); });
}
