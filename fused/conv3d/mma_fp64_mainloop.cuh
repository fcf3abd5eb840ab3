#pragma once
/// The fp64 tensor-core convolution's block program (conv_block) and its mainloop: the x box
/// staged as fp64, a warp's accumulators and k16 steps (A from the staged x through the koff
/// tables, B from the arranged weights), position passes and the policy's store and finish.

#include "fused/conv3d/mma_fp64_epilogue.cuh"
#include "fused/conv3d/mma_fp64_geometry.cuh"
#include "fused/exec/block_program.cuh"

namespace fb::fused::conv3d::mma_fp64 {

/// Staging of the x box, per warp and round: k_stage_planes planes (a channel's d line: xh h lines
/// x xw columns, contiguous in shared memory) at once, k_stage_elems of each plane per lane; all
/// their loads are in flight before the first store.
constexpr int k_stage_planes = 4;
constexpr int k_stage_elems = 4;

/// Thread tid's share of staging chunk c of block bp's x box into xs (fp64, zeros outside the
/// input). Warps take the box's planes (channel ci, d line ud) in turn; lanes take the elements of a
/// plane in order (e = lane + 32 k: h line e / xw, column e % xw). An element's offsets, in its
/// input plane and in the box plane, are the same for every plane of the block: worked out once
/// per 128 elements, so a plane costs one address and its loads and stores. Offsets inside a chunk
/// are 32-bit (the plans require a sample's input to have < 2^31 elements); validity is kept as
/// flags, not as null pointers, so the loads and stores are predicated without 64-bit compares.
FB_HOST_DEVICE void stage_x_planes(const geometry& g, const float* x, const block_pos& bp, int c, int tid, double* xs) {
  const int lane = tid % 32, warp = tid / 32;
  const int cc = chunk_channels(g, c);
  const int d_in = static_cast<int>(g.dim[0].n_in), h_in = static_cast<int>(g.dim[1].n_in);
  const int w_in = static_cast<int>(g.dim[2].n_in);
  const int64_t plane_in = static_cast<int64_t>(h_in) * w_in;
  const int id0 = bp.qd - (g.j0[0] - 1), ih0 = bp.qh0 - (g.j0[1] - 1), iw0 = g.qw_min - (g.j0[2] - 1);
  const float* x_chunk = opaque(x + (bp.b * g.c_in + static_cast<int64_t>(c) * g.chunk_ci) * d_in * plane_in);
  const int plane_elems = g.xh * g.xw, planes = cc * g.xd;
  for (int e0 = 0; e0 < plane_elems; e0 += 32 * k_stage_elems) {
    uint32_t src_off[k_stage_elems];  // in the input plane (unsigned: one wide multiply-add per address)
    bool in_input[k_stage_elems];     // inside the input's h and w range (else a zero)
    bool in_plane[k_stage_elems];     // inside the box plane
    FB_UNROLL
    for (int k = 0; k < k_stage_elems; ++k) {
      const int e = e0 + lane + 32 * k;
      const int uh = e / g.xw, uw = e - uh * g.xw;
      const int ih = ih0 + uh, iw = iw0 + uw;
      in_plane[k] = e < plane_elems;
      in_input[k] = in_plane[k] && ih >= 0 && ih < h_in && iw >= 0 && iw < w_in;
      src_off[k] = in_input[k] ? static_cast<uint32_t>(ih * w_in + iw) : 0u;
    }
    // This warp's planes warp, warp + k_warps, ...: (ci, ud) stepped on with carries.
    int ci = 0, ud = warp;
    auto carry = [&] {
      while (ud >= g.xd) {
        ud -= g.xd;
        ++ci;
      }
    };
    carry();
    for (int first = warp; first < planes; first += k_stage_planes * k_warps) {
      uint32_t src[k_stage_planes];  // the plane's first float in x_chunk
      int dst[k_stage_planes];       // this lane's first double of the plane in xs
      bool live[k_stage_planes];     // a plane of the chunk
      bool in_d[k_stage_planes];     // its d line inside the input (else zeros)
      FB_UNROLL
      for (int q = 0; q < k_stage_planes; ++q) {
        if (q > 0) {
          ud += k_warps;
          carry();
        }
        const int id = id0 + ud;
        live[q] = ci < cc;
        in_d[q] = live[q] && id >= 0 && id < d_in;
        src[q] = in_d[q] ? static_cast<uint32_t>((ci * d_in + id) * plane_in) : 0u;
        dst[q] = ci * g.x_ci_stride + ud * plane_elems + e0 + lane;
      }
      ud += k_warps;
      carry();
      float v[k_stage_planes][k_stage_elems];
      FB_UNROLL
      for (int q = 0; q < k_stage_planes; ++q)
        FB_UNROLL
        for (int k = 0; k < k_stage_elems; ++k)
          v[q][k] = in_d[q] && in_input[k] ? load_ro(x_chunk + (src[q] + src_off[k])) : 0.0f;
      FB_UNROLL
      for (int q = 0; q < k_stage_planes; ++q)
        FB_UNROLL
        for (int k = 0; k < k_stage_elems; ++k)
          if (live[q] && in_plane[k]) xs[dst[q] + 32 * k] = static_cast<double>(v[q][k]);
    }
  }
}

/// Four fp32 values, the unit of the arranged weights (one 16-byte load on the GPU).
struct f4 {
  float v[4];
};
FB_HOST_DEVICE f4 load_f4(const float* p) {
  f4 r;
  load_ro4(p, r.v);
  return r;
}

/// Byte offsets in the staged x of the A rows a lane holds (fragment rows g and g + 8 of each m
/// tile: values 0 and 1 of a_row), for the positions of pass pp; positions past the pass read
/// position 0's column (their results are never stored).
template <class W>
FB_HOST_DEVICE void a_row_offsets(const W& w, const geometry& g, const pass_pos& pp, int first,
                                  int (&off)[k_mt][W::k_lanes][2]) {
  FB_UNROLL
  for (int mt = 0; mt < k_mt; ++mt)
    for (int l = 0; l < W::k_lanes; ++l)
      FB_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int m = first + mt * arch::mma::k_m + arch::mma::a_row(w.lane(l), h);
        const int pos = pp.m0 + m;
        const int row = m < pp.n ? pos / pp.n_qw : 0, col = m < pp.n ? pos % pp.n_qw : 0;
        off[mt][l][h] = (row * g.xw + (pp.qw0 - g.qw_min) + col) * static_cast<int>(sizeof(double));
      }
}

