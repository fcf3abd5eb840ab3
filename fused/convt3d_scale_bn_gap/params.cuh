#pragma once
/// convt3d_scale_bn_gap's block programs' common ground: block sizes and register tiles, the
/// kernels' params, read-only loads and asynchronous copies (cp.async on the GPU, a plain copy on
/// the host), and the stateless per-thread state. The programs: fused/convt3d_scale_bn_gap/programs.cuh.

#include <cstddef>
#include <cstdint>
#include "fused/arch/cp_async.cuh"
#include "fused/arch/host_device.cuh"
#include "fused/arch/read_only.cuh"
#include "fused/exec/block_program.cuh"
#include "fused/math/batch_norm.cuh"
#include "fused/math/dft.cuh"

namespace fb::fused::convt3d_scale_bn_gap::detail {

using math::dft::cplx;
using math::dft::cplx2;

constexpr int k_threads = 256;  ///< threads of every block
constexpr int k_units = 8;      ///< gemm: frequency units per block, one per warp
constexpr int k_lanes = 32;     ///< gemm: output channels per block, one per lane
constexpr int k_jmax = 8;       ///< x: fw columns of the w-stage register tile (chunks hold <= 8)
constexpr int k_jt = 4;         ///< x: fw columns per thread item of the h- and d-stages
constexpr int k_fh = 3;         ///< x: fh pairs per h-stage item (register tile k_jt x k_fh)
constexpr int k_fd = 4;         ///< x: fd pairs per d-stage item (register tile k_jt x k_fd)
static_assert(k_jt == 4 && k_fd == 4, "x_d_stage and load_jt spell out 4 columns and 4 pairs");
constexpr int k_reduce_channels = 8;  ///< reduce: output channels per block
constexpr int k_reduce_slices = 32;   ///< reduce: interleaved slices of the groups, one thread per (slice, channel)
constexpr int k_max_tb = 16;    ///< gemm: largest batch tile (accumulators: 2 rows x batch_tile complex)

/// Everything the kernels read: pointers, sizes, the derived decomposition (fused/
/// convt3d_scale_bn_gap/plan.h fills it) and the scalars.
struct params {
  // inputs, parameters, in-place buffers, output
  const float* x;
  const float* weight;
  const float* conv_bias;
  const float* gamma;
  const float* beta;
  float* running_mean;
  float* running_var;
  int64_t* num_batches_tracked;
  float* out;
  // workspace
  double* S;        ///< [B][C_in] spatial sums of x
  double* wsum;     ///< [C_in][C_out] tap sums of w
  double* ybar;     ///< [B][C_out]
  double* m2;       ///< [B][C_out] centred sums of squares (training)
  double* partial;  ///< [n_groups][B][C_out] (training)
  cplx* h1;         ///< [C_in][n_d_pairs][k][k][C_out] (training)
  cplx* X;          ///< [D'*H'][C_in][B][n_fw] (training)
  cplx* G;          ///< [C_in][pairs.count][k][C_out] (training)
  unsigned char* xtab;  ///< [n_fw_chunks][x_tables_bytes]: each fw chunk's x tables, as x_program's
                        ///< shared memory holds them (training)
  // sizes
  int64_t B, c_in, c_out;
  int D, H, W, k;
  int dft_d, dft_h, dft_w;   ///< DFT sizes = conv output sizes n + k - 1
  int n_fw;                  ///< half spectrum along w: dft_w/2 + 1
  int n_d_pairs, n_h_pairs;  ///< dft_d/2 + 1, dft_h/2 + 1 (mirrored output pairs of the d- and h-stages)
  int64_t n_out;             ///< N' = dft_d*dft_h*dft_w
  // gemm decomposition
  math::dft::row_pairs pairs;
  int64_t n_units;   ///< pairs.count * n_fw: unit u = (pair u / n_fw, column u % n_fw)
  int64_t n_groups;  ///< ceil(n_units / k_units)
  int n_ctiles;      ///< ceil(C_out / k_lanes)
  int n_btiles;      ///< ceil(B / batch_tile)
  int batch_tile;    ///< batch tile (1, 2, 4, 8 or 16), the kernel's template argument
  int chunk_channels;  ///< input channels per staged chunk
  int pair_rows;       ///< row pairs a group can touch (shared-memory rows of G)
  // x decomposition
  int chunk_columns;  ///< fw columns per chunk (4 or 8): row stride of the w- and h-stage tiles
  int n_fw_chunks;    ///< ceil(n_fw / chunk_columns)
  int slab_rows;   ///< input rows (d, h) per thread row slot, <= k_threads
  int w_stage_rows;  ///< x: rows per thread in the w-stage (1 or 2): w_stage_rows slabs are staged at once
  // scalars
  double scale, eps, momentum;
  bool training;
};

/// Read-only loads of data written before the kernel started (fused/arch/read_only.cuh; here
/// also for complex values).
using fb::fused::load_ro;
FB_HOST_DEVICE cplx load_ro(const cplx* p) {
#if defined(__CUDA_ARCH__)
  const float2 v = __ldg(reinterpret_cast<const float2*>(p));
  return {v.x, v.y};
#else
  return *p;
#endif
}

FB_HOST_DEVICE std::size_t align16(std::size_t n) { return (n + 15) & ~static_cast<std::size_t>(15); }
FB_HOST_DEVICE int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

template <class T>
FB_HOST_DEVICE T* at(unsigned char* smem, std::size_t off) {
  return reinterpret_cast<T*>(smem + off);
}

/// No per-thread state (the block executors' default).
using no_state = fb::fused::exec::no_state;

/// Taps held in registers by the loops over a kernel dimension (prep's depth taps, the gemm's G
/// load batches).
constexpr int k_tap_batch = 8;

}  // namespace fb::fused::convt3d_scale_bn_gap::detail
