// Does a warp's fp64 MMA stream hold back other warps on its scheduler? #34's kernel takes the
// DMMA pipe's time plus the rest of its tiles' time, never their overlap
// (reports/nvidia-h200/probe-2026-11-29-loops-and-rest/): this asks the hardware directly.
//
// One block of 8 warps per SM: warps 0-3 ("MMA warps", one per scheduler: warp w runs on
// scheduler w % 4) run a stream of mma.sync.m16n8k16.f64 on register operands, 4 independent
// accumulators (dmma_rate's case that keeps the pipe at its rate); warps 4-7 ("work warps", one per
// scheduler) run a fixed amount of one kind of ordinary work, timed by clock64:
//   imad-chain  dependent integer multiply-adds (the ALU/FMA pipes' latency)
//   imad-ilp    8 independent integer multiply-add chains (issue throughput)
//   ffma-chain  dependent fp32 FMAs
//   lds-chain   dependent shared-memory loads (a pointer chase: shared memory's latency)
//   dadd-chain  dependent fp64 adds (the fp64 pipe, which the DMMAs share on sm_90)
//   dadd-ilp    8 independent fp64 add chains (the fp64 pipe's throughput beside the MMAs)
//   cvt-ilp     8 independent chains of cvt.f64.f32 then cvt.rn.f32.f64 (two steps each: the
//               conversions #34's loop and rest run, F2F on the XU pipe)
//   ex2-ilp     8 independent chains of ex2.approx.f32 (MUFU, the GELU's)
//   norm-fp64   #34's output per value, ln_gelu_scale (layer_norm.cuh: fp64 normalisation, GELU),
//               8 values in flight
//   norm-fp32   the same arithmetic in fp32 (wrong on purpose: the control without fp64)
//   cvtup-ilp   8 independent chains of cvt.f64.f32 alone (F2F.F64.F32; the chain goes on through
//               the result's high word, an integer move)
//   cvtdn-ilp   8 independent chains of cvt.rn.f32.f64 alone (F2F.F32.F64; on through integer moves)
//   stats-fp64  #34's row statistics per value (row_moments' term: d = y - c, s1 += d,
//               s2 += d d in fp64), 4 interleaved partial sums as in the kernel
// Each kind runs with the MMA warps idle and with them streaming (they run at least as long as the
// work warps); the work warps' cycles per step, median over the SMs, both ways, and their ratio.
// Then the other direction: the MMA warps' cycles per round of 4 MMAs alone, and with the work
// warps repeating each kind beside them until they are done.
//
//   dmma_overlap [--steps N]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fused/arch/mma_f64.cuh"
#include "fused/convt3d_ln_gelu_scale/layer_norm.cuh"
#include "fused/runtime/cuda_check.h"
#include "probes/probe_main.h"

enum work_kind {
  imad_chain, imad_ilp, ffma_chain, lds_chain, dadd_chain, dadd_ilp, cvt_ilp, ex2_ilp, norm_fp64, norm_fp32,
  stats_fp64, cvt_up_ilp, cvt_down_ilp, n_kinds
};
static const char* const kind_names[n_kinds] = {"imad-chain", "imad-ilp",  "ffma-chain", "lds-chain",
                                                "dadd-chain", "dadd-ilp",  "cvt-ilp",    "ex2-ilp",
                                                "norm-fp64",  "norm-fp32", "stats-fp64", "cvtup-ilp",
                                                "cvtdn-ilp"};

/// fp32 -> fp64 -> fp32 through the conversion instructions themselves (asm volatile: the compiler
/// would fold the round trip).
__device__ __forceinline__ float cvt_round_trip(float f) {
  double d;
  asm volatile("cvt.f64.f32 %0, %1;" : "=d"(d) : "f"(f));
  d = d * 1.0000001;  // keeps the value moving (fp64 multiply: one per two conversions)
  float r;
  asm volatile("cvt.rn.f32.f64 %0, %1;" : "=f"(r) : "d"(d));
  return r;
}

constexpr int kLdsRing = 1024;  // ints in the shared-memory pointer ring

