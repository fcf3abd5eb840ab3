// Times convt3d_ln_gelu_scale's run_cuda (KernelBench #34) alone at one problem, cold L2, CUDA events,
// and writes every 251st output to a file: two builds of this probe (two versions of the kernel)
// run one after another on the GPU host are compared side by side, in time and in values, without a
// libtorch build or a host-executor run. The gate (scripts/gpu-gate) remains the proof of
// correctness; this is for choosing between variants within one device call.
//
//   k34_time [--batch B] [--reps N] [--sample FILE] [--compare FILE] [--bias 1] [--bench-like 1]
//
// --bias 1 passes a conv bias (uniform in [-1, 1]) as the model's default config does; without it the
// call has none. --bench-like 1 draws x uniform in [0, 1) (KernelBench's torch.rand, what the bench
// times) instead of [-1, 1], and flushes L2 by reading a buffer (clean lines, as the bench does)
// instead of a memset (dirty lines).
//
// --compare reads another build's --sample file and prints how many sampled outputs differ and by
// how much (for variants whose arithmetic order differs, where bitwise equality is not expected).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale.h"
#include "fused/runtime/cuda_check.h"
#include "probes/cold_l2.cuh"
#include "probes/probe_main.h"

static int probe(int argc, char** argv) {
  namespace lgs = fb::fused::convt3d_ln_gelu_scale;
  lgs::problem p{32, 32, 64, 16, 32, 32, 4, 2, 1, 1e-5, 1.0};
  int reps = 15;
  const char* sample_path = nullptr;
  const char* compare_path = nullptr;
  bool with_bias = false;
  bool bench_like = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--batch")) p.batch = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--sample")) sample_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--compare")) compare_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--bias")) with_bias = std::atoi(argv[i + 1]) != 0;
    else if (!std::strcmp(argv[i], "--bench-like")) bench_like = std::atoi(argv[i + 1]) != 0;
  }
  const int64_t k3 = p.kernel_size * p.kernel_size * p.kernel_size;
  const int64_t n_x = p.batch * p.in_channels * p.depth * p.height * p.width;
  const int64_t n_w = p.in_channels * p.out_channels * k3;
  const int64_t d_o = (p.depth - 1) * p.stride - 2 * p.padding + p.kernel_size;
  const int64_t h_o = (p.height - 1) * p.stride - 2 * p.padding + p.kernel_size;
  const int64_t n_out = p.batch * p.out_channels * d_o * h_o * p.out_channels;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(n_x), w(n_w), gamma(p.out_channels), beta(p.out_channels), bias(p.out_channels);
  std::uniform_real_distribution<float> u01(0.0f, 1.0f);
  for (float& v : x) v = bench_like ? u01(rng) : u(rng);
  const float wb = 1.0f / std::sqrt(static_cast<float>(p.out_channels * k3));
  for (float& v : w) v = wb * u(rng);
  for (float& v : gamma) v = 2.0f * u(rng);
  for (float& v : beta) v = 2.0f * u(rng);
  for (float& v : bias) v = u(rng);
  float *dx, *dw, *dg, *db, *dbias, *dout;
  void* dws;
  const std::size_t ws = lgs::workspace_bytes(p);
  FB_CUDA_CHECK(cudaMalloc(&dx, n_x * 4));
  FB_CUDA_CHECK(cudaMalloc(&dw, n_w * 4));
  FB_CUDA_CHECK(cudaMalloc(&dg, p.out_channels * 4));
  FB_CUDA_CHECK(cudaMalloc(&db, p.out_channels * 4));
  FB_CUDA_CHECK(cudaMalloc(&dbias, p.out_channels * 4));
  FB_CUDA_CHECK(cudaMalloc(&dout, n_out * 4));
  FB_CUDA_CHECK(cudaMalloc(&dws, ws));
  fb::probes::l2_flush flush(256u << 20);
  FB_CUDA_CHECK(cudaMemcpy(dx, x.data(), n_x * 4, cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaMemcpy(dw, w.data(), n_w * 4, cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaMemcpy(dg, gamma.data(), p.out_channels * 4, cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaMemcpy(db, beta.data(), p.out_channels * 4, cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaMemcpy(dbias, bias.data(), p.out_channels * 4, cudaMemcpyHostToDevice));
  cudaStream_t s;
  FB_CUDA_CHECK(cudaStreamCreate(&s));
  auto call = [&] { lgs::run_cuda(p, dx, dw, with_bias ? dbias : nullptr, dg, db, dout, dws, s); };
  const std::vector<float> ms = fb::probes::time_cold_ms(s, reps, flush, bench_like, call);
  cudaDeviceProp prop;
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("K34TIME %s B=%lld: median %.3f ms, min %.3f ms, max %.3f ms (%d reps, cold L2)\n", prop.name,
              (long long)p.batch, ms[ms.size() / 2], ms.front(), ms.back(), reps);
  if (sample_path) {
    std::vector<float> out(n_out);
    FB_CUDA_CHECK(cudaMemcpy(out.data(), dout, n_out * 4, cudaMemcpyDeviceToHost));
    std::vector<float> sample;
    int64_t nan = 0;
    for (int64_t i = 0; i < n_out; ++i) nan += !std::isfinite(out[i]);
    for (int64_t i = 0; i < n_out; i += 251) sample.push_back(out[i]);
    FILE* f = std::fopen(sample_path, "wb");
    std::fwrite(sample.data(), 4, sample.size(), f);
    std::fclose(f);
    std::printf("K34TIME sample of %zu outputs to %s; %lld non-finite outputs\n", sample.size(), sample_path,
                (long long)nan);
    if (compare_path) {
      std::vector<float> other(sample.size());
      FILE* g = std::fopen(compare_path, "rb");
      const std::size_t got = g ? std::fread(other.data(), 4, other.size(), g) : 0;
      if (g) std::fclose(g);
      std::size_t differ = 0;
      double max_abs = 0, max_rel = 0;
      for (std::size_t i = 0; i < got; ++i) {
        if (std::memcmp(&sample[i], &other[i], 4) != 0) ++differ;
        const double d = std::fabs(static_cast<double>(sample[i]) - other[i]);
        max_abs = std::max(max_abs, d);
        max_rel = std::max(max_rel, d / std::max(1e-30, std::fabs(static_cast<double>(other[i]))));
      }
      std::printf("K34TIME against %s: %zu of %zu sampled outputs differ, max |diff| %.3g, max rel %.3g\n",
                  compare_path, differ, got, max_abs, max_rel);
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  return fb::probes::run_probe("k34_time", [&] { return probe(argc, argv); });
}