/// The fp64 at byte `offset` of shared memory block `base` (the staged x). On the GPU one shared
/// load from a 32-bit address, base's shared address + offset: one add per load (the compiler
/// otherwise rebuilds the address from an element index, a multiply-add and an add per load).
FB_HOST_DEVICE double load_staged(const unsigned char* base, int offset) {
#if defined(__CUDA_ARCH__)
  double v;
  const auto addr = static_cast<uint32_t>(__cvta_generic_to_shared(base)) + static_cast<uint32_t>(offset);
  asm volatile("ld.shared.f64 %0, [%1];" : "=d"(v) : "r"(addr));
  return v;
#else
  return *reinterpret_cast<const double*>(base + offset);
#endif
}

/// A lane's operands of one k16 step before the MMAs: A from the staged x (fp64), B as loaded
/// (fp32, converted when used).
template <class W>
struct a_operands {
  double a[k_mt][W::k_lanes][arch::mma::k_a_regs];
};
template <class W>
struct b_operands {
  f4 b[k_nt][W::k_lanes];
};

/// Loads step `step`'s A: per lane one 16-byte load of its 4 koffs (k columns t, t + 4, t + 8,
/// t + 12), then 16 fp64 loads at row offset + koff.
template <class W>
FB_HOST_DEVICE void load_a(const W& w, a_operands<W>& o, const unsigned char* xs, const int* koff, int step,
                           const int (&a_off)[k_mt][W::k_lanes][2]) {
  for (int l = 0; l < W::k_lanes; ++l) {
    int ko[4];
    load_i4(koff + step * arch::mma::k_k + (w.lane(l) % 4) * 4, ko);
    FB_UNROLL
    for (int j = 0; j < 4; ++j)
      FB_UNROLL
      for (int mt = 0; mt < k_mt; ++mt)
        FB_UNROLL
        for (int h = 0; h < 2; ++h)
          o.a[mt][l][2 * j + h] = load_staged(xs, a_off[mt][l][h] + ko[j]);
  }
}