/// A round: one MMA on each of the 4 accumulators (the project's one fp64 MMA, fused/arch/mma_f64.cuh).
__device__ __forceinline__ void mma_round(double (&acc)[4][1][4], const double (&a)[1][8], const double (&b)[1][4]) {
  const fb::fused::arch::mma::device_lane w{static_cast<int>(threadIdx.x % 32)};
#pragma unroll
  for (int c = 0; c < 4; ++c) w.mma(acc[c], a, b);
}

/// The block's shared-memory ring for lds-chain: one cycle through all kLdsRing entries.
__device__ __forceinline__ void fill_ring(int* ring) {
  for (int i = threadIdx.x; i < kLdsRing; i += blockDim.x) ring[i] = (i * 97 + 31) % kLdsRing;
}

/// The work warps' steps of kind `kind`; returns a value that depends on every step.
__device__ __forceinline__ long long work(int kind, int steps, const int* ring, int seed) {
  long long r = 0;
  if (kind == imad_chain) {
    unsigned v = seed;
    for (int i = 0; i < steps; ++i) v = v * 1664525u + 1013904223u;
    r = v;
  } else if (kind == imad_ilp) {
    unsigned v[8];
    for (int k = 0; k < 8; ++k) v[k] = seed + k;
    for (int i = 0; i < steps; i += 8)
#pragma unroll
      for (int k = 0; k < 8; ++k) v[k] = v[k] * 1664525u + 1013904223u;
    for (int k = 0; k < 8; ++k) r += v[k];
  } else if (kind == ffma_chain) {
    float f = 1.0f + 1e-7f * seed;
    for (int i = 0; i < steps; ++i) f = fmaf(f, 0.9999999f, 1e-7f);
    r = __float_as_int(f);
  } else if (kind == lds_chain) {
    int p = seed % kLdsRing;
    for (int i = 0; i < steps; ++i) p = ring[p];
    r = p;
  } else if (kind == dadd_chain) {
    double d = 1.0 + 1e-9 * seed;
    for (int i = 0; i < steps; ++i) d = __dadd_rn(d, 1e-12);
    r = __double_as_longlong(d);
  } else if (kind == dadd_ilp) {
    double d[8];
    for (int k = 0; k < 8; ++k) d[k] = 1.0 + 1e-9 * (seed + k);
    for (int i = 0; i < steps; i += 8)
#pragma unroll
      for (int k = 0; k < 8; ++k) d[k] = __dadd_rn(d[k], 1e-12);
    for (int k = 0; k < 8; ++k) r += __double_as_longlong(d[k]);
  } else if (kind == cvt_ilp) {
    float f[8];
    for (int k = 0; k < 8; ++k) f[k] = 1.0f + 1e-6f * (seed + k);
    for (int i = 0; i < steps; i += 16)  // two conversions a chain and round: 16 steps
#pragma unroll
      for (int k = 0; k < 8; ++k) f[k] = cvt_round_trip(f[k]);
    for (int k = 0; k < 8; ++k) r += __float_as_int(f[k]);
  } else if (kind == ex2_ilp) {
    float f[8];
    for (int k = 0; k < 8; ++k) f[k] = 1e-3f * (seed + k);
    for (int i = 0; i < steps; i += 8)
#pragma unroll
      for (int k = 0; k < 8; ++k) f[k] = fb::fused::convt3d_ln_gelu_scale::detail::exp2_f32(f[k]) - 1.0f;
    for (int k = 0; k < 8; ++k) r += __float_as_int(f[k]);
  } else if (kind == norm_fp64 || kind == norm_fp32) {
    namespace ln = fb::fused::convt3d_ln_gelu_scale::detail;
    const double mean = 0.01 * (seed % 7), rstd = 1.5, gamma = 0.9, beta = 0.1;
    float y[8];
    for (int k = 0; k < 8; ++k) y[k] = 0.25f * k - 1.0f + 1e-6f * seed;
    if (kind == norm_fp64) {
      for (int i = 0; i < steps; i += 8)
#pragma unroll
        for (int k = 0; k < 8; ++k) y[k] = ln::ln_gelu_scale(y[k], mean, rstd, gamma, beta, 0.5f) - 0.5f;
    } else {
      const float m = static_cast<float>(mean), rs = static_cast<float>(rstd), g = 0.9f, b = 0.1f;
      for (int i = 0; i < steps; i += 8)
#pragma unroll
        for (int k = 0; k < 8; ++k) y[k] = ln::gelu_erf(fmaf((y[k] - m) * rs, g, b)) * 0.5f - 0.5f;
    }
    for (int k = 0; k < 8; ++k) r += __float_as_int(y[k]);
  } else if (kind == cvt_up_ilp) {
    float f[8];
    for (int k = 0; k < 8; ++k) f[k] = 1.0f + 1e-6f * (seed + k);
    for (int i = 0; i < steps; i += 8)
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        double d;
        asm volatile("cvt.f64.f32 %0, %1;" : "=d"(d) : "f"(f[k]));
        f[k] = __int_as_float(__double2hiint(d) ^ 0x1);
      }
    for (int k = 0; k < 8; ++k) r += __float_as_int(f[k]);
  } else if (kind == cvt_down_ilp) {
    double d[8];
    for (int k = 0; k < 8; ++k) d[k] = 1.0 + 1e-9 * (seed + k);
    for (int i = 0; i < steps; i += 8)
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        float f;
        asm volatile("cvt.rn.f32.f64 %0, %1;" : "=f"(f) : "d"(d[k]));
        d[k] = __hiloint2double(0x3ff00000 | (__float_as_int(f) & 0xfffff), __float_as_int(f));
      }
    for (int k = 0; k < 8; ++k) r += __double_as_longlong(d[k]);
  } else {  // stats_fp64
    namespace ln = fb::fused::convt3d_ln_gelu_scale::detail;
    ln::shifted_sums p[4] = {};
    const double c = 1.0 + 1e-3 * (seed % 5);
    float v = 1.0f + 1e-7f * seed;
    for (int i = 0; i < steps; i += 4)
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const double d = ln::sub64(static_cast<double>(v + 1e-3f * k), c);
        p[k] = ln::shifted_sums{ln::add64(p[k].s1, d), fma(d, d, p[k].s2)};
      }
    const ln::shifted_sums t = ln::add_sums(ln::add_sums(p[0], p[1]), ln::add_sums(p[2], p[3]));
    r = __double_as_longlong(t.s1) ^ __double_as_longlong(t.s2);
  }
  return r;
}

