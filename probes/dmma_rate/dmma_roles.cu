// Can one fp64-MMA warp per scheduler keep the DMMA pipe busy by itself, with epilogue-like work
// beside it? The design question of issue 36's engine: #34's kernel takes the pipe's time plus the
// rest of its tiles' time (reports/nvidia-h200/probe-2026-11-29-overlap/), because each warp's k16
// steps are latency-bound (a DMMA holds its source registers until it executes, so the next step's
// loads wait for the step's MMAs, then the MMAs wait for the loads) and the pipe is full only while
// all three blocks of an SM are in their loops.
//
// One block per SM, warp roles set by setmaxnreg (sm_90a): warps 0-3, one per scheduler, run #34's
// k16 loop (8 mma.sync.m16n8k16.f64 per step on a 2 x 4 warp tile; A from a staged box in shared
// memory through a koff table, B from a 4 MB block in L2, converted to fp64) at 232 registers;
// warps 4-15 (three per scheduler) at 80 registers run an epilogue-like stream (a thread per row of
// 64 floats in shared memory: row sums, exact GELU in fp32 by ex2, 16-byte stores of the row to a
// 256 MB buffer in global memory, as #34's finish but without fp64) until the MMA warps are done.
//   steps   "plain": step s's operands loaded, then its 8 MMAs (#34's loop today)
//           "ahead": step s + 1's A and B loaded into a second register set before step s's MMAs
//                    (no register the MMAs read is written before they have run)
//   workers "idle", "epilogue" (fp32 statistics), "epi-ff" (#34's exact float-float row math,
//           layer_norm.cuh's row_moments_ff and ln_gelu_scale_ff), and the kinds that isolate one
//           part of it (compute, shared-memory reads and writes, three ways to store)
// Prints the MMA warps' TFLOP/s (the pipe's rate, 66.7 TFLOP/s on an H200, is 100%) per case, and
// the workers' rows per microsecond.
//
//   dmma_roles [--iters N]
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fused/arch/mma_f64.cuh"
#include "fused/convt3d_ln_gelu_scale/layer_norm.cuh"
#include "fused/runtime/cuda_check.h"
#include "probes/probe_main.h"

constexpr int kXs = 212;                   // doubles per staged channel (4 mod 16, as #34's plan)
constexpr int kBoxDoubles = 32 * kXs;      // 32 channels: 54 KB
constexpr int kRowFloats = 68;             // a row buffer's stride (64 values, padded)
constexpr int kRows = 384;                 // the workers' rows: one per worker thread
constexpr int kBigB = 1 << 20;             // 4 MB of B
constexpr int64_t kOutFloats = 1ll << 26;  // 256 MB of output
constexpr int kThreads = 512;

enum steps_kind { plain, ahead, regs, a_only, b_only };
enum workers_kind {
  idle, epilogue, compute_only, lds_only, stores_only, stores_coalesced, stores_bulk, smem_rw, epilogue_bulk,
  epilogue_ff_bulk
};
static const char* const steps_names[] = {"plain", "ahead", "regs", "A-only", "B-only"};
static const char* const workers_names[] = {"idle",   "epilogue", "compute", "lds",     "stores",
                                             "coalesced", "bulk", "smem-rw", "epi-bulk", "epi-ff"};

using fb::fused::arch::mma::device_lane;

/// A warp's operands of one k16 step: A (2 m16 tiles, fp64) and B as loaded (4 n8 tiles, fp32).
struct operands {
  double a[2][1][8];
  float4 b[4];
};

__device__ __forceinline__ void load_step(operands& o, uint32_t xs_base, const int4 (*koff)[4], const float* bw,
                                          int i, int lane) {
  const int step = i & 15, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int nt = 0; nt < 4; ++nt)
    o.b[nt] = __ldg(reinterpret_cast<const float4*>(bw + (i & 7) * 1024 + nt * 128 + lane * 4));
  const int4 ko = koff[step][t];
  const int kj[4] = {ko.x, ko.y, ko.z, ko.w};
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        double v;
        asm volatile("ld.shared.f64 %0, [%1];" : "=d"(v) : "r"(xs_base + kj[j] + (16 * mt + 8 * h + g) * 8));
        o.a[mt][0][2 * j + h] = v;
      }
}


