// wgmma measurements for issue 11 (#34's convolution, 6.45e10 MACs): the follow-up that
// tc_precision_bench.cu left open. On an H100 (sm_90a) it measures
//   1. RATE: the dense throughput of wgmma.mma_async m64nNk8 f32.tf32.tf32 and m64nNk16 f32.bf16.bf16
//      (N = 128 with 4 warpgroups per SM, N = 256 with 2; one block per SM, held there by 120 KB of
//      requested smem; all SMs; both A and B from shared memory through descriptors ("SS"), constant
//      operands, 4 k-steps per commit group, wait_group 1), next to mma.sync m16n8k8 TF32 measured
//      the same way (32 warps per SM, 4 independent accumulators, register operands); 2*M*N*K FLOPs
//      per instruction, cudaEvents, median of 5 after a warm-up;
//   2. LAYOUT: a strict self-check of the descriptors and accumulator fragments (below) on small
//      integers (exact in tf32 and bf16): 3 pieces x 6 products, K = 64, two 64-row tiles, against
//      an integer product on the CPU, for every (type, N) used; any differing element exits 1;
//   3. ROUND: whether the tensor core's fp32 accumulation rounds to nearest or truncates: sums whose
//      exact value needs rounding (1 + 0.75 ulp, 1 - 0.25 ulp, many sub-ulp terms, a chained
//      accumulator, a cancelling large pair), compared with RN and RZ of the exact sum;
//   4. ACC: the error of split schemes through wgmma (N = 128) at K = 128, 256, 512 on the fuzz
//      distributions of tc_precision_bench (same definitions, w uniform +-1/sqrt(K)): 1xTF32,
//      3xTF32 (x = b0 + b1, w = c0 + c1: b1 c0 + b0 c1 + b0 c0), TF32x6 (3 pieces each, the 6
//      products with i + j <= 2), 1xBF16, BF16x6 (3 bf16 pieces, the same 6 products), products
//      issued smallest first into the one fp32 accumulator at every k-step; the sequential fp32
//      FMA sum in k order (SIMT) alongside. Error against a long-double sum / sum |x w|: rms, max,
//      and the share of outputs with a larger error than the fp32 FMA sum;
//   5. SUMMARY: raw rate, effective rate (raw / products) and the time of 6.45e10 MACs per scheme.
// Pieces are split on the host: b0 = r(x), b1 = r(x - b0), b2 = r(x - b0 - b1) (differences exact in
// fp32), r = cvt.rna tf32 (ties away, as the mma.sync probe) or bf16 round-to-nearest-even.
//
// Shared-memory operands (PTX ISA "matrix descriptor", CUTLASS GmmaDescriptor): no swizzle, both
// operands K-major (the only form tf32 allows; bf16 with imm-trans 0). A core matrix is 8 rows x 16
// bytes (4 tf32 / 8 bf16 of K), its rows 16 bytes apart (128 B contiguous). One k-step (32 bytes of
// K per row, R * 32 bytes) of an R-row operand is stored as row group r / 8 at (r / 8) * 256, core
// column c (0, 1) at + c * 128: descriptor LBO (bits 16-29, the K-direction core-matrix stride) =
// 128, SBO (bits 32-45, the M/N-direction 8-row-group stride) = 256, start address (bits 0-13), all
// >> 4; base offset and swizzle (bits 49-51, 62-63) 0. (With this interleave the reads stay inside
// the k-step's R * 32 bytes under either meaning of LBO / SBO, so a swapped reading cannot fault.)
// Accumulator fragment of m64nN (PTX ISA): warp w of the warpgroup holds rows 16w..16w+15;
// d[4j + 2h + e] is (16w + g + 8h, 8j + 2t + e), g = lane / 4, t = lane % 4. None of this could be
// run when it was written (no GPU): the LAYOUT check is the authority. If it fails, the program
// prints the first mismatches and whether the same data with LBO and SBO swapped passes, then exits
// 1 before any other number is printed.
//
// Build: probes/tc_precision/build_wgmma.sh (build/probe/wgmma_bench, sm_90a). Run on the GPU host:
// build/probe/wgmma_bench [--quick] (--quick: 1/8 of the rate iterations, 4 tiles instead of 16).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "probes/probe_main.h"
#include "tc_common.cuh"