__global__ void __launch_bounds__(256, 1)
    overlap_kernel(int kind, int steps, int mma_rounds, long long* work_cycles, double* sink) {
  __shared__ int ring[kLdsRing];
  fill_ring(ring);
  __syncthreads();
  const int warp = threadIdx.x / 32;
  if (warp < 4) {
    if (mma_rounds == 0) return;
    double acc[4][1][4] = {}, a[1][8], b[1][4];
    for (int v = 0; v < 8; ++v) a[0][v] = 1.0 + 1e-3 * (threadIdx.x + v);
    for (int v = 0; v < 4; ++v) b[0][v] = 1.0 - 1e-3 * (threadIdx.x + v);
    for (int i = 0; i < mma_rounds; ++i) mma_round(acc, a, b);
    double s = 0.0;
    for (int c = 0; c < 4; ++c)
      for (int v = 0; v < 4; ++v) s += acc[c][0][v];
    if (s == 12345.678) sink[threadIdx.x] = s;
    return;
  }
  // Let the MMA warps start first.
  const long long t_wait = clock64();
  while (clock64() - t_wait < 2000) {
  }
  const long long t0 = clock64();
  const long long r = work(kind, steps, ring, threadIdx.x);
  const long long t1 = clock64();
  if (r == 0x7fffffff12345678ll) sink[threadIdx.x] = static_cast<double>(r);
  if (threadIdx.x % 32 == 0) work_cycles[blockIdx.x * 4 + (warp - 4)] = t1 - t0;
}