/// B of a step converted to fp64 (exact).
__device__ __forceinline__ void convert_b(double (&b)[4][1][4], const float4 (&raw)[4]) {
#pragma unroll
  for (int nt = 0; nt < 4; ++nt) {
    b[nt][0][0] = raw[nt].x;
    b[nt][0][1] = raw[nt].y;
    b[nt][0][2] = raw[nt].z;
    b[nt][0][3] = raw[nt].w;
  }
}

/// The compiler takes a register as free once the instruction reading it has issued, but a DMMA
/// reads its operands when it runs, so a load into that register then waits for the MMA: this
/// empty statement keeps a step's operands allocated until the next step's MMAs have issued.
__device__ __forceinline__ void keep_alive(const double (&a)[2][1][8], const double (&b)[4][1][4]) {
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int v = 0; v < 8; ++v) asm volatile("" ::"d"(a[mt][0][v]));
#pragma unroll
  for (int nt = 0; nt < 4; ++nt)
#pragma unroll
    for (int v = 0; v < 4; ++v) asm volatile("" ::"d"(b[nt][0][v]));
}

__device__ __forceinline__ void mmas(double (&acc)[2][4][1][4], const double (&a)[2][1][8], const double (&b)[4][1][4],
                                     const device_lane& w) {
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) w.mma(acc[mt][nt], a[mt], b[nt]);
}

__device__ __forceinline__ void mma_step(double (&acc)[2][4][1][4], const operands& o, const device_lane& w) {
  double b[4][1][4];
  convert_b(b, o.b);
  mmas(acc, o.a, b, w);
}

template <int Steps>
__device__ void mma_warp(uint32_t xs_base, const int4 (*koff)[4], const float* bw, int iters, double* sink) {
  const int lane = threadIdx.x % 32;
  const device_lane w{lane};
  double acc[2][4][1][4] = {};
  if constexpr (Steps == regs) {  // operands loaded once: the MMAs alone (dmma_rate's case)
    operands o;
    load_step(o, xs_base, koff, bw, 0, lane);
    double b[4][1][4];
    convert_b(b, o.b);
    for (int i = 0; i < iters; ++i) mmas(acc, o.a, b, w);
  } else if constexpr (Steps == a_only || Steps == b_only) {  // one operand path per step, the other constant
    operands o;
    load_step(o, xs_base, koff, bw, 0, lane);
    double b[4][1][4];
    convert_b(b, o.b);
    for (int i = 0; i < iters; ++i) {
      operands n;
      load_step(n, xs_base, koff, bw, i, lane);
      if constexpr (Steps == a_only) {
        mmas(acc, n.a, b, w);
      } else {
        double nb[4][1][4];
        convert_b(nb, n.b);
        mmas(acc, o.a, nb, w);
      }
    }
  } else if constexpr (Steps == plain) {
    operands o;
    for (int i = 0; i < iters; ++i) {
      load_step(o, xs_base, koff, bw, i, lane);
      mma_step(acc, o, w);
    }
  } else {
    // Two operand sets (A and converted B), used in turn: set 1's loads are issued before set 0's
    // MMAs, its B converted after them, and set 0 kept allocated until then (keep_alive).
    operands o0, o1;  // o.b: the raw B of the set's step, converted into b0 / b1
    double b0[4][1][4], b1[4][1][4];
    load_step(o0, xs_base, koff, bw, 0, lane);
    convert_b(b0, o0.b);
    for (int i = 0; i < iters; i += 2) {
      load_step(o1, xs_base, koff, bw, i + 1, lane);
      mmas(acc, o0.a, b0, w);
      convert_b(b1, o1.b);
      keep_alive(o0.a, b0);
      load_step(o0, xs_base, koff, bw, i + 2, lane);
      mmas(acc, o1.a, b1, w);
      convert_b(b0, o0.b);
      keep_alive(o1.a, b1);
    }
  }
  double s = 0.0;
  for (int mt = 0; mt < 2; ++mt)
    for (int nt = 0; nt < 4; ++nt)
      for (int v = 0; v < 4; ++v) s += acc[mt][nt][0][v];
  if (s == 12345.678) sink[threadIdx.x] = s;
}

