// Issue 36 probe: the rates of the tensor-core paths a split-precision #34 engine could run on, side
// by side in one process on one GPU: mma.sync m16n8k32 s8 (int32 accumulation), wgmma m64nNk32 s8
// (both operands from shared memory), mma.sync m16n8k16 bf16 (fp32 accumulation), mma.sync m16n8k16
// f64 (today's engine); and an exactness check of the s8 fragment layouts (mma.sync and wgmma)
// against integer products on the CPU. Last, #34's floors on each path at the default (6.87e10 MACs
// with the border zeros). Torch-free. Build: probes/split_scheme/build.sh; run build/probe/tc_rates.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fused/runtime/cuda_check.h"
#include "probes/probe_main.h"
#include "probes/tc_precision/tc_common.cuh"  // time_ms: the median of 5 event-timed runs


__device__ __forceinline__ void mma_s8(int (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_f64(double (&d)[4], const double (&a)[8], const double (&b)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
      "{%12,%13,%14,%15}, {%0,%1,%2,%3};"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
        "d"(b[1]), "d"(b[2]), "d"(b[3]));
}
__device__ __forceinline__ void mma_f64_k8(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}
__device__ __forceinline__ void mma_f64_k4(double (&d)[4], const double (&a)[2], const double (&b)[1]) {
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(b[0]));
}

// ---- wgmma s8 (SS, K-major both, no swizzle: the layout wgmma_bench.cu proved for bf16 k16, 32 bytes
// of K per row per k-step, which is k32 for s8) ----
#define WG_D0_63                                                                    \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "          \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WG_D64_127                                                                              \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "             \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "             \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define WG_R4(i) "+r"(d[i]), "+r"(d[(i) + 1]), "+r"(d[(i) + 2]), "+r"(d[(i) + 3])
#define WG_R16(i) WG_R4(i), WG_R4((i) + 4), WG_R4((i) + 8), WG_R4((i) + 12)
#define WG_R64(i) WG_R16(i), WG_R16((i) + 16), WG_R16((i) + 32), WG_R16((i) + 48)

template <int N>
__device__ __forceinline__ void wg_mma_s8(int (&d)[N / 2], uint64_t da, uint64_t db, int scale_d) {
  if constexpr (N == 128)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {" WG_D0_63 "}, %64, %65, p;\n}\n"
                 : WG_R64(0)
                 : "l"(da), "l"(db), "r"(scale_d)
                 : "memory");
  else
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 {" WG_D0_63 ", " WG_D64_127
                 "}, %128, %129, p;\n}\n"
                 : WG_R64(0), WG_R64(64)
                 : "l"(da), "l"(db), "r"(scale_d)
                 : "memory");
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
__device__ __forceinline__ void proxy_fence() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
template <int n>
__device__ __forceinline__ void fence_regs(int (&d)[n]) {
#pragma unroll
  for (int i = 0; i < n; ++i) asm volatile("" : "+r"(d[i])::"memory");
}
__host__ __device__ constexpr int core_off(int r, int c) { return (r >> 3) * 256 + c * 128 + (r & 7) * 16; }
constexpr uint32_t kLBO = 128, kSBO = 256;
__device__ __forceinline__ uint64_t make_desc(const void* smem) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  return static_cast<uint64_t>((a >> 4) & 0x3FFFu) | static_cast<uint64_t>((kLBO >> 4) & 0x3FFFu) << 16 |
         static_cast<uint64_t>((kSBO >> 4) & 0x3FFFu) << 32;
}

constexpr int kRateSteps = 4;
constexpr int kRateSmem = 120 * 1024;

template <int N, int kWG>
__global__ void __launch_bounds__(128 * kWG, 1) wg_rate_kernel(int iters, int* sink) {
  extern __shared__ __align__(128) uint8_t smem[];
  constexpr int kA = 64 * 32, kB = N * 32;
  for (int i = threadIdx.x; i < kRateSteps * (kA + kB); i += blockDim.x) smem[i] = static_cast<uint8_t>((i * 7) & 3);
  proxy_fence();
  __syncthreads();
  const uint64_t da = make_desc(smem), db = make_desc(smem + kRateSteps * kA);
  int d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0;
  for (int it = 0; it < iters; ++it) {
    fence_regs(d);
    wg_fence();
#pragma unroll
    for (int s = 0; s < kRateSteps; ++s)
      wg_mma_s8<N>(d, da + static_cast<uint64_t>(s * kA >> 4), db + static_cast<uint64_t>(s * kB >> 4), 1);
    wg_commit();
    wg_wait<1>();
    fence_regs(d);
  }
  wg_wait<0>();
  fence_regs(d);
  int s = 0;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) s += d[i];
  if (s == 123456) sink[threadIdx.x] = s;
}