/// The other direction: the MMA warps run `mma_rounds` rounds, timed; the work warps (when `work`)
/// repeat their kind in slices of 64 steps until the MMA warps of their block are done.
__global__ void __launch_bounds__(256, 1)
    mma_beside_kernel(int kind, int work_on, int mma_rounds, long long* mma_cycles, double* sink) {
  __shared__ int ring[kLdsRing];
  __shared__ volatile int mma_done;
  fill_ring(ring);
  if (threadIdx.x == 0) mma_done = 0;
  __syncthreads();
  const int warp = threadIdx.x / 32;
  if (warp < 4) {
    double acc[4][1][4] = {}, a[1][8], b[1][4];
    for (int v = 0; v < 8; ++v) a[0][v] = 1.0 + 1e-3 * (threadIdx.x + v);
    for (int v = 0; v < 4; ++v) b[0][v] = 1.0 - 1e-3 * (threadIdx.x + v);
    const long long t0 = clock64();
    for (int i = 0; i < mma_rounds; ++i) mma_round(acc, a, b);
    double s = 0.0;
    for (int c = 0; c < 4; ++c)
      for (int v = 0; v < 4; ++v) s += acc[c][0][v];
    const long long t1 = clock64();
    if (s == 12345.678) sink[threadIdx.x] = s;
    if (threadIdx.x % 32 == 0) {
      mma_cycles[blockIdx.x * 4 + warp] = t1 - t0;
      atomicAdd(const_cast<int*>(&mma_done), 1);
    }
    return;
  }
  if (!work_on) return;
  long long r = 0;
  int seed = threadIdx.x;
  while (mma_done < 4) r += work(kind, 64, ring, seed++);
  if (r == 0x7fffffff12345678ll) sink[threadIdx.x] = static_cast<double>(r);
}

/// Runs `launch(scale)` once as a warm-up (scale 10: a tenth of the work) and once timed (scale 1),
/// then returns the median over the 4 x sms per-warp cycle counts in `cycles`, divided by `per`.
template <class Launch>
static double median_cycles(const Launch& launch, const long long* cycles, int sms, int per) {
  launch(10);
  launch(1);
  FB_CUDA_CHECK(cudaGetLastError());
  FB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<long long> v(4 * static_cast<std::size_t>(sms));
  FB_CUDA_CHECK(cudaMemcpy(v.data(), cycles, sizeof(long long) * v.size(), cudaMemcpyDeviceToHost));
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[v.size() / 2]) / per;
}

static int probe(int argc, char** argv) {
  int steps = 200000;
  for (int i = 1; i + 1 < argc; i += 2)
    if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
  cudaDeviceProp prop{};
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  long long* cycles;
  double* sink;
  FB_CUDA_CHECK(cudaMalloc(&cycles, sizeof(long long) * 4 * sms));
  FB_CUDA_CHECK(cudaMalloc(&sink, sizeof(double) * 256));
  std::printf("DMMAOVERLAP %s, %d SMs: one block of 8 warps per SM; 4 MMA warps (m16n8k16 f64, 4 chains) and 4 work warps, one of each per scheduler\n",
              prop.name, sms);
  for (int kind = 0; kind < n_kinds; ++kind) {
    double per_step[2] = {0.0, 0.0};
    for (int with_mma = 0; with_mma < 2; ++with_mma) {
      // The MMA stream outlasts the work: a round of 4 MMAs is >= 256 cycles at the pipe's rate,
      // so 2 x steps rounds cover >= 512 cycles a step, several times what any kind takes alone
      // (the slowest kind beside the MMAs, dependent fp64 adds, took ~137).
      const int rounds = with_mma ? 2 * steps : 0;
      per_step[with_mma] = median_cycles(
          [&](int scale) { overlap_kernel<<<sms, 256>>>(kind, steps / scale, rounds / scale, cycles, sink); }, cycles, sms,
          steps);
    }
    std::printf("DMMAOVERLAP %-10s  alone %7.2f cycles/step  beside the MMA stream %7.2f cycles/step  (x%.2f)\n",
                kind_names[kind], per_step[0], per_step[1], per_step[1] / per_step[0]);
  }
  const int rounds = std::max(1, steps / 16);
  for (int kind = 0; kind < n_kinds; ++kind) {
    double per_round[2] = {0.0, 0.0};
    for (int work_on = 0; work_on < 2; ++work_on) {
      per_round[work_on] = median_cycles(
          [&](int scale) { mma_beside_kernel<<<sms, 256>>>(kind, work_on, rounds / scale, cycles, sink); }, cycles, sms,
          rounds);
    }
    std::printf("DMMAOVERLAP MMA warps (4 m16n8k16 a round) alone %7.1f cycles/round  beside %-10s %7.1f cycles/round  (x%.2f)\n",
                per_round[0], kind_names[kind], per_round[1], per_round[1] / per_round[0]);
  }
  return 0;
}

int main(int argc, char** argv) {
  return fb::probes::run_probe("dmma_overlap", [&] { return probe(argc, argv); });
}
