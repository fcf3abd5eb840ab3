// CUDA path of convt2d_mul_gap (KernelBench #44): one memset of the per-sample arrival counters and
// ONE kernel, persistent; a CUDA block works on whole work items (a flat chunk of <= 32768 elements
// of one (b, ci) plane; at the default size one item is one whole 128 x 128 plane).
//
// Why this shape: reading x is the only part that scales with the input; everything after it (tap
// rectangles, the tap GEMM, the mean) is tiny but is a chain of dependent memory round trips. Split
// over three launches (the first version), or finished plane by plane and group by group by single
// warps (the second), those chains cost 15-25 µs at the default size on an H200, more than the
// ~16 µs read itself (measured by omission with `fused_cuda_selftest --bench`). So here:
//   - everything a chunk needs is finished by the block that read it, from L1/L2-hot data: the
//     rectangle sums are linear in x, so an item's R_item[tap] (inclusion-exclusion restricted to
//     the chunk: tap_rect_sum, shared with the host executor) and its contributions
//     sum_tap W[ci, co, tap] R_item[tap] need no plane-level gather;
//   - the item's band-line partials, band x band corners and R live in shared memory (state_of;
//     the corners are loaded beside the band lines), and the tap intervals, which depend only on
//     the geometry, are computed once per block: the steps between the block's barriers then cost
//     shared-memory reads, not L2 round trips or 64-bit divisions;
//   - each block owns a contiguous run of items and streams up to 4 of them back to back before
//     finishing them together, so the finishing steps come once per batch, not once per item;
//   - the only cross-block step is one arrival per item on its sample's counter; the block that
//     completes a sample sums the sample's item rows with all 8 warps (a fixed slice each, then the
//     slices in order) and writes out[b, :] = mult * (bias + sum / (H'W')).
// Loads: 16-byte, coalesced, 16 in flight per lane (warp_lane_range_sum), each warp a fixed slice of
// the chunk. Precision: x elements are converted to fp64 exactly and every sum is fp64, because R is
// formed by cancelling border sums against the chunk total (fp32 partials would leave ~1e-7*|T|).
// Determinism: no float atomics; every partial has one owner and a fixed-shape reduction, and the
// sample sum runs in a fixed order whichever block arrives last, so results are bitwise repeatable
// and independent of the grid size. Memory ordering (as CUTLASS's semaphore): block barrier, then
// one thread's device-scope release fence and relaxed fetch_adds (an acquire fence when a sample
// completes); the finishing block reads other blocks' rows with ld.global.cg (from L2, never a
// possibly stale L1 line). Measured on an H200 at the default size (probes/k44_time, read-flushed
// L2): 27.7 µs, where a plain 16-byte read of x takes 18.8 µs, the same stream with every element
// widened to fp64 too (the conversions are not what limits it), and the memset 1.3 µs.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/warp/warp_reduce.cuh>
#include <cuda/atomic>

#include "fused/arch/warp_sums.cuh"
#include "fused/convt2d_mul_gap/convt2d_mul_gap.h"
#include "fused/convt2d_mul_gap/plan.h"
#include "fused/math/border_sums.cuh"
#include "fused/math/convt_index.cuh"
#include "fused/runtime/cuda_check.h"
#include "fused/runtime/device_info.h"
#include "fused/runtime/plan_util.h"