/// A row's mean and 1/sqrt(var + 1e-5) in plain fp32 (the epilogue-like workers' statistics).
__device__ __forceinline__ void fp32_moments(const float* src, float& mean, float& rstd) {
  float s1 = 0.f, s2 = 0.f;
  for (int j = 0; j < 64; ++j) {
    const float v = src[j];
    s1 += v;
    s2 = fmaf(v, v, s2);
  }
  mean = s1 * (1.0f / 64);
  rstd = rsqrtf(fmaf(-s1, mean, s2) * (1.0f / 64) + 1e-5f);
}

/// The 256-byte row at `src` (shared memory, just written by this thread) to `dst` by one bulk copy
/// (TMA), in this thread's bulk group.
__device__ __forceinline__ void bulk_store_row(float* dst, const float* src) {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  const auto from = static_cast<uint32_t>(__cvta_generic_to_shared(src));
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 256;" ::"l"(dst), "r"(from) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/// GELU of each of a row's 64 normalised values times `factor`, four at a time into dst (16-byte
/// stores: global memory for the epilogue, the row itself for the bulk-copy epilogue).
__device__ __forceinline__ void gelu_row(const float* src, float mean, float rstd, float factor, float* dst) {
  namespace ln = fb::fused::convt3d_ln_gelu_scale::detail;
#pragma unroll 2
  for (int j = 0; j < 64; j += 4) {
    float v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) v[k] = ln::gelu_erf((src[j + k] - mean) * rstd) * factor;
    *reinterpret_cast<float4*>(dst + j) = make_float4(v[0], v[1], v[2], v[3]);
  }
}