/// Loads a step's B: 4 16-byte loads from `b_step` (the step's arranged weights of the warp's
/// channels).
template <class W>
FB_HOST_DEVICE void load_b(const W& w, b_operands<W>& o, const float* b_step) {
  for (int l = 0; l < W::k_lanes; ++l)
    FB_UNROLL
    for (int nt = 0; nt < k_nt; ++nt) o.b[nt][l] = load_f4(b_step + (nt * 32 + w.lane(l)) * arch::mma::k_b_regs);
}

/// The step's 8 MMAs (B converted to fp64 here: exact).
template <class W>
FB_HOST_DEVICE void mma_step(const W& w, warp_state<W>& st, const a_operands<W>& oa, const b_operands<W>& ob) {
  double b[k_nt][W::k_lanes][arch::mma::k_b_regs];
  FB_UNROLL
  for (int nt = 0; nt < k_nt; ++nt)
    for (int l = 0; l < W::k_lanes; ++l)
      FB_UNROLL
      for (int v = 0; v < arch::mma::k_b_regs; ++v) b[nt][l][v] = static_cast<double>(ob.b[nt][l].v[v]);
  FB_UNROLL
  for (int mt = 0; mt < k_mt; ++mt)
    FB_UNROLL
    for (int nt = 0; nt < k_nt; ++nt) w.mma(st.acc[mt][nt], oa.a[mt], b[nt]);
}

/// One warp's share of one chunk: its 32 x 32 tile of the pass's positions x the block's channels,
/// the chunk's live steps of K (live_steps), each step loading its own operands. Every n8 tile of the warp
/// runs: the arranged weights are zero past C_out, so no MMA is predicated. Warps whose tile holds
/// no position or channel do nothing.
///
/// Not pipelined in the warp: with three blocks per SM (168 registers) the other warps of the
/// scheduler hide the loads' latency. Measured on an H100 at the default: B loaded one step ahead
/// 3.487 ms, this loop 3.485 ms; A and B one step ahead (two operand sets) spill in the loop at
/// 168 registers (not timed there).
template <class W>
FB_HOST_DEVICE void warp_chunk(const W& w, warp_state<W>& st, const geometry& g, const block_pos& bp, const pass_pos& pp,
                               int warp, const unsigned char* xs, const int* koff, const float* wt_slot,
                               step_range steps) {
  const int warp_row = warp / g.warp_cols, warp_col = warp % g.warp_cols;
  const int first = warp_row * k_warp_m;
  if (first >= pp.n || warp_col * k_warp_n >= bp.n_ch || steps.end <= steps.begin) return;
  int a_off[k_mt][W::k_lanes][2];
  a_row_offsets(w, g, pp, first, a_off);
  const float* b_step = wt_slot + steps.begin * k_step_floats + warp_col * k_nt * 32 * arch::mma::k_b_regs;
  a_operands<W> oa;
  b_operands<W> ob;
  for (int step = steps.begin; step < steps.end; ++step, b_step += k_step_floats) {
    load_b(w, ob, b_step);
    load_a(w, oa, xs, koff, step, a_off);
    mma_step(w, st, oa, ob);
  }
}