// ---------------------------------------------------------------------------------------------
// wgmma wrappers (SS: A and B descriptors; scale-d from a register, scale-a/b 1, no transpose)
// ---------------------------------------------------------------------------------------------
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
#define WG_F4(i) "+f"(d[i]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3])
#define WG_F16(i) WG_F4(i), WG_F4((i) + 4), WG_F4((i) + 8), WG_F4((i) + 12)
#define WG_F64(i) WG_F16(i), WG_F16((i) + 16), WG_F16((i) + 32), WG_F16((i) + 48)

template <bool kBF16, int N>
__device__ __forceinline__ void wg_mma(float (&d)[N / 2], uint64_t da, uint64_t db, int scale_d) {
  static_assert(N == 128 || N == 256, "N = 128 or 256");
  if constexpr (!kBF16 && N == 128)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {" WG_D0_63 "}, %64, %65, p, 1, 1;\n}\n"
                 : WG_F64(0)
                 : "l"(da), "l"(db), "r"(scale_d)
                 : "memory");
  else if constexpr (!kBF16 && N == 256)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" WG_D0_63 ", " WG_D64_127
                 "}, %128, %129, p, 1, 1;\n}\n"
                 : WG_F64(0), WG_F64(64)
                 : "l"(da), "l"(db), "r"(scale_d)
                 : "memory");
  else if constexpr (kBF16 && N == 128)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" WG_D0_63 "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : WG_F64(0)
                 : "l"(da), "l"(db), "r"(scale_d)
                 : "memory");
  else
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" WG_D0_63 ", " WG_D64_127
                 "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
                 : WG_F64(0), WG_F64(64)
                 : "l"(da), "l"(db), "r"(scale_d)
                 : "memory");
}

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Generic-proxy smem stores -> visible to the async proxy that wgmma reads through.
__device__ __forceinline__ void proxy_fence() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Keeps the compiler from moving accumulator accesses across the wgmma fence / wait.
template <int n>
__device__ __forceinline__ void fence_regs(float (&d)[n]) {
#pragma unroll
  for (int i = 0; i < n; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Byte offset of (row r, 16-byte core column c) in a k-step's operand tile; LBO / SBO to match.
__host__ __device__ constexpr int core_off(int r, int c) { return (r >> 3) * 256 + c * 128 + (r & 7) * 16; }
constexpr uint32_t kLBO = 128, kSBO = 256;

// Descriptor: start address, LBO, SBO in 16-byte units; base offset 0, swizzle 0 (none).
__device__ __forceinline__ uint64_t make_desc(const void* smem, uint32_t lbo, uint32_t sbo) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  return static_cast<uint64_t>((a >> 4) & 0x3FFFu) | static_cast<uint64_t>((lbo >> 4) & 0x3FFFu) << 16 |
         static_cast<uint64_t>((sbo >> 4) & 0x3FFFu) << 32;
}

// Product lists (x piece, w piece), smallest first: 1: b0 c0; 3: b1 c0, b0 c1, b0 c0 (3xTF32, CUTLASS's
// order); 6: the pairs with i + j = 2, then i + j = 1, then b0 c0.
__host__ __device__ constexpr int prod_a(int prods, int q) {
  return prods == 1 ? 0 : prods == 3 ? (q == 0 ? 1 : 0) : (q == 0 ? 2 : q == 2 || q == 3 ? 1 : 0);
}
__host__ __device__ constexpr int prod_b(int prods, int q) {
  return prods == 1 ? 0 : prods == 3 ? (q == 1 ? 1 : 0) : (q == 1 ? 2 : q == 2 || q == 4 ? 1 : 0);
}

// ---------------------------------------------------------------------------------------------
// GEMM kernel for the self-check, ROUND and ACC: one warpgroup per 64-row tile, out = sum over the
// piece pairs (prod_a(q), prod_b(q)), q = 0..kProds-1, of A_a * B_b^T, issued in q order at every k-step.
// A: [P][rows][K], B: [P][N][K] (K contiguous), elements tf32 (fp32 bits) or bf16 bits.
// out: [rows][N] fp32. swap = 1 exchanges the LBO and SBO fields (diagnostic only).
// ---------------------------------------------------------------------------------------------

template <bool kBF16, int N, int kProds>
__global__ void __launch_bounds__(128) wg_gemm_kernel(const void* A_, const void* B_, int K, int rows, int swap,
                                                      float* out) {
  constexpr int P = kProds == 1 ? 1 : kProds == 3 ? 2 : 3;  // pieces read
  constexpr int kE = kBF16 ? 2 : 4, kKS = 32 / kE;  // bytes per element, K per instruction
  __shared__ alignas(128) uint8_t sA[3][64 * 32];
  __shared__ alignas(128) uint8_t sB[3][N * 32];
  const uint8_t* A = static_cast<const uint8_t*>(A_);
  const uint8_t* B = static_cast<const uint8_t*>(B_);
  const int tile = blockIdx.x, tid = threadIdx.x;
  const uint32_t lbo = swap ? kSBO : kLBO, sbo = swap ? kLBO : kSBO;
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kKS) {
#pragma unroll
    for (int p = 0; p < P; ++p) {
      for (int i = tid; i < 64 * 2; i += 128) {  // (row, 16-byte core column)
        const int r = i >> 1, c = i & 1;
        const size_t src = ((static_cast<size_t>(p) * rows + tile * 64 + r) * K + k0) * kE + c * 16;
        *reinterpret_cast<uint4*>(&sA[p][core_off(r, c)]) =
            *reinterpret_cast<const uint4*>(A + src);
      }
      for (int i = tid; i < N * 2; i += 128) {
        const int r = i >> 1, c = i & 1;
        const size_t src = ((static_cast<size_t>(p) * N + r) * K + k0) * kE + c * 16;
        *reinterpret_cast<uint4*>(&sB[p][core_off(r, c)]) =
            *reinterpret_cast<const uint4*>(B + src);
      }
    }
    proxy_fence();
    __syncthreads();
    fence_regs(d);
    wg_fence();
#pragma unroll
    for (int q = 0; q < kProds; ++q)
      wg_mma<kBF16, N>(d, make_desc(sA[prod_a(kProds, q)], lbo, sbo), make_desc(sB[prod_b(kProds, q)], lbo, sbo),
                       (k0 > 0 || q > 0) ? 1 : 0);
    wg_commit();
    wg_wait<0>();
    fence_regs(d);
    __syncthreads();  // all reads of this k-step done before the next one overwrites smem
  }
  const int w = tid / 32, g = (tid % 32) / 4, t = tid % 4;
#pragma unroll
  for (int j = 0; j < N / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        out[static_cast<size_t>(tile * 64 + 16 * w + g + 8 * h) * N + 8 * j + 2 * t + e] = d[4 * j + 2 * h + e];
}

// Sequential fp32 FMA in k order, one thread per output. A: [rows][K], B: [N][K].
__global__ void simt_kernel(const float* A, const float* B, int K, int N, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, r = i / N, n = i % N;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc = fmaf(A[static_cast<size_t>(r) * K + k], B[static_cast<size_t>(n) * K + k], acc);
  out[i] = acc;
}

// ---------------------------------------------------------------------------------------------
// Throughput kernels
// ---------------------------------------------------------------------------------------------
constexpr int kRateSteps = 4;                // wgmma k-steps per commit group
constexpr int kRateSmem = 120 * 1024;        // dynamic smem requested: forces one block per SM

template <bool kBF16, int N, int kWG>
__global__ void __launch_bounds__(128 * kWG, 1) wg_rate_kernel(int iters, float* sink) {
  extern __shared__ __align__(128) uint8_t smem[];
  constexpr int kA = 64 * 32, kB = N * 32;  // bytes per k-step
  uint32_t* words = reinterpret_cast<uint32_t*>(smem);
  constexpr int n_a = kRateSteps * kA / 4, n_words = kRateSteps * (kA + kB) / 4;
  for (int i = threadIdx.x; i < n_words; i += blockDim.x) {  // A ~ 1, B ~ 2^-20: bounded sums
    if (kBF16) words[i] = i < n_a ? (0x3F80u + (i & 7)) * 0x10001u : (0x3580u + (i & 3)) * 0x10001u;
    else words[i] = __float_as_uint(i < n_a ? 1.0f + (i & 7) * 0x1p-10f : 0x1p-20f * (1.0f + (i & 3) * 0.25f));
  }
  proxy_fence();
  __syncthreads();
  const uint64_t da = make_desc(smem, kLBO, kSBO), db = make_desc(smem + kRateSteps * kA, kLBO, kSBO);
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f;
  for (int it = 0; it < iters; ++it) {
    fence_regs(d);
    wg_fence();
#pragma unroll
    for (int s = 0; s < kRateSteps; ++s)
      wg_mma<kBF16, N>(d, da + static_cast<uint64_t>(s * kA >> 4), db + static_cast<uint64_t>(s * kB >> 4), 1);
    wg_commit();
    wg_wait<1>();
    fence_regs(d);
  }
  wg_wait<0>();
  fence_regs(d);
  float s = 0;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) s += d[i];
  if (s == 123.456f) sink[threadIdx.x] = s;
}