// One m64nN x k32 product through wgmma for the exactness check: A [64][32], B [N][32] s8, out [64][N].
template <int N>
__global__ void __launch_bounds__(128) wg_check_kernel(const int8_t* A, const int8_t* B, int* out) {
  __shared__ __align__(128) uint8_t sa[64 * 32];
  __shared__ __align__(128) uint8_t sb[N * 32];
  for (int i = threadIdx.x; i < 64 * 32; i += 128) {
    const int r = i / 32, k = i % 32;
    sa[core_off(r, k / 16) + k % 16] = static_cast<uint8_t>(A[i]);
  }
  for (int i = threadIdx.x; i < N * 32; i += 128) {
    const int r = i / 32, k = i % 32;
    sb[core_off(r, k / 16) + k % 16] = static_cast<uint8_t>(B[i]);
  }
  proxy_fence();
  __syncthreads();
  int d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0;
  fence_regs(d);
  wg_fence();
  wg_mma_s8<N>(d, make_desc(sa), make_desc(sb), 0);
  wg_commit();
  wg_wait<0>();
  fence_regs(d);
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int j = 0; j < N / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int e = 0; e < 2; ++e) out[(16 * w + g + 8 * h) * N + 8 * j + 2 * t + e] = d[4 * j + 2 * h + e];
}

// One m16n8k32 mma.sync: A [16][32], B [8][32] (n-major, k contiguous), out [16][8].
__global__ void mma_check_kernel(const int8_t* A, const int8_t* B, int* out) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  auto pack = [](const int8_t* p) {
    return static_cast<uint32_t>(static_cast<uint8_t>(p[0])) | static_cast<uint32_t>(static_cast<uint8_t>(p[1])) << 8 |
           static_cast<uint32_t>(static_cast<uint8_t>(p[2])) << 16 |
           static_cast<uint32_t>(static_cast<uint8_t>(p[3])) << 24;
  };
  uint32_t a[4] = {pack(A + g * 32 + 4 * t), pack(A + (g + 8) * 32 + 4 * t), pack(A + g * 32 + 16 + 4 * t),
                   pack(A + (g + 8) * 32 + 16 + 4 * t)};
  uint32_t b[2] = {pack(B + g * 32 + 4 * t), pack(B + g * 32 + 16 + 4 * t)};
  int d[4] = {0, 0, 0, 0};
  mma_s8(d, a, b);
  out[g * 8 + 2 * t] = d[0];
  out[g * 8 + 2 * t + 1] = d[1];
  out[(g + 8) * 8 + 2 * t] = d[2];
  out[(g + 8) * 8 + 2 * t + 1] = d[3];
}

// 32 warps per SM, kAcc independent accumulators per warp, register operands.
template <int kAcc>
__global__ void __launch_bounds__(1024, 1) s8_rate_kernel(int iters, int* sink) {
  uint32_t a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = 0x01020304u * ((threadIdx.x + i) & 3);
  for (int i = 0; i < 2; ++i) b[i] = 0x01010101u * ((threadIdx.x + i) & 1);
  int d[kAcc][4] = {};
  for (int it = 0; it < iters; ++it)
#pragma unroll
    for (int j = 0; j < kAcc; ++j) mma_s8(d[j], a, b);
  int s = 0;
  for (int j = 0; j < kAcc; ++j)
    for (int i = 0; i < 4; ++i) s += d[j][i];
  if (s == 123456) sink[threadIdx.x] = s;
}
template <int kAcc>
__global__ void __launch_bounds__(1024, 1) bf16_rate_kernel(int iters, int* sink) {
  uint32_t a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = 0x3F803F80u + ((threadIdx.x + i) & 7);
  for (int i = 0; i < 2; ++i) b[i] = 0x35803580u + ((threadIdx.x + i) & 3);
  float d[kAcc][4] = {};
  for (int it = 0; it < iters; ++it)
#pragma unroll
    for (int j = 0; j < kAcc; ++j) mma_bf16(d[j], a, b);
  float s = 0;
  for (int j = 0; j < kAcc; ++j)
    for (int i = 0; i < 4; ++i) s += d[j][i];
  if (s == 123.456f) sink[threadIdx.x] = 1;
}
template <int kAcc>
__global__ void __launch_bounds__(256, 1) f64_rate_kernel(int iters, int* sink) {
  double a[8], b[4];
  for (int i = 0; i < 8; ++i) a[i] = 1.0 + 1e-3 * ((threadIdx.x + i) & 7);
  for (int i = 0; i < 4; ++i) b[i] = 1e-9 * ((threadIdx.x + i) & 3);
  double d[kAcc][4] = {};
  for (int it = 0; it < iters; ++it)
#pragma unroll
    for (int j = 0; j < kAcc; ++j) mma_f64(d[j], a, b);
  double s = 0;
  for (int j = 0; j < kAcc; ++j)
    for (int i = 0; i < 4; ++i) s += d[j][i];
  if (s == 123.456) sink[threadIdx.x] = 1;
}