/// Every warp's accumulators to their starting values (a position pass's start): the policy's
/// start_accumulators.
template <class Exec, class Policy>
FB_HOST_DEVICE void start_accumulators(Exec& ex, const Policy& pol, const block_pos& bp, unsigned char* region) {
  ex.warps([&](int warp, const auto& w, auto& st) { pol.start_accumulators(w, st, bp, warp, region); });
}

/// One block of the convolution with epilogue policy `pol` (fused/conv3d/mma_fp64_epilogue.cuh).
/// Shared memory `smem`: staged x (fp64), the koff table (int), then the policy's region at
/// g.region_offset.
template <class Exec, class Policy>
FB_HOST_DEVICE void conv_block(Exec& ex, const geometry& g, const float* x, const float* wt, const int* koff_tables,
                               int64_t block, unsigned char* smem, const Policy& pol) {
  static_assert(is_mma_executor_v<Exec>, "conv_block needs a block executor with the tile's warps (mma_warps)");
  static_assert(is_mma_epilogue_policy_v<Policy, Exec>,
                "conv_block's Policy must be an epilogue policy (fused/conv3d/mma_fp64_epilogue.cuh)");
  const block_pos bp = block_of(g, block);
  if (bp.rows == 0) return;
  double* xs = reinterpret_cast<double*>(smem);
  int* koff = reinterpret_cast<int*>(smem + g.x_bytes);
  unsigned char* region = smem + g.region_offset;
  const int cap = g.warp_rows * k_warp_m;  // positions of one pass
  bool first_use = true;
  bool staged_all = false;  // every channel staged (one chunk): staged once for the block
  for (int rw = 0; rw < g.s[2]; ++rw) {
    pass_pos pp;
    pp.rw = rw;
    pp.n_qw = g.order[2].count(rw);
    pp.qw0 = g.order[2].first_base(rw);
    const int positions = bp.rows * pp.n_qw;
    for (pp.m0 = 0; pp.m0 < positions; pp.m0 += cap) {
      pp.n = imin(cap, positions - pp.m0);
      start_accumulators(ex, pol, bp, region);
      for (int c = 0; c < g.n_chunks; ++c) {
        if (!first_use) ex.sync();  // the previous chunk's x and koff are no longer read
        first_use = false;
        if (!staged_all) {
          ex.threads([&](int tid) { stage_x_planes(g, x, bp, c, tid, xs); });
          staged_all = g.n_chunks == 1;
        }
        const int cc = chunk_channels(g, c);
        const int steps = steps_of(g, bp.rd, bp.rh, rw, cc);
        const step_range live = live_steps(g, bp, rw, cc);
        // The table depends on (rw, chunk) only: a later pass of the same w phase and one chunk
        // reuses it.
        if (g.n_chunks > 1 || pp.m0 == 0)
          ex.threads([&](int tid) {
            const int* table = koff_tables + koff_slot(g, bp.rd, bp.rh, rw, c);
            for (int k = tid; k < steps * arch::mma::k_k; k += k_threads) koff[k] = load_ro(table + k);
          });
        ex.sync();
        const float* slot = wt + weight_slot(g, bp.rd, bp.rh, rw, bp.group, c) * k_step_floats;
        ex.warps([&](int warp, const auto& w, auto& st) { warp_chunk(w, st, g, bp, pp, warp, smem, koff, slot, live); });
      }
      unsigned char* x_area = nullptr;  // the staged x's memory, free in the block's last pass
      if (pol.last_pass_into_x && rw == g.s[2] - 1 && pp.m0 + cap >= positions) {
        ex.sync();  // every warp's k16 loop is done with x
        x_area = smem;
      }
      ex.warps([&](int warp, const auto& w, auto& st) { pol.store(w, st, bp, pp, warp, region, x_area); });
    }
  }
  ex.sync();
  pol.finish(ex, bp, region, smem);
}

}  // namespace fb::fused::conv3d::mma_fp64