namespace fb::fused::convt2d_mul_gap {
namespace {

constexpr int k_block = 256;
constexpr int k_warps = k_block / 32;
static_assert(k_warps == detail::k_slices, "the sample sum gives one slice to each warp");
constexpr int k_unroll = 16;  // float4 loads in flight per lane: 8 KB per warp (measured 3% faster than 8)
constexpr int k_co_tile = 4;  // output channels per lane in the sample sum: 4 independent loads per step
constexpr int k_cached_taps = 64;  // tap intervals per dimension kept in shared memory (k <= 64)
constexpr int k_max_batch = 4;     // items a block streams back to back before finishing them
// Band partials + R (+ the band x band corners) of an item go to shared memory up to this size
// (below the 48 KB a kernel may use without opting in); larger ones (huge k, or planes that are all
// border) stay in the workspace, and their corners are read from x when the rectangles are formed.
constexpr std::size_t k_max_line_smem = 32 * 1024;

using warp_reduce = cub::WarpReduce<double>;

/// Reads data other blocks wrote in this kernel: from L2 (ld.global.cg), never a stale L1 line.
struct l2_load {
  __device__ double operator()(const double* p) const { return __ldcg(p); }
};

struct kernel_params {
  const float* x;
  const float* weight;
  const float* conv_bias;
  float* out;
  double* row_part;
  double* col_part;
  double* rect;
  double* contrib;
  unsigned* sample_done;  // [batch], zero on entry
  int64_t plane_size, width, height, h_out, w_out, k, n_taps, stride, padding;
  int64_t chunks_per_plane, n_items, items_per_sample, n_band_rows, n_band_cols, c_in, c_out;
  band_1d band_h, band_w;
  double multiplier, inv_area;
  bool item_state_in_smem;  // band partials and R of the batch's items in dynamic shared memory
  bool corners_in_smem;     // and their band x band corners, gathered beside the band lines
  int64_t slot_doubles;     // dynamic shared memory per batch slot (one item's state)
  int64_t n_corners;        // band x band corners per item: n_band_rows * n_band_cols
  int batch_items;          // items per batch, 1..k_max_batch
};

struct shared_state {
  typename warp_reduce::TempStorage reduce[k_warps];
  double warp_part[k_max_batch][k_warps];      // each warp's share of each batch item's total
  double slice_part[k_warps][32 * k_co_tile];  // the sample sum: one row per slice
  index_interval tap_h[k_cached_taps];          // valid input rows of each tap th (th < k_cached_taps)
  index_interval tap_w[k_cached_taps];          // valid input columns of each tap tw
  int64_t completed[k_max_batch];               // samples this batch completed, in order
  int n_completed;
  int64_t arrival_sample[k_max_batch];          // the batch's arrivals: per sample it touches, in order,
  unsigned arrival_count[k_max_batch];          // the sample and the batch's items of it
  int n_arrivals;
};

/// Where the current item's band-line partials and tap rectangles live: in dynamic shared memory
/// when they fit (the usual case: a few lines and k*k taps), else in the item's workspace rows.
/// Shared memory turns the round trips between the barrier-separated steps into ~30-cycle reads.
struct item_state {
  double* row_part;  // [n_band_rows]
  double* col_part;  // [n_band_cols]
  double* rect;      // [kk]
  double* corner;    // [n_band_rows * n_band_cols] where prm.corners_in_smem, else null (read from x)
};

/// The state of batch slot r (shared memory) or of item `item` (workspace).
__device__ __forceinline__ item_state state_of(const kernel_params& prm, double* dyn, int r, int64_t item) {
  if (prm.item_state_in_smem) {
    double* base = dyn + r * prm.slot_doubles;
    double* rect = base + prm.n_band_rows + prm.n_band_cols;
    return {base, base + prm.n_band_rows, rect, prm.corners_in_smem ? rect + prm.n_taps : nullptr};
  }
  return {prm.row_part + item * prm.n_band_rows, prm.col_part + item * prm.n_band_cols, prm.rect + item * prm.n_taps,
          nullptr};
}

/// Where an item lies: its plane, sample, input channel and flat range. 32-bit divisions
/// (n_items < 2^31, run_cuda checks): 64-bit division is a long instruction sequence.
struct item_place {
  int64_t plane, b, ci;
  index_interval range;
};

__device__ __forceinline__ item_place place_of(const kernel_params& prm, int64_t item) {
  item_place p;
  p.plane = static_cast<int64_t>(static_cast<unsigned>(item) / static_cast<unsigned>(prm.chunks_per_plane));
  p.b = static_cast<int64_t>(static_cast<unsigned>(p.plane) / static_cast<unsigned>(prm.c_in));
  p.ci = p.plane - p.b * prm.c_in;
  p.range = detail::item_range(item - p.plane * prm.chunks_per_plane, prm.plane_size);
  return p;
}

/// Each warp's fixed slice of the item's flat range: k_warps pieces, multiples of 4 floats long, so
/// every piece starts 16-byte aligned whenever the plane does.
__device__ __forceinline__ index_interval warp_piece(index_interval item, int warp) {
  const int64_t piece = ((item.size() + k_warps - 1) / k_warps + 3) & ~int64_t{3};
  const int64_t lo = min_i64(item.hi, item.lo + static_cast<int64_t>(static_cast<unsigned>(warp)) * piece);
  return index_interval{lo, min_i64(item.hi, lo + piece)};
}

/// The band x band corners of the batch's nb items into their slots (prm.corners_in_smem), loaded
/// while the band lines are summed, so that the rectangles need no load of their own. Threads are
/// taken from the last warp down: the band lines go to the first warps.
__device__ void gather_corners(const kernel_params& prm, double* dyn, int64_t first, int nb) {
  const auto corners = static_cast<unsigned>(prm.n_corners);  // fits in a slot
  const auto nbc = static_cast<unsigned>(prm.n_band_cols);
  for (unsigned t = k_block - 1 - threadIdx.x; t < nb * corners; t += k_block) {
    const int r = static_cast<int>(t / corners);
    const unsigned c = t - r * corners;
    const item_place ip = place_of(prm, first + r);
    const int64_t f = prm.band_h.line(c / nbc) * prm.width + prm.band_w.line(c % nbc);
    // Only corners inside the item are ever asked for (tap_rect_sum); the others are left zero.
    state_of(prm, dyn, r, first + r).corner[c] =
        ip.range.contains(f) ? static_cast<double>(__ldg(prm.x + ip.plane * prm.plane_size + f)) : 0.0;
  }
}

/// Sum of the item and its band-line partials (rows, then columns; line l by warp l % k_warps).
__device__ void sum_item(const kernel_params& prm, shared_state& sh, int r, const item_state& st, const float* xp,
                         index_interval range, int warp, int lane) {
  const index_interval mine = warp_piece(range, warp);
  double s = arch::warp_lane_range_sum<k_unroll, true>(xp + mine.lo, mine.size(), lane);
  __syncwarp();  // the reduce storage is reused
  s = warp_reduce(sh.reduce[warp]).Sum(s);
  if (lane == 0) sh.warp_part[r][warp] = s;
  for (int64_t l = static_cast<unsigned>(warp); l < prm.n_band_rows + prm.n_band_cols; l += k_warps) {
    double v = 0.0;
    if (l < prm.n_band_rows) {  // a band row: contiguous, re-read from L1/L2
      const index_interval r = math::row_in_flat_range(prm.band_h.line(l), prm.width, range.lo, range.hi);
      v = arch::warp_lane_range_sum<2, true>(xp + r.lo, r.size(), lane);
    } else {  // a band column: one element per row inside the chunk
      const int64_t j = prm.band_w.line(l - prm.n_band_rows);
      const index_interval rows = math::column_rows_in_flat_range(range.lo, range.hi, j, prm.width, prm.height);
      for (int64_t i = rows.lo + lane; i < rows.hi; i += 32) v += static_cast<double>(__ldg(xp + i * prm.width + j));
    }
    __syncwarp();  // the reduce storage is reused
    v = warp_reduce(sh.reduce[warp]).Sum(v);
    if (lane == 0) {
      if (l < prm.n_band_rows)
        st.row_part[l] = v;
      else
        st.col_part[l - prm.n_band_rows] = v;
    }
  }
}

/// Tap rectangles of batch slot r (threads t of `n_threads` over its taps).
__device__ void item_rects(const kernel_params& prm, const shared_state& sh, int r, const item_state& st,
                           const float* xp, index_interval range, unsigned t, unsigned n_threads) {
  double total = 0.0;
#pragma unroll
  for (int w = 0; w < k_warps; ++w) total += sh.warp_part[r][w];
  const auto k = static_cast<unsigned>(prm.k);  // 4*k*k < 2^31 (run_cuda checks)
  for (unsigned tap = t; tap < static_cast<unsigned>(prm.n_taps); tap += n_threads) {
    const unsigned th = tap / k;
    const unsigned tw = tap - th * k;
    const index_interval ih = th < k_cached_taps ? sh.tap_h[th]
                                                  : convt_tap_interval(prm.height, prm.h_out, prm.stride, prm.padding, th);
    const index_interval iw = tw < k_cached_taps ? sh.tap_w[tw]
                                                  : convt_tap_interval(prm.width, prm.w_out, prm.stride, prm.padding, tw);
    st.rect[tap] = st.corner != nullptr
                       ? math::tap_rect_sum(total, prm.band_h, prm.band_w, ih, iw, st.row_part, st.col_part,
                                            math::corners_gathered{st.corner, prm.n_band_cols}, prm.width, range.lo,
                                            range.hi)
                       : math::tap_rect_sum(total, prm.band_h, prm.band_w, ih, iw, st.row_part, st.col_part,
                                            math::corners_from_plane{xp}, prm.width, range.lo, range.hi);
  }
}

/// out[b, :] from the sample's item rows: warp w sums slice w, then the slices are added in order.
__device__ void finish_sample(const kernel_params& prm, shared_state& sh, int64_t b, int warp, int lane) {
  const double* rows = prm.contrib + b * prm.items_per_sample * prm.c_out;
  for (int64_t co0 = 0; co0 < prm.c_out; co0 += 32 * k_co_tile) {
    const int64_t first = co0 + lane;
    const int n = static_cast<int>(max_i64(0, min_i64(k_co_tile, (prm.c_out - first + 31) / 32)));
    double acc[k_co_tile];
    detail::slice_sums<k_co_tile>(rows, prm.items_per_sample, prm.c_out, first, 32, n, warp, l2_load{}, acc);
#pragma unroll
    for (int j = 0; j < k_co_tile; ++j) sh.slice_part[warp][lane + 32 * j] = acc[j];
    __syncthreads();
    for (int t = threadIdx.x; t < 32 * k_co_tile; t += k_block) {
      const int64_t co = co0 + t;
      if (co >= prm.c_out) continue;
      double sum = 0.0;
#pragma unroll
      for (int w = 0; w < k_warps; ++w) sum += sh.slice_part[w][t];
      prm.out[b * prm.c_out + co] = detail::gap_output(prm.multiplier, __ldg(prm.conv_bias + co), sum, prm.inv_area);
    }
    __syncthreads();  // slice_part is reused by the next tile
  }
}

// Four blocks per SM, so 64 registers, and no value in local memory (ptxas -v: 0 bytes of spills,
// checked by the fused_kernels_keep_no_local_memory test): the stream pushes every cached line out
// of L1 and L2, so a spilled value reloaded after it, at the start of a step, was a round trip to
// DRAM under load. Measured on an H200 (probes/k44_time, same process): 30.8 -> 28.2 us with the
// spills gone.
__global__ void __launch_bounds__(k_block, 4) mul_gap_kernel(const kernel_params prm) {
  __shared__ shared_state sh;
  extern __shared__ double dyn[];  // the batch's item states, when prm.item_state_in_smem
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  // Tap intervals depend only on the geometry: computed once per block, not per item and tap.
  for (int t = threadIdx.x; t < k_cached_taps && t < prm.k; t += k_block) {
    sh.tap_h[t] = convt_tap_interval(prm.height, prm.h_out, prm.stride, prm.padding, t);
    sh.tap_w[t] = convt_tap_interval(prm.width, prm.w_out, prm.stride, prm.padding, t);
  }
  // Block g owns the contiguous run of items [g*n/G, (g+1)*n/G), in batches of up to batch_items:
  // it streams a batch's items back to back, then finishes them together, so the latency-bound
  // finishing steps (barriers, round trips) come once per batch instead of once per item. Which
  // block owns an item changes nothing in the result (the file comment).
  const int64_t run_lo = prm.n_items * blockIdx.x / gridDim.x;
  const int64_t run_hi = prm.n_items * (blockIdx.x + 1) / gridDim.x;
  for (int64_t first = run_lo; first < run_hi; first += prm.batch_items) {
    const int nb = static_cast<int>(min_i64(prm.batch_items, run_hi - first));
    // One arrival per sample the batch touches (its items are consecutive, so samples come in
    // runs), counting that sample's items: listed now (read after the barriers), so that nothing
    // in the batch's last steps needs a value kept in local memory, whose lines the stream and the
    // release fence evict (measured: each such reload cost a round trip to DRAM under the stream).
    if (threadIdx.x == 0) {
      int n_arrivals = 0;
      for (int r = 0; r < nb;) {
        const int64_t b = place_of(prm, first + r).b;
        unsigned count = 0;
        while (r < nb && place_of(prm, first + r).b == b) {
          ++count;
          ++r;
        }
        sh.arrival_sample[n_arrivals] = b;
        sh.arrival_count[n_arrivals++] = count;
      }
      sh.n_arrivals = n_arrivals;
    }
    for (int r = 0; r < nb; ++r) {  // stream
      const item_place p = place_of(prm, first + r);
      sum_item(prm, sh, r, state_of(prm, dyn, r, first + r), prm.x + p.plane * prm.plane_size, p.range, warp, lane);
    }
    if (prm.corners_in_smem) gather_corners(prm, dyn, first, nb);
    __syncthreads();
    // Tap rectangles of every (item, tap) pair of the batch at once.
    for (unsigned pair = threadIdx.x; pair < static_cast<unsigned>(nb * prm.n_taps); pair += k_block) {
      const int r = static_cast<int>(pair / static_cast<unsigned>(prm.n_taps));
      const item_place p = place_of(prm, first + r);
      item_rects(prm, sh, r, state_of(prm, dyn, r, first + r), prm.x + p.plane * prm.plane_size, p.range,
                 pair - static_cast<unsigned>(r * prm.n_taps), static_cast<unsigned>(prm.n_taps));
    }
    __syncthreads();
    // Contributions of every (item, co) pair of the batch.
    for (int64_t pair = threadIdx.x; pair < nb * prm.c_out; pair += k_block) {
      const int r = static_cast<int>(static_cast<unsigned>(pair) / static_cast<unsigned>(prm.c_out));
      const int64_t co = pair - r * prm.c_out;
      const item_place p = place_of(prm, first + r);
      const float* w = prm.weight + (p.ci * prm.c_out + co) * prm.n_taps;  // W[ci, co, :]
      prm.contrib[(first + r) * prm.c_out + co] =
          detail::item_contribution(w, state_of(prm, dyn, r, first + r).rect, prm.n_taps);
    }
    __syncthreads();  // every contribution is written before the arrivals are published
    if (threadIdx.x == 0) {
      // Release fence once, relaxed adds, acquire if a sample is complete.
      cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device);
      int n_completed = 0;
      for (int a = 0; a < sh.n_arrivals; ++a) {
        const int64_t b = sh.arrival_sample[a];
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> done(prm.sample_done[b]);
        const unsigned before = done.fetch_add(sh.arrival_count[a], cuda::memory_order_relaxed);
        if (before + sh.arrival_count[a] == static_cast<unsigned>(prm.items_per_sample)) sh.completed[n_completed++] = b;
      }
      if (n_completed > 0) cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
      sh.n_completed = n_completed;
    }
    __syncthreads();
    for (int c = 0; c < sh.n_completed; ++c) finish_sample(prm, sh, sh.completed[c], warp, lane);
    __syncthreads();  // sh.n_completed and the batch's shared state are reused by the next batch
  }
}

}  // namespace