// 32 warps per SM (one 1024-thread block), 4 independent accumulators per warp, register operands.
__global__ void __launch_bounds__(1024, 1) mma_rate_kernel(int iters, float* sink) {
  uint32_t a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = to_tf32(1.0f + 1e-3f * ((threadIdx.x + i) & 7));
  for (int i = 0; i < 2; ++i) b[i] = to_tf32(1e-6f * ((threadIdx.x + i) & 3));
  float d[4][4] = {};
  for (int it = 0; it < iters; ++it)
#pragma unroll
    for (int j = 0; j < 4; ++j) mma_tf32(d[j], a, b);
  float s = 0;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i) s += d[j][i];
  if (s == 123.456f) sink[threadIdx.x] = s;
}

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------
uint32_t f2u(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
float u2f(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
uint32_t tf32_bits(float x) { return (f2u(x) + 0x1000u) & 0xFFFFE000u; }  // cvt.rna: nearest, ties away
uint16_t bf16_bits(float x) {                                             // nearest even
  const uint32_t u = f2u(x);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
float bf16_val(uint16_t h) { return u2f(static_cast<uint32_t>(h) << 16); }
template <bool kBF16>  // exact for the values used with it (small integers, powers of two)
std::conditional_t<kBF16, uint16_t, uint32_t> bits_of(float v) {
  if constexpr (kBF16) return bf16_bits(v);
  else return f2u(v);
}

// Operand pieces in the layout wg_gemm_kernel reads: tf32 pieces as fp32 bits, bf16 as bf16 bits.
struct pieces {
  std::vector<uint32_t> tf32;  // [3][rows][K]
  std::vector<uint16_t> bf16;  // [3][rows][K]
};
pieces split3(const std::vector<float>& x) {
  pieces p;
  const size_t n = x.size();
  p.tf32.resize(3 * n);
  p.bf16.resize(3 * n);
  for (size_t i = 0; i < n; ++i) {
    float rt = x[i], rb = x[i];
    for (int j = 0; j < 3; ++j) {
      p.tf32[j * n + i] = tf32_bits(rt);
      rt -= u2f(p.tf32[j * n + i]);  // exact
      p.bf16[j * n + i] = bf16_bits(rb);
      rb -= bf16_val(p.bf16[j * n + i]);
    }
  }
  return p;
}

template <class T>
T* upload(const std::vector<T>& v) {
  T* p;
  FB_CUDA_CHECK(cudaMalloc(&p, v.size() * sizeof(T)));
  FB_CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}

// Runs wg_gemm_kernel on host data (pieces already in kernel layout) and returns [rows][N].
template <bool kBF16, int N, int kProds, class T>
std::vector<float> run_gemm(const std::vector<T>& A, const std::vector<T>& B, int K, int rows, int swap = 0) {
  T* dA = upload(A);
  T* dB = upload(B);
  float* dO;
  FB_CUDA_CHECK(cudaMalloc(&dO, static_cast<size_t>(rows) * N * sizeof(float)));
  wg_gemm_kernel<kBF16, N, kProds><<<rows / 64, 128>>>(dA, dB, K, rows, swap, dO);
  FB_CUDA_CHECK(cudaGetLastError());
  std::vector<float> out(static_cast<size_t>(rows) * N);
  FB_CUDA_CHECK(cudaMemcpy(out.data(), dO, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  FB_CUDA_CHECK(cudaFree(dA));
  FB_CUDA_CHECK(cudaFree(dB));
  FB_CUDA_CHECK(cudaFree(dO));
  return out;
}

// LAYOUT: 3 integer pieces, 6 products, K = 64, 2 tiles; returns true on an exact match.
template <bool kBF16, int N>
bool layout_check(const char* name) {
  const int K = 64, rows = 128;
  rng_t rng{77 + N + (kBF16 ? 1 : 0)};
  std::vector<int> a(3 * rows * K), b(3 * N * K);
  for (auto& v : a) v = static_cast<int>(rng.next() % 9) - 4;
  for (auto& v : b) v = static_cast<int>(rng.next() % 9) - 4;
  using T = std::conditional_t<kBF16, uint16_t, uint32_t>;
  std::vector<T> A(a.size()), B(b.size());
  for (size_t i = 0; i < a.size(); ++i) A[i] = bits_of<kBF16>(static_cast<float>(a[i]));
  for (size_t i = 0; i < b.size(); ++i) B[i] = bits_of<kBF16>(static_cast<float>(b[i]));
  std::vector<long long> want(static_cast<size_t>(rows) * N, 0);
  for (int r = 0; r < rows; ++r)
    for (int n = 0; n < N; ++n)
      for (int q = 0; q < 6; ++q)
        for (int k = 0; k < K; ++k)
          want[static_cast<size_t>(r) * N + n] += a[(static_cast<size_t>(prod_a(6, q)) * rows + r) * K + k] *
                                                  b[(static_cast<size_t>(prod_b(6, q)) * N + n) * K + k];
  auto count_bad = [&](const std::vector<float>& got, bool print) {
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (static_cast<double>(got[i]) != static_cast<double>(want[i]) && bad++ < 4 && print)
        std::printf("  mismatch row %zu col %zu: got %.1f want %lld\n", i / N, i % N, got[i], want[i]);
    return bad;
  };
  const size_t bad = count_bad(run_gemm<kBF16, N, 6>(A, B, K, rows, 0), true);
  std::printf("LAYOUT %-34s %s (%zu of %d outputs differ from the integer product)\n", name, bad ? "FAIL" : "PASS",
              bad, rows * N);
  if (bad) {
    const size_t bad_swapped = count_bad(run_gemm<kBF16, N, 6>(A, B, K, rows, 1), false);
    std::printf("  diagnostic: with the LBO and SBO fields swapped %zu outputs differ%s\n", bad_swapped,
                bad_swapped ? "" : " (so the fields are the other way round: swap kLBO and kSBO)");
  }
  return bad == 0;
}

// ROUND: row c = case c, w = 1, K = 2 instructions (k-step 1: first, k-step 2: second); prints a verdict.
struct round_case {
  const char* name;
  std::vector<std::pair<int, float>> first, second;  // (position within the instruction, x)
};

template <bool kBF16>
void round_check(const char* name) {
  constexpr int kKS = kBF16 ? 16 : 8, K = 2 * kKS, N = 128;
  const float u = 0x1p-24f;  // half an ulp of 1
  std::vector<std::pair<int, float>> seven;
  seven.push_back({0, 1.0f});
  for (int i = 1; i < 8; ++i) seven.push_back({i, u / 4});
  const std::vector<round_case> cases = {
      {"1 + 0.75 ulp", {{0, 1.0f}, {1, 1.5f * u}}, {}},
      {"-(1 + 0.75 ulp)", {{0, -1.0f}, {1, -1.5f * u}}, {}},
      {"1 - 2^-26 (0.25 ulp below 1)", {{0, 1.0f}, {1, -u / 4}}, {}},
      {"1 + 7 x 2^-26 (0.875 ulp)", seven, {}},
      {"1 + 2 x 0.375 ulp", {{0, 1.0f}, {1, 0.75f * u}, {2, 0.75f * u}}, {}},
      {"C = 1, next instr + 0.75 ulp", {{0, 1.0f}}, {{1, 1.5f * u}}},
      {"C = 1, next instr - 0.25 ulp", {{0, 1.0f}}, {{1, -u / 4}}},
      {"C = -1, next instr - 0.75 ulp", {{0, -1.0f}}, {{1, -1.5f * u}}},
      {"4096 - 4096 + 1 + 0.75 ulp", {{0, 4096.0f}, {1, -4096.0f}, {2, 1.0f}, {3, 1.5f * u}}, {}},
  };
  using T = std::conditional_t<kBF16, uint16_t, uint32_t>;
  std::vector<T> A(64 * K, bits_of<kBF16>(0.0f)), B(static_cast<size_t>(N) * K, bits_of<kBF16>(1.0f));
  std::vector<long double> exact(cases.size(), 0);
  for (size_t c = 0; c < cases.size(); ++c) {
    for (auto [k, v] : cases[c].first) {
      A[c * K + k] = bits_of<kBF16>(v);
      exact[c] += v;
    }
    for (auto [k, v] : cases[c].second) {
      A[c * K + kKS + k] = bits_of<kBF16>(v);
      exact[c] += v;
    }
  }
  const std::vector<float> out = run_gemm<kBF16, N, 1>(A, B, K, 64);
  int disc = 0, n_rz = 0, n_rn = 0;
  std::printf("ROUND %s: fp32 accumulation, w = 1 (ulp = 2^-23 at 1)\n", name);
  std::printf("ROUND   %-30s %-16s %-16s %-16s %s\n", "case", "wgmma", "RN(exact)", "RZ(exact)", "matches");
  for (size_t c = 0; c < cases.size(); ++c) {
    const float rn = static_cast<float>(exact[c]);
    const float rz = std::fabs(static_cast<long double>(rn)) > std::fabs(exact[c]) ? std::nextafter(rn, 0.0f) : rn;
    const float got = out[c * N];
    bool cols_agree = true;
    for (int n = 1; n < N; ++n) cols_agree &= out[c * N + n] == got;
    const char* m = got == rn && got == rz ? "RN = RZ" : got == rn ? "RN" : got == rz ? "RZ" : "neither";
    if (rn != rz) disc++, n_rn += got == rn, n_rz += got == rz;
    std::printf("ROUND   %-30s %-16a %-16a %-16a %s%s\n", cases[c].name, got, rn, rz, m,
                cols_agree ? "" : " (columns disagree!)");
  }
  std::printf("ROUND %s: matched RZ in %d and RN in %d of %d discriminating cases -> %s\n", name, n_rz, n_rn, disc,
              n_rz == disc ? "accumulation looks TRUNCATED (round toward zero)"
              : n_rn == disc ? "accumulation looks ROUND-TO-NEAREST"
                             : "mixed / neither (see the cases)");
}

struct scheme {
  const char* name;
  int kind;  // 0 SIMT fp32 FMA, 1 wgmma tf32, 2 wgmma bf16
  int prods;
  double worst_rms_256 = 0, worst_loses_256 = 0;
};

static int probe(int argc, char** argv) {
  const bool quick = argc > 1 && std::string_view(argv[1]) == "--quick";
  cudaDeviceProp prop{};
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::printf("wgmma_bench: %s, %d SMs, sm_%d%d%s\n", prop.name, sms, prop.major, prop.minor, quick ? ", --quick" : "");
  if (prop.major != 9) {
    std::printf("wgmma_bench: needs an sm_90 (Hopper) GPU\n");
    return 2;
  }

  // 1. Layout self-check first: a wrong descriptor or fragment layout voids everything below.
  bool ok = true;
  ok &= layout_check<false, 128>("wgmma m64n128k8 tf32 (SS, 6 prods)");
  ok &= layout_check<false, 256>("wgmma m64n256k8 tf32 (SS, 6 prods)");
  ok &= layout_check<true, 128>("wgmma m64n128k16 bf16 (SS, 6 prods)");
  ok &= layout_check<true, 256>("wgmma m64n256k16 bf16 (SS, 6 prods)");
  if (!ok) {
    std::printf("wgmma_bench: layout self-check FAILED: descriptor or fragment layout wrong, no numbers printed\n");
    return 1;
  }

  // 2. Throughput.
  float* sink;
  FB_CUDA_CHECK(cudaMalloc(&sink, 1024 * sizeof(float)));
  const double flop_per_sm = quick ? 0x1p33 : 0x1p36;  // per launch: ~18 ms of tf32 wgmma per run
  auto wg_rate = [&](auto kernel, int n, int k, int wgs) {
    const double flop_instr = 2.0 * 64 * n * k;
    const int iters = static_cast<int>(flop_per_sm / (wgs * kRateSteps * flop_instr));
    FB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kRateSmem));
    const double ms = time_ms([&] { kernel<<<sms, 128 * wgs, kRateSmem>>>(iters, sink); });
    return static_cast<double>(sms) * wgs * iters * kRateSteps * flop_instr / ms / 1e9;
  };
  const double r_t128 = wg_rate(wg_rate_kernel<false, 128, 4>, 128, 8, 4);
  const double r_t256 = wg_rate(wg_rate_kernel<false, 256, 2>, 256, 8, 2);
  const double r_b128 = wg_rate(wg_rate_kernel<true, 128, 4>, 128, 16, 4);
  const double r_b256 = wg_rate(wg_rate_kernel<true, 256, 2>, 256, 16, 2);
  const int mma_iters = static_cast<int>(flop_per_sm / (32 * 4 * 2.0 * 16 * 8 * 8));
  const double t_mma = time_ms([&] { mma_rate_kernel<<<sms, 1024>>>(mma_iters, sink); });
  const double r_mma = static_cast<double>(sms) * 32 * mma_iters * 4 * 2.0 * 16 * 8 * 8 / t_mma / 1e9;
  const double r_tf32 = std::max(r_t128, r_t256), r_bf16 = std::max(r_b128, r_b256);
  const char* rate_fmt = "RATE %-38s %8.1f TFLOP/s  (%.2fx mma.sync tf32)\n";
  std::printf(rate_fmt, "wgmma m64n128k8  tf32 SS, 4 WG/SM", r_t128, r_t128 / r_mma);
  std::printf(rate_fmt, "wgmma m64n256k8  tf32 SS, 2 WG/SM", r_t256, r_t256 / r_mma);
  std::printf(rate_fmt, "wgmma m64n128k16 bf16 SS, 4 WG/SM", r_b128, r_b128 / r_mma);
  std::printf(rate_fmt, "wgmma m64n256k16 bf16 SS, 2 WG/SM", r_b256, r_b256 / r_mma);
  std::printf("RATE %-38s %8.1f TFLOP/s\n", "mma.sync m16n8k8 tf32, 32 warps/SM", r_mma);
  FB_CUDA_CHECK(cudaFree(sink));

  // 3. Accumulator rounding.
  round_check<false>("wgmma m64n128k8 tf32");
  round_check<true>("wgmma m64n128k16 bf16");

  // 4. Accuracy of the split schemes, N = 128.
  constexpr int N = 128;
  const int tiles = quick ? 4 : 16, rows = tiles * 64;  // 131,072 dot products per (K, distribution)
  std::vector<scheme> schemes = {{"fp32 FMA (SIMT)", 0, 1}, {"1xTF32", 1, 1},  {"3xTF32", 1, 3},
                                 {"TF32x6 (3 pieces)", 1, 6}, {"1xBF16", 2, 1}, {"BF16x6 (3 pieces)", 2, 6}};
  const int Ks[] = {128, 256, 512};
  const dist dists[] = {dist::uniform, dist::normal, dist::offset, dist::sparse};
  for (dist d : dists)
    for (int K : Ks) {
      rng_t rng{static_cast<uint64_t>(K) * 1000 + static_cast<uint64_t>(d)};
      std::vector<float> X(static_cast<size_t>(rows) * K), W(static_cast<size_t>(N) * K);  // W: [n][k]
      const double bound = 1.0 / std::sqrt(static_cast<double>(K));
      for (auto& w : W) w = static_cast<float>((2 * rng.u01() - 1) * bound);
      for (auto& x : X) x = draw_x(d, rng);
      const pieces px = split3(X), pw = split3(W);
      const size_t n_out = static_cast<size_t>(rows) * N;
      std::vector<std::vector<float>> res(schemes.size());
      {
        float* dX = upload(X);
        float* dW = upload(W);
        float* dO;
        FB_CUDA_CHECK(cudaMalloc(&dO, n_out * sizeof(float)));
        simt_kernel<<<static_cast<int>(n_out / 128), 128>>>(dX, dW, K, N, dO);
        FB_CUDA_CHECK(cudaGetLastError());
        res[0].resize(n_out);
        FB_CUDA_CHECK(cudaMemcpy(res[0].data(), dO, n_out * sizeof(float), cudaMemcpyDeviceToHost));
        FB_CUDA_CHECK(cudaFree(dX));
        FB_CUDA_CHECK(cudaFree(dW));
        FB_CUDA_CHECK(cudaFree(dO));
      }
      for (size_t s = 1; s < schemes.size(); ++s) {
        const int kind = schemes[s].kind, prods = schemes[s].prods;
        if (kind == 1 && prods == 1) res[s] = run_gemm<false, N, 1>(px.tf32, pw.tf32, K, rows);
        if (kind == 1 && prods == 3) res[s] = run_gemm<false, N, 3>(px.tf32, pw.tf32, K, rows);
        if (kind == 1 && prods == 6) res[s] = run_gemm<false, N, 6>(px.tf32, pw.tf32, K, rows);
        if (kind == 2 && prods == 1) res[s] = run_gemm<true, N, 1>(px.bf16, pw.bf16, K, rows);
        if (kind == 2 && prods == 6) res[s] = run_gemm<true, N, 6>(px.bf16, pw.bf16, K, rows);
      }
      // Reference (long double; products of floats are exact in it) and sum |x w| per output.
      std::vector<double> ref(n_out), mag(n_out);
      for (int r = 0; r < rows; ++r)
        for (int n = 0; n < N; ++n) {
          long double acc = 0, am = 0;
          const float* x = &X[static_cast<size_t>(r) * K];
          const float* w = &W[static_cast<size_t>(n) * K];
          for (int k = 0; k < K; ++k) {
            const long double p = static_cast<long double>(x[k]) * w[k];
            acc += p;
            am += std::fabs(p);
          }
          ref[static_cast<size_t>(r) * N + n] = static_cast<double>(acc);
          mag[static_cast<size_t>(r) * N + n] = static_cast<double>(am);
        }
      for (size_t s = 0; s < schemes.size(); ++s) {
        double max_rel = 0, sum_sq = 0;
        size_t loses = 0;
        for (size_t i = 0; i < n_out; ++i) {
          const double e = std::fabs(static_cast<double>(res[s][i]) - ref[i]);
          const double e_simt = std::fabs(static_cast<double>(res[0][i]) - ref[i]);
          const double rel = mag[i] > 0 ? e / mag[i] : 0.0;
          max_rel = std::max(max_rel, rel);
          sum_sq += rel * rel;
          loses += e > e_simt;
        }
        const double rms = std::sqrt(sum_sq / static_cast<double>(n_out));
        const double loses_pct = 100.0 * static_cast<double>(loses) / static_cast<double>(n_out);
        std::printf("ACC K=%3d %-10s %-18s max |err|/sum|xw| %.3e  rms %.3e  worse than fp32 FMA at %5.1f%%"
                    " of outputs\n",
                    K, dist_name(d), schemes[s].name, max_rel, rms, loses_pct);
        if (K == 256) {
          schemes[s].worst_rms_256 = std::max(schemes[s].worst_rms_256, rms);
          schemes[s].worst_loses_256 = std::max(schemes[s].worst_loses_256, loses_pct);
        }
      }
    }

  // 5. Summary.
  const double macs = 6.45e10;
  std::printf("\nSUMMARY %-24s %9s  %-18s %5s %10s %12s %12s %11s\n", "instruction", "TFLOP/s", "scheme", "prods",
              "eff TF/s", "6.45e10 MAC", "rms K=256", "worse K=256");
  auto row = [&](const char* instr, double raw, const scheme* s, const char* sname, int prods) {
    const double eff = raw / prods;
    std::printf("SUMMARY %-24s %9.1f  %-18s %5d %10.1f %9.0f us", instr, raw, sname, prods, eff,
                macs * 2 / (eff * 1e12) * 1e6);
    if (s) std::printf(" %12.2e %10.1f%%\n", s->worst_rms_256, s->worst_loses_256);
    else std::printf(" %12s %11s\n", "-", "-");
  };
  char tf32_name[64], bf16_name[64];
  std::snprintf(tf32_name, sizeof tf32_name, "wgmma m64n%dk8 tf32", r_t256 >= r_t128 ? 256 : 128);
  std::snprintf(bf16_name, sizeof bf16_name, "wgmma m64n%dk16 bf16", r_b256 >= r_b128 ? 256 : 128);
  row(tf32_name, r_tf32, &schemes[1], schemes[1].name, 1);
  row(tf32_name, r_tf32, &schemes[2], schemes[2].name, 3);
  row(tf32_name, r_tf32, &schemes[3], schemes[3].name, 6);
  row(bf16_name, r_bf16, &schemes[4], schemes[4].name, 1);
  row(bf16_name, r_bf16, &schemes[5], schemes[5].name, 6);
  row("mma.sync m16n8k8 tf32", r_mma, nullptr, "1xTF32", 1);
  row("mma.sync m16n8k8 tf32", r_mma, nullptr, "3xTF32", 3);
  row("mma.sync m16n8k8 tf32", r_mma, nullptr, "TF32x6", 6);
  std::printf("SUMMARY fp32 FMA (SIMT) at K=256: worst rms %.2e (the target). rms and 'worse' (than fp32 FMA): the\n"
              "SUMMARY worst over the 4 distributions at K=256; eff = raw / products, the splits not counted\n",
              schemes[0].worst_rms_256);
  return 0;
}

int main(int argc, char** argv) {
  return fb::probes::run_probe("wgmma_bench", [&] { return probe(argc, argv); });
}
