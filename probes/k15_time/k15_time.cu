// Times convt3d_bn_sub's run_cuda (KernelBench #15, training mode) alone at its default problem, L2
// flushed by a read before each call (probes/cold_l2.cuh), and writes the output to a file: two
// builds (two versions of the kernels) run one after another on the GPU host are compared side by
// side, in time and bitwise, without a libtorch build. The gate remains the proof of correctness.
//
//   k15_time [--reps N] [--out FILE] [--compare FILE]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "fused/convt3d_bn_sub/convt3d_bn_sub.h"
#include "fused/runtime/cuda_check.h"
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
  void* dws;
  const std::size_t ws = bn::workspace_bytes(p);
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
  const std::vector<float> ms = fb::probes::time_cold_ms(s, reps, flush, true, [&] {
    bn::run_cuda(p, dx, dw, dbias, dg, db, drm, drv, dnbt, dout, dws, s);
  });
  std::printf("K15TIME %s: median %.2f us, min %.2f, max %.2f (%d reps, read-flushed L2)\n", prop.name,
              ms[ms.size() / 2] * 1000.0f, ms.front() * 1000.0f, ms.back() * 1000.0f, reps);
  reset();
  bn::run_cuda(p, dx, dw, dbias, dg, db, drm, drv, dnbt, dout, dws, s);
  std::vector<float> out(n_out);
  FB_CUDA_CHECK(cudaMemcpy(out.data(), dout, n_out * 4, cudaMemcpyDeviceToHost));
  fb::probes::save_and_compare("K15TIME", out, opt.out_path, opt.compare_path);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return fb::probes::run_probe("k15_time", [&] { return probe(argc, argv); });
}