// The f64 shapes with fewer operand registers (m16n8k8: A 4, B 2 doubles per lane; m16n8k4: A 2, B 1):
// a tile that keeps two accumulator sets (Winograd's two bases) needs their rate, not only k16's.
template <int kK, int kAcc>
__global__ void __launch_bounds__(256, 1) f64_small_k_rate_kernel(int iters, int* sink) {
  double a[kK / 2], b[kK / 4];
  for (int i = 0; i < kK / 2; ++i) a[i] = 1.0 + 1e-3 * ((threadIdx.x + i) & 7);
  for (int i = 0; i < kK / 4; ++i) b[i] = 1e-9 * ((threadIdx.x + i) & 3);
  double d[kAcc][4] = {};
  for (int it = 0; it < iters; ++it)
#pragma unroll
    for (int j = 0; j < kAcc; ++j) {
      if constexpr (kK == 8)
        mma_f64_k8(d[j], reinterpret_cast<const double(&)[4]>(a), reinterpret_cast<const double(&)[2]>(b));
      else
        mma_f64_k4(d[j], reinterpret_cast<const double(&)[2]>(a), reinterpret_cast<const double(&)[1]>(b));
    }
  double s = 0;
  for (int j = 0; j < kAcc; ++j)
    for (int i = 0; i < 4; ++i) s += d[j][i];
  if (s == 123.456) sink[threadIdx.x] = 1;
}

// One rows x n (k = 32) s8 product through `launch(A, B, out)` against the integer product on the
// CPU: A [rows][32], B [n][32] (k contiguous) drawn from an LCG with `seed`, out [rows][n].
template <class Launch>
bool integer_product_check(const char* label, int rows, int n, uint32_t seed, Launch launch) {
  std::vector<int8_t> A(rows * 32), B(n * 32);
  auto rnd = [&] {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<int8_t>(static_cast<int>(seed >> 24) - 128);
  };
  for (auto& v : A) v = rnd();
  for (auto& v : B) v = rnd();
  int8_t *dA, *dB;
  int* dO;
  FB_CUDA_CHECK(cudaMalloc(&dA, A.size()));
  FB_CUDA_CHECK(cudaMalloc(&dB, B.size()));
  FB_CUDA_CHECK(cudaMalloc(&dO, static_cast<std::size_t>(rows) * n * sizeof(int)));
  FB_CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size(), cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size(), cudaMemcpyHostToDevice));
  launch(dA, dB, dO);
  FB_CUDA_CHECK(cudaGetLastError());
  std::vector<int> out(static_cast<std::size_t>(rows) * n);
  FB_CUDA_CHECK(cudaMemcpy(out.data(), dO, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < n; ++c) {
      int ref = 0;
      for (int k = 0; k < 32; ++k) ref += A[r * 32 + k] * B[c * 32 + k];
      bad += out[r * n + c] != ref;
    }
  std::printf("LAYOUT %-32s %s (%d of %d outputs differ from the integer product)\n", label, bad ? "FAIL" : "PASS",
              bad, rows * n);
  FB_CUDA_CHECK(cudaFree(dA));
  FB_CUDA_CHECK(cudaFree(dB));
  FB_CUDA_CHECK(cudaFree(dO));
  return bad == 0;
}

template <int N>
bool wg_check() {
  char label[48];
  std::snprintf(label, sizeof label, "wgmma m64n%dk32 s8 (SS)", N);
  return integer_product_check(label, 64, N, 12345,
                               [](const int8_t* a, const int8_t* b, int* o) { wg_check_kernel<N><<<1, 128>>>(a, b, o); });
}

bool mma_check() {
  return integer_product_check("mma.sync m16n8k32 s8", 16, 8, 777,
                               [](const int8_t* a, const int8_t* b, int* o) { mma_check_kernel<<<1, 32>>>(a, b, o); });
}

