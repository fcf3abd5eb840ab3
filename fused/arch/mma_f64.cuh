#pragma once
/// The fp64 tensor-core MMA of sm_90, mma.sync.aligned.m16n8k16.row.col.f64 (D = A B + C, A 16 x 16,
/// B 16 x 8, C and D 16 x 8, all fp64), written once for kernels and host executors: which lane
/// holds which element of each fragment, and the MMA itself, as one PTX instruction on the GPU and
/// emulated over the warp's 32 lanes on the host.
///
/// Why fp64 for fp32 data: the product of two fp32 numbers is exact in fp64 (24 + 24 < 53 bits),
/// so a convolution's sum of K such products accumulated in fp64 and rounded to fp32 once is the
/// correctly rounded result but for ~K 2^-53 of the sum of |products|: more accurate than any fp32
/// summation order (libtorch's included) and independent of how the terms are offset.
///
/// Fragment layout (PTX ISA "Matrix fragments for mma.m16n8k16 with .f64"; the same as CUTLASS's
/// SM90_16x8x16_F64F64F64F64_TN traits): with g = lane / 4 and t = lane % 4,
///   A: a[v] = A(g + 8 (v % 2), t + 4 (v / 2)),  v = 0..7
///   B: b[v] = B(t + 4 v, g),                    v = 0..3
///   C, D: c[v] = C(g + 8 (v / 2), 2 t + v % 2), v = 0..3
/// tc_precision_bench's LAYOUT line checks it on the GPU; dmma_conv_bench's host check and the
/// host executors use these functions, so a wrong layout here would show there as wrong outputs.
///
/// Warp contexts: a warp's code is written once against W, with fragments as arrays [W::k_lanes][..].
/// On the GPU W is device_lane (k_lanes 1: this thread's own fragment); on the host it is host_warp
/// (k_lanes 32: the whole warp), and W::lane(l) names the lane whose fragment slot l is.
#include <cmath>

#include "fused/arch/host_device.cuh"

namespace fb::fused::arch::mma {

constexpr int k_m = 16, k_n = 8, k_k = 16;  ///< the instruction's shape
constexpr int k_a_regs = 8, k_b_regs = 4, k_c_regs = 4;  ///< fp64 values per lane

/// Row (m) and column (k) of A held in value v of `lane`.
FB_HOST_DEVICE int a_row(int lane, int v) { return lane / 4 + 8 * (v % 2); }
FB_HOST_DEVICE int a_col(int lane, int v) { return lane % 4 + 4 * (v / 2); }
/// Row (k) and column (n) of B held in value v of `lane`.
FB_HOST_DEVICE int b_row(int lane, int v) { return lane % 4 + 4 * v; }
FB_HOST_DEVICE int b_col(int lane, int /*v*/) { return lane / 4; }
/// Row (m) and column (n) of C and D held in value v of `lane`.
FB_HOST_DEVICE int c_row(int lane, int v) { return lane / 4 + 8 * (v / 2); }
FB_HOST_DEVICE int c_col(int lane, int v) { return 2 * (lane % 4) + v % 2; }

#if defined(__CUDACC__)
/// The GPU: one lane, this thread; d += a b by the tensor cores (all 32 lanes together).
struct device_lane {
  static constexpr int k_lanes = 1;
  int my_lane;
  __device__ int lane(int) const { return my_lane; }
  __device__ __forceinline__ void mma(double (&d)[1][k_c_regs], const double (&a)[1][k_a_regs],
                                      const double (&b)[1][k_b_regs]) const {
#if defined(__CUDA_ARCH__)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, {%0,%1,%2,%3};"
        : "+d"(d[0][0]), "+d"(d[0][1]), "+d"(d[0][2]), "+d"(d[0][3])
        : "d"(a[0][0]), "d"(a[0][1]), "d"(a[0][2]), "d"(a[0][3]), "d"(a[0][4]), "d"(a[0][5]), "d"(a[0][6]),
          "d"(a[0][7]), "d"(b[0][0]), "d"(b[0][1]), "d"(b[0][2]), "d"(b[0][3]));
#endif
  }
};
#endif

/// The host: all 32 lanes of a warp; the MMA emulated from the layout above, each D element a chain
/// of fp64 FMAs over k ascending. The GPU's internal order within one instruction is not specified;
/// with exact products the two differ by fp64 roundings (~2^-53 of the sum of |products| per step),
/// which the fp32 rounding of the result almost always absorbs (the tests compare with tolerances).
struct host_warp {
  static constexpr int k_lanes = 32;
  int lane(int l) const { return l; }
  void mma(double (&d)[k_lanes][k_c_regs], const double (&a)[k_lanes][k_a_regs],
           const double (&b)[k_lanes][k_b_regs]) const {
    double am[k_m][k_k], bm[k_k][k_n];
    for (int l = 0; l < k_lanes; ++l) {
      for (int v = 0; v < k_a_regs; ++v) am[a_row(l, v)][a_col(l, v)] = a[l][v];
      for (int v = 0; v < k_b_regs; ++v) bm[b_row(l, v)][b_col(l, v)] = b[l][v];
    }
    for (int l = 0; l < k_lanes; ++l)
      for (int v = 0; v < k_c_regs; ++v) {
        const int m = c_row(l, v), n = c_col(l, v);
        double acc = d[l][v];
        for (int k = 0; k < k_k; ++k) acc = std::fma(am[m][k], bm[k][n], acc);
        d[l][v] = acc;
      }
  }
};

}  // namespace fb::fused::arch::mma