/// A worker thread's epilogue-like rows until the MMA warps are done: row r's 64 values from
/// shared memory, their sum and sum of squares (fp32), then each value's GELU of its normalised
/// value, four at a time to global memory (16-byte stores, a row 256 bytes, rows far apart).
template <int Workers>
__device__ long long worker(const float* rows, float* out, const volatile int* mma_done, int mma_warps, int row,
                            long long period) {
  namespace ln = fb::fused::convt3d_ln_gelu_scale::detail;
  const float* src = rows + row * kRowFloats;
  long long done = 0;
  int64_t at = (static_cast<int64_t>(blockIdx.x) * kRows + row) * 64;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kRows * 64;
  float keep = 0.0f;
  long long next = clock64();
  while (*mma_done < mma_warps) {
    if (period > 0) {  // paced: a row every `period` cycles (the rate the MMA warps would hand rows over)
      while (clock64() < next && *mma_done < mma_warps) __nanosleep(500);
      next += period;
    }
    if constexpr (Workers == epilogue) {
      float mean, rstd;
      fp32_moments(src, mean, rstd);
      gelu_row(src, mean, rstd, 1.0f, out + at);
    } else if constexpr (Workers == compute_only) {  // the same arithmetic on registers
      float s1 = 0.f, s2 = 0.f, v0 = keep + row;
      for (int j = 0; j < 64; ++j) {
        const float v = v0 + j;
        s1 += v;
        s2 = fmaf(v, v, s2);
      }
      const float mean = s1 * (1.0f / 64), rstd = rsqrtf(fmaf(-s1, mean, s2) * (1.0f / 64) + 1e-5f);
#pragma unroll 2
      for (int j = 0; j < 64; j += 4) {
#pragma unroll
        for (int k = 0; k < 4; ++k) keep += ln::gelu_erf((v0 + j + k - mean) * rstd);
      }
    } else if constexpr (Workers == lds_only) {  // the row's reads twice (statistics, output), summed
      const int o = static_cast<int>(done) & 63;
      float s1 = 0.f, s2 = 0.f;
      for (int j = 0; j < 64; ++j) s1 += src[(j + o) & 63];
      for (int j = 0; j < 64; ++j) s2 += src[(j + o + 1) & 63];
      keep += s1 * s2;
    } else if constexpr (Workers == epilogue_bulk) {  // the epilogue, its outputs into the row, then one bulk copy
      float* row_w = const_cast<float*>(src);
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");  // the last copy has read the row
      float mean, rstd;
      fp32_moments(src, mean, rstd);
      gelu_row(src, mean, rstd, 1e-3f, row_w);
      bulk_store_row(out + at, src);
    } else if constexpr (Workers == epilogue_ff_bulk) {  // #34's exact row math without fp64 (float-float), then TMA
      float* row_w = const_cast<float*>(src);
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
      const ln::row_norm_ff rn = ln::row_moments_ff(src, 64, ln::eps_ff{1e-5f, 0.0f});
#pragma unroll 2
      for (int j = 0; j < 64; j += 4) {  // each output over its own value: the statistics are done
        const float4 y = *reinterpret_cast<const float4*>(src + j);
        *reinterpret_cast<float4*>(row_w + j) = make_float4(
            ln::ln_gelu_scale_ff(y.x, rn, 0.9f, 0.1f, 1e-3f), ln::ln_gelu_scale_ff(y.y, rn, 0.9f, 0.1f, 1e-3f),
            ln::ln_gelu_scale_ff(y.z, rn, 0.9f, 0.1f, 1e-3f), ln::ln_gelu_scale_ff(y.w, rn, 0.9f, 0.1f, 1e-3f));
      }
      bulk_store_row(out + at, src);
    } else if constexpr (Workers == smem_rw) {  // the row read and written back (as the box's conversion and the
      const int o = static_cast<int>(done) & 63;  // accumulators' stores into the row buffer move data in shared memory)
      float* row_w = const_cast<float*>(src);
      for (int j = 0; j < 64; ++j) row_w[(j + o) & 63] = row_w[(j + o + 7) & 63] * 0.5f + 1.0f;
    } else if constexpr (Workers == stores_only) {  // the row's 16-byte stores (a warp: 32 rows an instruction)
#pragma unroll 4
      for (int j = 0; j < 64; j += 4) *reinterpret_cast<float4*>(out + at + j) = make_float4(keep, 1.f, 2.f, 3.f);
    } else if constexpr (Workers == stores_coalesced) {  // the same bytes, a warp's instruction 512 contiguous
      const int lane = threadIdx.x % 32;
      float* base = out + (at - (row % 32) * 64);  // the warp's 32 rows, 8 KB contiguous
#pragma unroll 4
      for (int j = 0; j < 16; ++j)
        *reinterpret_cast<float4*>(base + j * 128 + lane * 4) = make_float4(keep, 1.f, 2.f, 3.f);
    } else {  // stores_bulk: the row from shared memory by one bulk copy (TMA), 256 bytes
      const auto from = static_cast<uint32_t>(__cvta_generic_to_shared(src));
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 256;" ::"l"(out + at), "r"(from) : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group.read 4;" ::: "memory");
    }
    at += stride;
    if (at + 64 > kOutFloats) at %= stride;
    ++done;
  }
  if constexpr (Workers == stores_bulk || Workers == epilogue_bulk || Workers == epilogue_ff_bulk)
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  if (keep == 12345.f) out[0] = keep;
  return done;
}