void run_cuda(const problem& prob, const float* x, const float* weight, const float* conv_bias, float* out,
              void* workspace, stream_t stream) {
  using fb::fused::detail::require_ptr;
  const detail::plan pl = detail::make_plan(prob);
  constexpr const char* m = "convt2d_mul_gap::run_cuda";
  require_ptr(x, m, "x");
  require_ptr(weight, m, "weight");
  require_ptr(conv_bias, m, "conv_bias");
  require_ptr(out, m, "out");
  require_ptr(workspace, m, "workspace");
  // The kernel's 32-bit index math: items and taps must fit.
  fb::fused::detail::require(pl.n_items < (int64_t{1} << 31), m, "batch*in_channels*height*width",
                             "too large (work items must be < 2^31)", pl.n_items);
  fb::fused::detail::require(pl.n_taps * k_max_batch < (int64_t{1} << 31), m, "kernel_size",
                             "too large (4*k*k must be < 2^31)", pl.k);
  double* ws = fb::fused::detail::aligned_workspace(workspace);
  auto* counters = reinterpret_cast<unsigned*>(reinterpret_cast<unsigned char*>(ws) + pl.counters_byte_offset);
  FB_CUDA_CHECK(cudaMemsetAsync(counters, 0, static_cast<std::size_t>(pl.batch) * sizeof(unsigned), stream));

  kernel_params prm{};
  prm.x = x;
  prm.weight = weight;
  prm.conv_bias = conv_bias;
  prm.out = out;
  prm.row_part = ws + pl.off_row_part;
  prm.col_part = ws + pl.off_col_part;
  prm.rect = ws + pl.off_rect;
  prm.contrib = ws + pl.off_contrib;
  prm.sample_done = counters;
  prm.plane_size = pl.plane_size;
  prm.width = pl.width;
  prm.height = pl.height;
  prm.h_out = pl.h_out;
  prm.w_out = pl.w_out;
  prm.k = pl.k;
  prm.n_taps = pl.n_taps;
  prm.stride = pl.stride;
  prm.padding = pl.padding;
  prm.chunks_per_plane = pl.chunks_per_plane;
  prm.n_items = pl.n_items;
  prm.items_per_sample = pl.items_per_sample;
  prm.n_band_rows = pl.n_band_rows;
  prm.n_band_cols = pl.n_band_cols;
  prm.c_in = pl.c_in;
  prm.c_out = pl.c_out;
  prm.band_h = pl.band_h;
  prm.band_w = pl.band_w;
  prm.multiplier = pl.multiplier;
  prm.inv_area = pl.inv_area;
  // A persistent grid: at most the blocks that stay resident at once (a chip property, remembered
  // per device: fused/runtime/device_info.h), so there is no late partial wave. Results do not depend
  // on the grid size (see the file comment).
  const std::size_t state_bytes =
      static_cast<std::size_t>(pl.n_band_rows + pl.n_band_cols + pl.n_taps) * sizeof(double);
  prm.n_corners = pl.n_band_rows * pl.n_band_cols;
  const std::size_t corner_bytes = static_cast<std::size_t>(prm.n_corners) * sizeof(double);
  prm.item_state_in_smem = state_bytes <= k_max_line_smem;
  prm.corners_in_smem = state_bytes + corner_bytes <= k_max_line_smem;
  const std::size_t slot_bytes = state_bytes + (prm.corners_in_smem ? corner_bytes : 0);
  prm.slot_doubles = static_cast<int64_t>(slot_bytes / sizeof(double));
  prm.batch_items = prm.item_state_in_smem
                        ? static_cast<int>(std::min<std::size_t>(k_max_batch, k_max_line_smem / slot_bytes))
                        : k_max_batch;
  const std::size_t dyn_smem = prm.item_state_in_smem ? slot_bytes * static_cast<std::size_t>(prm.batch_items) : 0;
  const int64_t resident =
      fb::fused::resident_blocks(reinterpret_cast<const void*>(mul_gap_kernel), k_block, dyn_smem);
  const auto blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min(pl.n_items, resident)));
  mul_gap_kernel<<<blocks, k_block, dyn_smem, stream>>>(prm);
  FB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace fb::fused::convt2d_mul_gap