int run() {
  cudaDeviceProp prop{};
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::printf("tc_rates: %s, %d SMs, sm_%d%d\n", prop.name, sms, prop.major, prop.minor);
  bool ok = mma_check();
  ok &= wg_check<128>();
  ok &= wg_check<256>();
  int* sink;
  FB_CUDA_CHECK(cudaMalloc(&sink, 1024 * sizeof(int)));
  const double ops_per_sm = 0x1p38;  // per launch
  auto wg_rate = [&](auto kernel, int n, int wgs) {
    const double ops_instr = 2.0 * 64 * n * 32;
    const int iters = static_cast<int>(ops_per_sm / (wgs * kRateSteps * ops_instr));
    FB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kRateSmem));
    const double ms = time_ms([&] { kernel<<<sms, 128 * wgs, kRateSmem>>>(iters, sink); });
    return static_cast<double>(sms) * wgs * iters * kRateSteps * ops_instr / ms / 1e9;
  };
  auto sync_rate = [&](auto kernel, int threads, double ops_instr, int acc, double scale) {
    const int warps = threads / 32;
    const int iters = static_cast<int>(ops_per_sm * scale / (warps * acc * ops_instr));
    const double ms = time_ms([&] { kernel<<<sms, threads>>>(iters, sink); });
    return static_cast<double>(sms) * warps * iters * acc * ops_instr / ms / 1e9;
  };
  const double s8_4 = sync_rate(s8_rate_kernel<4>, 1024, 2.0 * 16 * 8 * 32, 4, 1.0);
  const double s8_8 = sync_rate(s8_rate_kernel<8>, 1024, 2.0 * 16 * 8 * 32, 8, 1.0);
  const double wg128 = wg_rate(wg_rate_kernel<128, 4>, 128, 4);
  const double wg256 = wg_rate(wg_rate_kernel<256, 2>, 256, 2);
  const double bf_4 = sync_rate(bf16_rate_kernel<4>, 1024, 2.0 * 16 * 8 * 16, 4, 0.5);
  const double f64_2 = sync_rate(f64_rate_kernel<2>, 256, 2.0 * 16 * 8 * 16, 2, 1.0 / 16);
  std::printf("RATE mma.sync m16n8k32 s8, 32 warps/SM, 4 acc   %8.1f TOP/s\n", s8_4);
  std::printf("RATE mma.sync m16n8k32 s8, 32 warps/SM, 8 acc   %8.1f TOP/s\n", s8_8);
  std::printf("RATE wgmma m64n128k32 s8 SS, 4 WG/SM            %8.1f TOP/s\n", wg128);
  std::printf("RATE wgmma m64n256k32 s8 SS, 2 WG/SM            %8.1f TOP/s\n", wg256);
  std::printf("RATE mma.sync m16n8k16 bf16, 32 warps/SM, 4 acc %8.1f TFLOP/s\n", bf_4);
  std::printf("RATE mma.sync m16n8k16 f64, 8 warps/SM, 2 acc   %8.1f TFLOP/s\n", f64_2);
  const double f64_4 = sync_rate(f64_rate_kernel<4>, 128, 2.0 * 16 * 8 * 16, 4, 1.0 / 16);
  const double f64_k8 = sync_rate(f64_small_k_rate_kernel<8, 4>, 256, 2.0 * 16 * 8 * 8, 4, 1.0 / 16);
  const double f64_k4 = sync_rate(f64_small_k_rate_kernel<4, 4>, 256, 2.0 * 16 * 8 * 4, 4, 1.0 / 16);
  const double f64_k4_4w = sync_rate(f64_small_k_rate_kernel<4, 8>, 128, 2.0 * 16 * 8 * 4, 8, 1.0 / 16);
  std::printf("RATE mma.sync m16n8k16 f64, 4 warps/SM, 4 acc   %8.1f TFLOP/s\n", f64_4);
  std::printf("RATE mma.sync m16n8k8 f64, 8 warps/SM, 4 acc    %8.1f TFLOP/s\n", f64_k8);
  std::printf("RATE mma.sync m16n8k4 f64, 8 warps/SM, 4 acc    %8.1f TFLOP/s\n", f64_k4);
  std::printf("RATE mma.sync m16n8k4 f64, 4 warps/SM, 8 acc    %8.1f TFLOP/s\n", f64_k4_4w);
  // #34 at the default: 6.87e10 MACs with the border zeros (1.374e11 ops per product).
  const double ops = 2 * 6.87e10;
  const double best_s8 = std::max(std::max(s8_4, s8_8), std::max(wg128, wg256));
  const double best_sync = std::max(s8_4, s8_8);
  for (int p : {6, 10, 15})
    std::printf("FLOOR #34 Ozaki int8, %2d slice products: %6.3f ms (mma.sync) %6.3f ms (best s8)\n", p,
                p * ops / best_sync / 1e9, p * ops / best_s8 / 1e9);
  std::printf("FLOOR #34 fp64 DMMA direct: %6.3f ms; Winograd F(2,2)^3 (27/64 of the MACs): %6.3f ms\n",
              ops / f64_2 / 1e9, ops * 27.0 / 64.0 / f64_2 / 1e9);
  std::printf("tc_rates: %s\n", ok ? "layouts exact" : "LAYOUT CHECK FAILED");
  return ok ? 0 : 1;
}

int main() { return fb::probes::run_probe("tc_rates", run); }
