// Times convt3d_bn_sub's run_cuda (KernelBench #15, training mode) alone at its default problem, L2
// flushed by a read before each call (probes/cold_l2.cuh), and writes the output to a file: two
// builds (two versions of the kernels) run one after another on the GPU host are compared side by
// side, in time and bitwise, without a libtorch build. The gate remains the proof of correctness.
//
//   k15_time [--reps N] [--out FILE] [--compare FILE]
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "fused/convt3d_bn_sub/convt3d_bn_sub.h"
#include "fused/runtime/cuda_check.h"
#include "probes/batch_norm_buffers.cuh"
#include "probes/cold_l2.cuh"
#include "probes/probe_main.h"

namespace {

int probe(int argc, char** argv) {
  namespace bn = fb::fused::convt3d_bn_sub;
  const bn::problem p{16, 16, 32, 16, 32, 32, 3, 2, 1, true, 1e-5, 0.1};
  const fb::probes::timing_options opt = fb::probes::parse_timing_options(argc, argv, 21);
  const int reps = opt.reps;
  const int64_t k3 = p.kernel_size * p.kernel_size * p.kernel_size;
  const int64_t n_x = p.batch * p.in_channels * p.depth * p.height * p.width;
  const int64_t n_w = p.in_channels * p.out_channels * k3;
  auto out_size = [&](int64_t n) { return (n - 1) * p.stride - 2 * p.padding + p.kernel_size; };
  const int64_t n_out = p.batch * p.out_channels * out_size(p.depth) * out_size(p.height) * out_size(p.width);
  fb::probes::batch_norm_buffers buf(n_x, n_w, p.out_channels, p.out_channels * k3, n_out, bn::workspace_bytes(p));
  cudaStream_t s;
  FB_CUDA_CHECK(cudaStreamCreate(&s));
  const auto call = [&] {
    bn::run_cuda(p, buf.x, buf.weight, buf.conv_bias, buf.gamma, buf.beta, buf.running_mean, buf.running_var,
                 buf.num_batches_tracked, buf.out, buf.workspace, s);
  };
  fb::probes::l2_flush flush(512u << 20);
  cudaDeviceProp prop;
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  buf.reset(s);
  const std::vector<float> ms = fb::probes::time_cold_ms(s, reps, flush, true, call);
  std::printf("K15TIME %s: median %.2f us, min %.2f, max %.2f (%d reps, read-flushed L2)\n", prop.name,
              ms[ms.size() / 2] * 1000.0f, ms.front() * 1000.0f, ms.back() * 1000.0f, reps);
  buf.reset(s);
  call();
  std::vector<float> out(n_out);
  FB_CUDA_CHECK(cudaMemcpy(out.data(), buf.out, n_out * 4, cudaMemcpyDeviceToHost));
  fb::probes::save_and_compare("K15TIME", out, opt.out_path, opt.compare_path);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return fb::probes::run_probe("k15_time", [&] { return probe(argc, argv); });
}
