#pragma once
/// The fp32 CUDA-core tile loop's staging: a block's x tile and a phase's weights copied into
/// shared memory (cp.async on the GPU, plain copies on the host).

#include "fused/arch/cp_async.cuh"
#include "fused/conv3d/simt_fp32_geometry.cuh"

namespace fb::fused::conv3d::simt_fp32 {

/// Stages input channels [cc*ci_chunk, ...) of the block's x tile into xs, zeros outside the input.
/// centre (may be null): per (b, ci) fp32 values [b * c_in + ci] subtracted from x inside the input
/// (x - c, one rounding); outside the input the tile stays 0.
/// Thread tid: warps take rows (ci, xd, xh) in turn, lanes the first 32 columns (coalesced); the
/// J0 - 1 remaining columns of every row are spread over all threads. The copies are asynchronous
/// (cp_async_4); with centres the thread waits for its own and subtracts the centre from the
/// same elements (the value x - c of the synchronous version, bit for bit). Without centres the
/// caller waits (cp_async_wait_all) before the barrier that publishes the tile.
template <int kJ0>
FB_HOST_DEVICE void stage_x(const geometry& g, const block_pos& bp, int64_t cc, int tid, const float* x,
                            const float* centre, float* xs) {
  const x_layout<kJ0> xl(g);
  const int64_t ci0 = cc * g.ci_chunk;
  const int n_ci = static_cast<int>(min_i64(g.ci_chunk, g.c_in - ci0));
  const int n_rows = n_ci * xl.x_tile_d * xl.x_tile_h;
  // 32-bit extents (make_plan bounds them by 2^20); only the element offset is 64-bit. Few live
  // registers: in the chunked path the accumulators stay live through this step.
  const int D = static_cast<int>(g.dim[0].n_in), H = static_cast<int>(g.dim[1].n_in), W = static_cast<int>(g.dim[2].n_in);
  const int id0 = bp.q0[0] - (xl.j0 - 1), ih0 = bp.q0[1] - (xl.j0 - 1), iw0 = bp.q0[2] - (xl.j0 - 1);
  const float* xb = x + (static_cast<int64_t>(bp.b) * g.c_in + ci0) * D * H * W;
  const float* cb = centre != nullptr ? centre + static_cast<int64_t>(bp.b) * g.c_in + ci0 : nullptr;
  // Row `row` of the tile: its input row pointer, or null when the row lies outside the input.
  auto row_src = [&](int row) -> const float* {
    const int ci = row / (xl.x_tile_d * xl.x_tile_h);
    const int rem = row - ci * (xl.x_tile_d * xl.x_tile_h);
    const int xd = rem / xl.x_tile_h;
    const int xh = rem - xd * xl.x_tile_h;
    const int id = id0 + xd, ih = ih0 + xh;
    if (id < 0 || id >= D || ih < 0 || ih >= H) return nullptr;
    return xb + ((static_cast<int64_t>(ci) * D + id) * H + ih) * W;
  };
  const int lane = tid & 31, warp = tid >> 5;
  const int iw = iw0 + lane;
  const bool lane_in = iw >= 0 && iw < W;
  constexpr int kLanes = 32;
  const int rows_per_ci = xl.x_tile_d * xl.x_tile_h;  // >= k_tile_qd * k_tile_qh = 16 > k_warps
  // The first 32 columns: rows warp, warp + k_warps, ... in batches of 32 rows, a bit per row
  // saying whether it was copied (inside the input), so that the centring step revisits only those
  // without recomputing addresses. The row's place (xd, xh) and its element offset advance by
  // additions: first the divisions per row (~20% of the #15 passes' instructions), then a 64-bit
  // product chain per row (~48 instructions per row copied, 11% of pass 1's instructions; ncu on
  // the H100) were what staging cost.
  static_assert(k_tile_qh >= k_warps && k_tile_qd >= 1, "a step of k_warps rows wraps xh at most once");
  const int64_t hw_in = static_cast<int64_t>(H) * W;
  for (int batch0 = warp; batch0 < n_rows; batch0 += 32 * k_warps) {
    unsigned copied = 0;
    int ci = batch0 / rows_per_ci, rem = batch0 - ci * rows_per_ci;
    int xd = rem / xl.x_tile_h, xh = rem - xd * xl.x_tile_h;
    // Offset of (ci, id0 + xd, ih0 + xh, iw) from xb; rows outside the input are never read.
    int64_t off = (static_cast<int64_t>(ci) * D + (id0 + xd)) * hw_in + static_cast<int64_t>(ih0 + xh) * W + iw;
    for (int i = 0; i < 32; ++i) {
      const int row = batch0 + i * k_warps;
      if (row >= n_rows) break;
      const int id = id0 + xd, ih = ih0 + xh;
      float* dst = xs + row * xl.x_tile_w + lane;
      if (lane_in && id >= 0 && id < D && ih >= 0 && ih < H) {
        arch::cp_async_4(dst, xb + off);
        copied |= 1u << i;
      } else {
        *dst = 0.0f;
      }
      xh += k_warps;
      off += static_cast<int64_t>(k_warps) * W;
      if (xh >= xl.x_tile_h) {
        xh -= xl.x_tile_h;
        ++xd;
        off += hw_in - static_cast<int64_t>(xl.x_tile_h) * W;
        if (xd == xl.x_tile_d) {
          xd = 0;
          off += (static_cast<int64_t>(D) - xl.x_tile_d) * hw_in;
        }
      }
    }
    if (cb == nullptr || copied == 0) continue;
    arch::cp_async_wait_all();
    ci = batch0 / rows_per_ci;
    rem = batch0 - ci * rows_per_ci;
    for (int i = 0; i < 32; ++i) {
      if ((copied >> i) & 1u) {
        float* dst = xs + (batch0 + i * k_warps) * xl.x_tile_w + lane;
        *dst = *dst - load_ro(cb + ci);
      }
      rem += k_warps;
      if (rem >= rows_per_ci) rem -= rows_per_ci, ++ci;
    }
  }
  // Columns 32 .. xw-1 (the J0 - 1 halo columns past the lanes), flattened over all threads.
  const int tail = xl.x_tile_w - kLanes;
  if (tail > 0) {
    const int div = tail > 0 ? tail : 1;  // (tail is a constant 0 for kJ0 = 1)
    auto each_tail = [&](auto&& f) {
      for (int e = tid; e < n_rows * tail; e += k_threads) {
        const int row = e / div;
        const int col = kLanes + (e - row * div);
        const float* src = row_src(row);
        const int iwc = iw0 + col;
        f(row, col, (src != nullptr && iwc >= 0 && iwc < W) ? src + iwc : nullptr);
      }
    };
    each_tail([&](int row, int col, const float* src) {
      float* dst = xs + row * xl.x_tile_w + col;
      if (src != nullptr)
        arch::cp_async_4(dst, src);
      else
        *dst = 0.0f;
    });
    if (cb == nullptr) return;
    arch::cp_async_wait_all();
    each_tail([&](int row, int col, const float* src) {
      if (src == nullptr) return;
      float* dst = xs + row * xl.x_tile_w + col;
      *dst = *dst - load_ro(cb + row / rows_per_ci);
    });
  }
}

/// Stages the weights of phase `pp`, input-channel chunk cc: one contiguous copy of the arranged
/// weights (ci of the chunk x taps of the phase x k_co_block) into ws, 16 bytes at a time,
/// asynchronously (cp_async_16: the caller waits before the barrier that publishes them).
FB_HOST_DEVICE void stage_w(const geometry& g, const block_pos& bp, const phase_pos& pp, int64_t phase_offset,
                            int64_t cc, int tid, const float* wt, float* ws) {
  const int64_t ci0 = cc * g.ci_chunk;
  const int64_t n_ci = min_i64(g.ci_chunk, g.c_in - ci0);
  const float* src = wt + bp.co_block * g.wt_co_block_floats + phase_offset + ci0 * pp.taps * k_co_block;
  const int n4 = static_cast<int>(n_ci * pp.taps * (k_co_block / 4));
  for (int e = tid; e < n4; e += k_threads) arch::cp_async_16(ws + 4 * e, src + 4 * e);
}

}  // namespace fb::fused::conv3d::simt_fp32