template <int Steps, int Workers, int MmaWarps>
__global__ void __launch_bounds__(kThreads, 1)
    roles_kernel(const float* __restrict__ bglob, float* out, int iters, double* sink, long long* rows_done,
                 long long period) {
  extern __shared__ double xs[];
  __shared__ int4 koff[16][4];  // per step and t: the byte offsets of k columns t, t + 4, t + 8, t + 12
  __shared__ volatile int mma_done;
  float* rows = reinterpret_cast<float*>(xs + kBoxDoubles);
  for (int i = threadIdx.x; i < kBoxDoubles; i += blockDim.x) xs[i] = 1.0 + 1e-6 * i;
  for (int i = threadIdx.x; i < kRows * kRowFloats; i += blockDim.x) rows[i] = 1e-3f * (i % 97);
  for (int i = threadIdx.x; i < 64; i += blockDim.x) {
    const int st = i / 4, tt = i % 4;
    auto ch = [&](int j) { return (((st & 1) * 16 + tt + 4 * j) * kXs) * 8; };
    koff[st][tt] = make_int4(ch(0), ch(1), ch(2), ch(3));
  }
  if (threadIdx.x == 0) mma_done = 0;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the rows, for the bulk copies
  __syncthreads();
  const int warp = threadIdx.x / 32;
  // Warp roles by warpgroup (setmaxnreg applies to four warps at once): the first MmaWarps / 4
  // warpgroups run the loop (one MMA warp per scheduler per warpgroup), the rest are workers.
  if (warp < MmaWarps) {
    if constexpr (MmaWarps == 4) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    else asm volatile("setmaxnreg.inc.sync.aligned.u32 168;");
    const uint32_t xs_base = static_cast<uint32_t>(__cvta_generic_to_shared(xs));
    const float* bw = bglob + (static_cast<int64_t>(blockIdx.x) * 16 + warp) * 8192 % (kBigB - 8192);
    mma_warp<Steps>(xs_base, koff, bw, iters, sink);
    __syncwarp();
    if (threadIdx.x % 32 == 0) atomicAdd(const_cast<int*>(&mma_done), 1);
  } else {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 80;");
    if (Workers != idle) {
      const long long n = worker<Workers>(rows, out, &mma_done, MmaWarps, threadIdx.x - 32 * MmaWarps, period);
      atomicAdd(reinterpret_cast<unsigned long long*>(rows_done), static_cast<unsigned long long>(n));
    }
  }
}

template <int Steps, int Workers, int MmaWarps = 4>
static void run(int sms, int iters, const float* bglob, float* out, double* sink, long long* rows_done,
                long long period = 0) {
  const size_t smem = kBoxDoubles * sizeof(double) + kRows * kRowFloats * sizeof(float);
  auto kernel = roles_kernel<Steps, Workers, MmaWarps>;
  FB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  cudaEvent_t e0, e1;
  FB_CUDA_CHECK(cudaEventCreate(&e0));
  FB_CUDA_CHECK(cudaEventCreate(&e1));
  kernel<<<sms, kThreads, smem>>>(bglob, out, iters / 10, sink, rows_done, period);
  FB_CUDA_CHECK(cudaMemset(rows_done, 0, sizeof(long long)));
  FB_CUDA_CHECK(cudaEventRecord(e0));
  kernel<<<sms, kThreads, smem>>>(bglob, out, iters, sink, rows_done, period);
  FB_CUDA_CHECK(cudaEventRecord(e1));
  FB_CUDA_CHECK(cudaEventSynchronize(e1));
  FB_CUDA_CHECK(cudaGetLastError());
  float ms = 0.0f;
  FB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
  long long rows = 0;
  FB_CUDA_CHECK(cudaMemcpy(&rows, rows_done, sizeof(rows), cudaMemcpyDeviceToHost));
  const double tflops = 2.0 * 16 * 8 * 16 * 8.0 * iters * MmaWarps * static_cast<double>(sms) / (ms * 1e-3) / 1e12;
  std::printf("DMMAROLES %d MMA warps, steps %-5s workers %-8s%s  MMA warps %6.2f TFLOP/s  (%.3f ms)  worker rows %8.1f per us\n",
              MmaWarps, steps_names[Steps], workers_names[Workers], period > 0 ? " paced" : "", tflops, ms,
              rows / (ms * 1e3));
}

