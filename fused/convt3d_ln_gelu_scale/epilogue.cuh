#pragma once
/// #34's epilogue on the fp64 tensor-core loop (fused/conv3d/mma_fp64_*.cuh): the LayerNorm policy
/// (ln_policy: the accumulators' start at the conv bias, their one rounding into the row buffer, the
/// rows normalised, GELU, scaled and stored) and the two block programs that run it (pass_block,
/// persistent_program), shared by run_cuda and run_host.
#include <cstddef>
#include <cstdint>

#include "fused/arch/read_only.cuh"
#include "fused/conv3d/mma_fp64_tile.cuh"
#include "fused/convt3d_ln_gelu_scale/layer_norm.cuh"
#include "fused/convt3d_ln_gelu_scale/plan.h"

namespace fb::fused::convt3d_ln_gelu_scale::detail {

/// The pass's policy (conv3d::mma_fp64::conv_block). Region: columns [w_out] ln_column, their places
/// in the row buffer [w_out] int (padded to 16 bytes), then rows [ln_rows][row_stride] fp32, each
/// phase-major (phase_offset); with last_into_x the last w phase's values in x's memory, rows
/// [ln_rows][row_stride]. LayerNorm row r = h row x group_ch + channel of the block.
struct ln_policy {
  const plan& pl;
  const args& a;
  bool last_pass_into_x;
  bool rows_own_warp;  ///< plan::rows_own_warp (conv_persistent)
  /// setup_columns runs before the first pass (conv_persistent), so start_accumulators reads the
  /// biases from the region; conv_block sets the columns up after its passes, so it loads them.
  bool biases_staged;

  /// The conv bias of output channel `channel` in fp64 (exact), 0 without a bias or past C_out.
  FB_HOST_DEVICE double conv_bias(int channel) const {
    return a.bias != nullptr && channel < pl.g.c_out ? static_cast<double>(fb::fused::load_ro(a.bias + channel)) : 0.0;
  }

  FB_HOST_DEVICE ln_column* columns(unsigned char* region) const { return reinterpret_cast<ln_column*>(region); }
  FB_HOST_DEVICE double* biases(unsigned char* region) const {
    return reinterpret_cast<double*>(region + sizeof(ln_column) * static_cast<std::size_t>(pl.w_out));
  }
  FB_HOST_DEVICE int* places(unsigned char* region) const {
    return reinterpret_cast<int*>(region + sizeof(ln_column) * static_cast<std::size_t>(pl.w_out) +
                                  ln_bias_count(pl.w_out) * sizeof(double));
  }
  FB_HOST_DEVICE float* rows(unsigned char* region) const {
    return reinterpret_cast<float*>(region + ln_columns_bytes(pl.w_out));
  }

  /// A warp's accumulators at a position pass's start: each channel's conv bias (fp64: exact; 0
  /// without one), so that the store rounds y = fp32(bias + sum) once, the value PyTorch's fp32
  /// convolution rounds (args::bias). Why here and not in the store: the reads then overlap the
  /// pass's first operand loads instead of delaying its stores, and the store is a plain rounding.
  /// Why from the region where staged: a global load per channel and pass, with its branch, cost
  /// 2% of #34's default (NOTES, 2026-11-29).
  template <class W, class State>
  FB_HOST_DEVICE void start_accumulators(const W& w, State& st, const conv3d::mma_fp64::block_pos& bp, int warp,
                                         unsigned char* region) const {
    const int warp_col = warp % pl.g.warp_cols;
    const double* staged = biases_staged ? biases(region) + bp.first_channel : nullptr;
    for (int l = 0; l < W::k_lanes; ++l)
      FB_UNROLL
      for (int nt = 0; nt < conv3d::mma_fp64::k_nt; ++nt)
        FB_UNROLL
        for (int e = 0; e < 2; ++e) {  // C values e and 2 + e: the same channel (rows g and g + 8)
          const int ch = conv3d::mma_fp64::tile_channel(warp_col, nt, w.lane(l), e);
          const double bias = staged != nullptr ? staged[ch] : conv_bias(bp.first_channel + ch);
          FB_UNROLL
          for (int mt = 0; mt < conv3d::mma_fp64::k_mt; ++mt) {
            st.acc[mt][nt][l][e] = bias;
            st.acc[mt][nt][l][2 + e] = bias;
          }
        }
  }

