// Times convt3d_scale_bn_gap's run_cuda (KernelBench #77, training mode) alone at its default
// problem, L2 flushed by a read before each call (probes/cold_l2.cuh), and writes the output and
// the fp64 |Z|^2 partials (the variance's sums, workspace) to a file: two builds (two versions of
// the kernels) run one after another on the GPU host are compared side by side, in time and bitwise,
// without a libtorch build. The gate remains the proof of correctness.
//
//   k77_time [--reps N] [--out FILE] [--compare FILE]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "fused/convt3d_scale_bn_gap/convt3d_scale_bn_gap.h"
#include "fused/convt3d_scale_bn_gap/plan.h"
#include "fused/runtime/cuda_check.h"
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
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u01(0.0f, 1.0f), u(-1.0f, 1.0f);
  std::vector<float> x(n_x), w(n_w), bias(p.out_channels), gamma(p.out_channels), beta(p.out_channels);
  for (float& v : x) v = u01(rng);  // KernelBench's torch.rand
  const float wb = 1.0f / std::sqrt(static_cast<float>(p.out_channels * k3));
  for (float& v : w) v = wb * u(rng);
  for (float& v : bias) v = wb * u(rng);
  for (float& v : gamma) v = 1.0f + 0.5f * u(rng);
  for (float& v : beta) v = u(rng);
  const std::vector<float> zeros(p.out_channels, 0.0f), ones(p.out_channels, 1.0f);
  float *dx, *dw, *dbias, *dg, *db, *drm, *drv, *dout;
  int64_t* dnbt;
  unsigned char* dws;
  const std::size_t ws = sg::workspace_bytes(p);
  FB_CUDA_CHECK(cudaMalloc(&dx, n_x * 4));
  FB_CUDA_CHECK(cudaMalloc(&dw, n_w * 4));
  FB_CUDA_CHECK(cudaMalloc(&dbias, p.out_channels * 4));
  FB_CUDA_CHECK(cudaMalloc(&dg, p.out_channels * 4));
  FB_CUDA_CHECK(cudaMalloc(&db, p.out_channels * 4));
  FB_CUDA_CHECK(cudaMalloc(&drm, p.out_channels * 4));
  FB_CUDA_CHECK(cudaMalloc(&drv, p.out_channels * 4));
  FB_CUDA_CHECK(cudaMalloc(&dnbt, sizeof(int64_t)));
  FB_CUDA_CHECK(cudaMalloc(&dout, n_out * 4));
  FB_CUDA_CHECK(cudaMalloc(&dws, ws));
  FB_CUDA_CHECK(cudaMemcpy(dx, x.data(), n_x * 4, cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaMemcpy(dw, w.data(), n_w * 4, cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaMemcpy(dbias, bias.data(), p.out_channels * 4, cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaMemcpy(dg, gamma.data(), p.out_channels * 4, cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaMemcpy(db, beta.data(), p.out_channels * 4, cudaMemcpyHostToDevice));
  cudaStream_t s;
  FB_CUDA_CHECK(cudaStreamCreate(&s));
  // The running buffers are reset before every call (training updates them in place), so that every
  // call computes the same thing; the resets are outside the timed span.
  auto reset = [&] {
    FB_CUDA_CHECK(cudaMemcpyAsync(drm, zeros.data(), p.out_channels * 4, cudaMemcpyHostToDevice, s));
    FB_CUDA_CHECK(cudaMemcpyAsync(drv, ones.data(), p.out_channels * 4, cudaMemcpyHostToDevice, s));
    FB_CUDA_CHECK(cudaMemsetAsync(dnbt, 0, sizeof(int64_t), s));
  };
  fb::probes::l2_flush flush(512u << 20);
  cudaDeviceProp prop;
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  reset();
  const std::vector<float> ms = fb::probes::time_cold_ms(s, opt.reps, flush, true, [&] {
    sg::run_cuda(p, dx, dw, dbias, dg, db, drm, drv, dnbt, dout, dws, s);
  });
  std::printf("K77TIME %s: median %.2f us, min %.2f, max %.2f (%d reps, read-flushed L2)\n", prop.name,
              ms[ms.size() / 2] * 1000.0f, ms.front() * 1000.0f, ms.back() * 1000.0f, opt.reps);
  reset();
  sg::run_cuda(p, dx, dw, dbias, dg, db, drm, drv, dnbt, dout, dws, s);
  // The outputs, then the m2 sums (B*C_out fp64, as two floats each): m2 carries the variance's
  // bits, which the outputs round away.
  const sg::detail::plan pl = sg::detail::make_plan(p);
  std::vector<float> out(n_out + 2 * n_out);
  FB_CUDA_CHECK(cudaMemcpy(out.data(), dout, n_out * 4, cudaMemcpyDeviceToHost));
  const sg::detail::params bound = sg::detail::bind(pl, dx, dw, dbias, dg, db, drm, drv, dnbt, dout, dws);
  FB_CUDA_CHECK(cudaMemcpy(out.data() + n_out, bound.m2, n_out * 8, cudaMemcpyDeviceToHost));
  fb::probes::save_and_compare("K77TIME", out, opt.out_path, opt.compare_path);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return fb::probes::run_probe("k77_time", [&] { return probe(argc, argv); });
}