static int probe(int argc, char** argv) {
  int iters = 20000;
  for (int i = 1; i + 1 < argc; i += 2)
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
  iters = iters / 2 * 2;
  cudaDeviceProp prop{};
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  float *bglob, *out;
  double* sink;
  long long* rows_done;
  FB_CUDA_CHECK(cudaMalloc(&bglob, kBigB * sizeof(float)));
  FB_CUDA_CHECK(cudaMemset(bglob, 0, kBigB * sizeof(float)));
  FB_CUDA_CHECK(cudaMalloc(&out, kOutFloats * sizeof(float)));
  FB_CUDA_CHECK(cudaMalloc(&sink, 1024 * sizeof(double)));
  FB_CUDA_CHECK(cudaMalloc(&rows_done, sizeof(long long)));
  const int sms = prop.multiProcessorCount;
  std::printf("DMMAROLES %s, %d SMs: one block of 16 warps per SM: 4 MMA warps (232 registers) and 12 workers, or 8 MMA\n"
              "warps (168) and 8 workers (80 registers)\n", prop.name, sms);
  run<regs, idle>(sms, iters, bglob, out, sink, rows_done);
  run<plain, idle>(sms, iters, bglob, out, sink, rows_done);
  run<ahead, idle>(sms, iters, bglob, out, sink, rows_done);
  run<a_only, idle>(sms, iters, bglob, out, sink, rows_done);
  run<b_only, idle>(sms, iters, bglob, out, sink, rows_done);
  run<regs, epilogue>(sms, iters, bglob, out, sink, rows_done);
  run<plain, epilogue>(sms, iters, bglob, out, sink, rows_done);
  run<ahead, epilogue>(sms, iters, bglob, out, sink, rows_done);
  run<plain, compute_only>(sms, iters, bglob, out, sink, rows_done);
  for (auto f : {run<regs, stores_only>, run<plain, stores_only>, run<a_only, stores_only>, run<b_only, stores_only>,
                 run<plain, stores_coalesced>, run<a_only, stores_coalesced>, run<b_only, stores_coalesced>,
                 run<plain, stores_bulk>, run<a_only, stores_bulk>, run<b_only, stores_bulk>, run<a_only, lds_only>,
                 run<b_only, lds_only>, run<plain, lds_only>, run<a_only, smem_rw>, run<b_only, smem_rw>,
                 run<plain, smem_rw>, run<a_only, compute_only>, run<b_only, compute_only>})
    f(sms, iters, bglob, out, sink, rows_done, 0);
  run<plain, epilogue_bulk>(sms, iters, bglob, out, sink, rows_done);
  for (auto f : {run<regs, idle, 8>, run<plain, idle, 8>, run<a_only, idle, 8>, run<b_only, idle, 8>,
                 run<plain, epilogue, 8>, run<plain, epilogue_bulk, 8>, run<plain, compute_only, 8>,
                 run<plain, stores_bulk, 8>})
    f(sms, iters, bglob, out, sink, rows_done, 0);
  // Paced at the rate #34 needs: 128 rows per 1024 MMAs; at 60 TFLOP/s on 132 SMs that is ~14 rows a
  // microsecond per SM; paced for 21 (1.5x): a row per worker thread every 256 / 21 us (8 workers)
  // or 384 / 21 us (12 workers), at 1.98 GHz.
  const long long period8 = static_cast<long long>(256.0 / 21.0 * 1980.0);
  const long long period12 = static_cast<long long>(384.0 / 21.0 * 1980.0);
  for (auto f : {run<plain, epilogue, 8>, run<plain, epilogue_bulk, 8>, run<plain, compute_only, 8>,
                 run<plain, epilogue_ff_bulk, 8>})
    f(sms, iters, bglob, out, sink, rows_done, period8);
  run<plain, epilogue_ff_bulk, 8>(sms, iters, bglob, out, sink, rows_done, 0);  // flat out: its rate
  for (auto f : {run<plain, epilogue, 4>, run<plain, epilogue_bulk, 4>})
    f(sms, iters, bglob, out, sink, rows_done, period12);
  return 0;
}

int main(int argc, char** argv) {
  return fb::probes::run_probe("dmma_roles", [&] { return probe(argc, argv); });
}