  /// A warp's accumulators after a position pass: y = fp32(bias + sum) into the row buffer (each
  /// output of the block is one lane's value in one pass; the rows are whole after the last w
  /// phase), rounded once. A lane's channels are the same in every m tile and fragment row: their
  /// offsets in the buffer and whether each is an output are worked out once per store, its
  /// positions once per fragment row, so a value costs its rounding, one add and the store (ncu,
  /// 2026-11-29: per value, the offset rebuilt from the plan's fields cost ~8 instructions, a
  /// quarter of the tile's time outside the k16 loops).
  template <class W, class State>
  FB_HOST_DEVICE void store(const W& w, const State& st, const conv3d::mma_fp64::block_pos& bp,
                            const conv3d::mma_fp64::pass_pos& pp, int warp,
                            unsigned char* region, unsigned char* x_area) const {
    const conv3d::mma_fp64::geometry& g = pl.g;
    const int warp_row = warp / g.warp_cols, warp_col = warp % g.warp_cols;
    // x_area: the last pass of a last_into_x plan (conv_block), the last w phase's own rows.
    float* buf = x_area != nullptr ? reinterpret_cast<float*>(x_area) : rows(region) + phase_offset(g, pp.rw);
    const int stride = pl.row_stride, h_row_floats = pl.group_ch * pl.row_stride;
    for (int l = 0; l < W::k_lanes; ++l) {
      int ch_offset[conv3d::mma_fp64::k_nt][2];  // C values e and 2 + e: the same channel
      bool ch_live[conv3d::mma_fp64::k_nt][2];
      FB_UNROLL
      for (int nt = 0; nt < conv3d::mma_fp64::k_nt; ++nt)
        FB_UNROLL
        for (int e = 0; e < 2; ++e) {
          const int ch = conv3d::mma_fp64::tile_channel(warp_col, nt, w.lane(l), e);
          ch_offset[nt][e] = ch * stride;
          ch_live[nt][e] = ch < bp.n_ch;
        }
      FB_UNROLL
      for (int mt = 0; mt < conv3d::mma_fp64::k_mt; ++mt)
        FB_UNROLL
        for (int h = 0; h < 2; ++h) {  // C values 2h and 2h + 1: fragment row g + 8h
          const int m = conv3d::mma_fp64::tile_position(warp_row, mt, w.lane(l), 2 * h);
          if (m >= pp.n) continue;
          const int pos = pp.m0 + m;
          float* at = buf + (pos / pp.n_qw) * h_row_floats + pos % pp.n_qw;
          FB_UNROLL
          for (int nt = 0; nt < conv3d::mma_fp64::k_nt; ++nt)
            FB_UNROLL
            for (int e = 0; e < 2; ++e)
              if (ch_live[nt][e]) at[ch_offset[nt][e]] = static_cast<float>(st.acc[mt][nt][l][2 * h + e]);
        }
    }
  }

  /// gamma, beta, the biases and each w' value's place in a row, the same for every row and tile: worked out
  /// into the region's columns once per block program (conv_block: per block; conv_persistent: per
  /// resident block), read after a barrier. A place indexes from the row's first segment
  /// (phase_offset); x_area is the staged x's memory, where a split row's second segment lies.
  template <class Exec>
  FB_HOST_DEVICE void setup_columns(Exec& ex, unsigned char* region, unsigned char* x_area) const {
    const conv3d::mma_fp64::geometry& g = pl.g;
    const int n = static_cast<int>(pl.w_out);
    const int s = g.s[2], p = static_cast<int>(g.dim[2].p);
    ln_column* cols = columns(region);
    double* bias = biases(region);
    const int n_bias = static_cast<int>(ln_bias_count(pl.w_out));
    int* place = places(region);
    // From a row's first segment to its second (the same for every row: equal strides).
    const int to_b =
        pl.last_into_x ? static_cast<int>(reinterpret_cast<const float*>(x_area) - rows(region)) - pl.region_row_values : 0;
    ex.threads([&](int tid) {
      for (int ow = tid; ow < n; ow += conv3d::mma_fp64::k_threads) {
        const int rw = (ow + p) % s, qw = (ow + p) / s;
        const int j = phase_offset(g, rw) + (qw - g.order[2].first_base(rw));  // in the phase-major row
        place[ow] = j < pl.region_row_values ? j : j + to_b;
        cols[ow].gamma = static_cast<double>(fb::fused::load_ro(a.gamma + ow));
        cols[ow].beta = static_cast<double>(fb::fused::load_ro(a.beta + ow));
      }
      for (int ch = tid; ch < n_bias; ch += conv3d::mma_fp64::k_threads)  // channel ch (C_out == W'), 0 past C_out
        bias[ch] = conv_bias(ch);
    });
  }

  /// After the last w phase, the columns in place: a thread per LayerNorm row, its statistics
  /// (row_moments), then its normalised outputs in w' order, four at a time with one 16-byte store
  /// where W' is a multiple of 4 (each thread's 64 values are independent chains: the GELU's
  /// latency overlaps).
  template <class Exec>
  FB_HOST_DEVICE void finish_rows(Exec& ex, const conv3d::mma_fp64::block_pos& bp, unsigned char* region,
                                  unsigned char* x_area) const {
    const conv3d::mma_fp64::geometry& g = pl.g;
    const int n = static_cast<int>(pl.w_out);
    const ln_column* cols = columns(region);
    const int* place = places(region);
    const float* rows_a = rows(region);
    const auto* rows_b = reinterpret_cast<const float*>(x_area);
    const int64_t od = static_cast<int64_t>(bp.qd) * g.s[0] + bp.rd - g.dim[0].p;
    const auto scale = static_cast<float>(pl.scale);
    // Rows are n_out == W' floats apart: 16-byte aligned where W' is a multiple of 4 and out is.
    const bool by_four = n % 4 == 0 && reinterpret_cast<std::uintptr_t>(a.out) % 16 == 0;
    ex.threads([&](int tid) {
      for (int r = tid; r < bp.rows * pl.group_ch; r += conv3d::mma_fp64::k_threads) {
        const int row = r / pl.group_ch, ch = r % pl.group_ch;
        if (ch >= bp.n_ch) continue;
        const float* src = rows_a + r * pl.row_stride;
        const row_norm rn =
            row_moments(src, pl.region_row_values, rows_b + r * pl.row_stride, n - pl.region_row_values, pl.eps);
        const int64_t oh = static_cast<int64_t>(bp.qh0 + row) * g.s[1] + bp.rh - g.dim[1].p;
        float* dst = a.out + (((static_cast<int64_t>(bp.b) * g.c_out + bp.first_channel + ch) * g.dim[0].n_out + od) *
                                  g.dim[1].n_out + oh) * g.dim[2].n_out;
        if (by_four) {
#if defined(__CUDA_ARCH__)
#pragma unroll 2
#endif
          for (int ow = 0; ow < n; ow += 4) {
            int at[4];
            conv3d::mma_fp64::load_i4(place + ow, at);  // 16-byte aligned: places start 16-byte aligned, W' % 4 == 0
            float v[4];
            FB_UNROLL
            for (int i = 0; i < 4; ++i) {
              const ln_column c = cols[ow + i];
              v[i] = ln_gelu_scale(src[at[i]], rn.mean, rn.rstd, c.gamma, c.beta, scale);
            }
            store_f4(dst + ow, v);
          }
        } else {
          for (int ow = 0; ow < n; ++ow)
            dst[ow] = ln_gelu_scale(src[place[ow]], rn.mean, rn.rstd, cols[ow].gamma, cols[ow].beta, scale);
        }
      }
    });
  }

  /// conv_block's end: the columns, a barrier, the rows.
  template <class Exec>
  FB_HOST_DEVICE void finish(Exec& ex, const conv3d::mma_fp64::block_pos& bp, unsigned char* region,
                             unsigned char* x_area) const {
    setup_columns(ex, region, x_area);
    ex.sync();
    finish_rows(ex, bp, region, x_area);
  }
};

/// One block of the pass, in shared memory `smem` (plan's smem_bytes).
template <class Exec>
FB_HOST_DEVICE void pass_block(Exec& ex, const plan& pl, const args& a, int64_t block, unsigned char* smem) {
  const ln_policy pol{pl, a, pl.last_into_x, false, false};
  conv3d::mma_fp64::conv_block(ex, pl.g, a.x, arranged_weights(a), arranged_koff(pl, a), block, smem, pol);
}

/// The persistent program of the pass (plan::persistent), in shared memory `smem`.
template <class Exec>
FB_HOST_DEVICE void persistent_program(Exec& ex, const plan& pl, const args& a, unsigned char* smem) {
  const ln_policy pol{pl, a, pl.last_into_x, pl.rows_own_warp, true};
  conv3d::mma_fp64::conv_persistent(ex, pl.g, a.x, arranged_weights(a), arranged_koff(pl, a), smem, pol);
}

/// The host executor on a plan (run_host validates the pointers and calls it; tests call it with a
/// plan made with small chunks). Defined in fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale_host.cpp.
void run_host_plan(const plan& pl, const args& a);

}  // namespace fb::fused::convt3d_ln_gelu_scale::detail
