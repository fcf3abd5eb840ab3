#pragma once
/// The fp64 tensor-core convolution's persistent program (conv_persistent): conv_block's tiles,
/// one after another in a resident block, the next tile's inputs fetched during this one's finish;
/// where it serves a geometry (persistent_fits) and the shared memory it adds.

#include <type_traits>
#include <utility>
#include <vector>

#include "fused/conv3d/mma_fp64_mainloop.cuh"

namespace fb::fused::conv3d::mma_fp64 {

namespace detail {
template <class Exec, class = void>
struct has_tile_hooks : std::false_type {};
template <class Exec>
struct has_tile_hooks<
    Exec, std::void_t<decltype(static_cast<int64_t>(std::declval<Exec&>().first_tile())),
                      decltype(std::declval<Exec&>().claim_next_tile(int64_t{0})),
                      decltype(std::declval<Exec&>().publish_claim()), decltype(std::declval<Exec&>().rows_arrive()),
                      decltype(static_cast<int64_t>(std::declval<Exec&>().claimed_tile())),
                      decltype(std::declval<Exec&>().stage_tile(
                          std::declval<const geometry&>(), std::declval<const float*>(), std::declval<const int*>(),
                          std::declval<const block_pos&>(), std::declval<unsigned char*>())),
                      decltype(std::declval<Exec&>().prefetch_tile(
                          std::declval<const geometry&>(), std::declval<const float*>(), std::declval<const int*>(),
                          std::declval<const block_pos&>(), std::declval<unsigned char*>())),
                      decltype(std::declval<Exec&>().commit_tile(
                          std::declval<const geometry&>(), std::declval<const float*>(), std::declval<const int*>(),
                          std::declval<const block_pos&>(), std::declval<unsigned char*>()))>> : std::true_type {};
}  // namespace detail

/// True where Exec runs conv_persistent: a tile executor (is_mma_executor) with the tile hooks
/// (conv_persistent's comment: first_tile, claim_next_tile, publish_claim, rows_arrive,
/// claimed_tile, stage_tile, prefetch_tile, commit_tile).
template <class Exec>
constexpr bool is_mma_persistent_executor_v = is_mma_executor_v<Exec> && detail::has_tile_hooks<Exec>::value;

// ---------------------------------------------------------------------------------------------
// The persistent program: the same tiles, one after another in a block that stays resident.
// ---------------------------------------------------------------------------------------------

/// Where the persistent program serves a plan (persistent_fits), each block runs tile after tile:
/// on the GPU one block per resident slot (three per SM at the default), the first tile its
/// blockIdx.x and each next one from an atomic counter (tiles take different times; a static share
/// ended 0.77 ms apart on an H100), on the host a contiguous range of tiles per program. A tile is
/// conv_block's block, computed by the same code in the same order (the same bits): the w phases'
/// k16 loops (one chunk, one position pass each), the stores, the policy's rows. What changes is
/// what a block does between tiles: the policy's per-column work (pol.setup_columns) is done once,
/// and on the GPU the next tile's inputs in shared memory, its x box (fp32, zeros outside the
/// input: one TMA tensor copy into the part of x's memory the policy's rows leave free) and the
/// koff tables of its phase pair (one bulk copy), are fetched while this tile's rows are finished
/// and the box converted to fp64 after them (mma_persistent_exec); the next tile's number is asked
/// for at the start of this one's k16 loops. A tile's barriers: after its inputs, before the last w
/// phase's stores into x's memory, after the rows are whole, and one in the box's conversion.
/// Measured on an H100 at the default: 3.320 -> 3.189 ms (-3.9%) against the block kernel.
///
/// Executor hooks beyond conv_block's: first_tile(); claim_next_tile(tile), publish_claim() before
/// a barrier and claimed_tile() after it (the block's next tile; >= n_blocks when none);
/// stage_tile (fetch a tile's inputs and convert its box now), prefetch_tile (start fetching them,
/// once nothing reads x's memory or the koff tables), commit_tile (finish, and convert the box once
/// the rows are read).
template <class Exec, class Policy>
FB_HOST_DEVICE void conv_persistent(Exec& ex, const geometry& g, const float* x, const float* wt, const int* koff_tables,
                                    unsigned char* smem, const Policy& pol) {
  static_assert(is_mma_persistent_executor_v<Exec>,
                "conv_persistent needs an executor with the tile's warps and the tile hooks (mma_persistent_exec)");
  static_assert(is_mma_persistent_policy_v<Policy, Exec>,
                "conv_persistent's Policy must be a persistent epilogue policy (mma_fp64_epilogue.cuh)");
  int64_t tile = ex.first_tile();
  if (tile >= g.n_blocks) return;
  int* koff = reinterpret_cast<int*>(smem + g.x_bytes);  // every w phase's table, one after another
  unsigned char* region = smem + g.region_offset;
  const int per_table = g.steps_stride * arch::mma::k_k;
  pol.setup_columns(ex, region, smem);
  block_pos bp = block_of(g, tile);
  ex.stage_tile(g, x, koff_tables, bp, smem);
  for (;;) {
    ex.sync();  // x, the koff tables and the columns in place
    ex.claim_next_tile(tile);  // the GPU's atomic is answered while the k16 loops run
    // Where every warp finishes the rows it stored itself (pol.rows_own_warp), the rows-whole
    // point is no barrier for the warps that do not issue the next tile's copies: they go on to
    // their rows; the claim is published at the barrier before the last w phase's stores.
    const bool own_rows = pol.rows_own_warp && bp.rows > 0;
    if (bp.rows > 0) {
      for (int rw = 0; rw < g.s[2]; ++rw) {
        pass_pos pp;
        pp.rw = rw;
        pp.n_qw = g.order[2].count(rw);
        pp.qw0 = g.order[2].first_base(rw);
        pp.m0 = 0;
        pp.n = bp.rows * pp.n_qw;  // one position pass (persistent_fits)
        start_accumulators(ex, pol, bp, region);
        const step_range steps = live_steps(g, bp, rw, static_cast<int>(g.c_in));
        const float* slot = wt + weight_slot(g, bp.rd, bp.rh, rw, bp.group, 0) * k_step_floats;
        ex.warps([&](int warp, const auto& w, auto& st) {
          warp_chunk(w, st, g, bp, pp, warp, smem, koff + rw * per_table, slot, steps);
        });
        unsigned char* x_area = nullptr;
        if (pol.last_pass_into_x && rw == g.s[2] - 1) {
          if (own_rows) ex.publish_claim();
          ex.sync();  // every warp's k16 loop is done with x
          x_area = smem;
        }
        ex.warps([&](int warp, const auto& w, auto& st) { pol.store(w, st, bp, pp, warp, region, x_area); });
      }
    }
    if (own_rows) {
      ex.rows_arrive();  // the issuing warp waits for every warp's stores; the others go on
    } else {
      ex.publish_claim();
      ex.sync();  // the rows whole; nobody reads the staged x or the koff tables; the next tile known
    }
    const int64_t next = ex.claimed_tile();
    const bool more = next < g.n_blocks;
    block_pos next_bp{};
    if (more) {
      next_bp = block_of(g, next);
      ex.prefetch_tile(g, x, koff_tables, next_bp, smem);
    }
    if (bp.rows > 0) pol.finish_rows(ex, bp, region, smem);
    if (!more) return;
    ex.commit_tile(g, x, koff_tables, next_bp, smem);
    bp = next_bp;
    tile = next;
  }
}

/// The koff tables of tile bp's (d, h) phase pair, every w phase's one after another (one chunk:
/// consecutive in the arranged tables), persistent_koff_bytes of them.
FB_HOST_DEVICE const int* pair_koff_tables(const geometry& g, const int* koff_tables, const block_pos& bp) {
  return koff_tables + koff_slot(g, bp.rd, bp.rh, 0, 0);
}

/// The fp32 box of a tile as the GPU's tensor copy lands it: per (channel, d line, h line) a line
/// of box_width floats starting at w = box_w_start (rounded down to a multiple of 4 floats: a
/// tensor copy's innermost start must be 16-byte aligned, else the copy faults), the box's first
/// column box_w_skip floats in. Lines follow each other; d lines, then channels.
FB_HOST_DEVICE int box_w_start(const geometry& g) {
  const int iw0 = g.qw_min - (g.j0[2] - 1);
  return iw0 >= 0 ? iw0 / 4 * 4 : -((-iw0 + 3) / 4 * 4);
}
FB_HOST_DEVICE int box_w_skip(const geometry& g) { return g.qw_min - (g.j0[2] - 1) - box_w_start(g); }
FB_HOST_DEVICE int box_width(const geometry& g) { return (g.xw + box_w_skip(g) + 3) / 4 * 4; }
FB_HOST_DEVICE std::size_t box_bytes(const geometry& g) {
  return static_cast<std::size_t>(g.c_in) * g.xd * g.xh * box_width(g) * sizeof(float);
}

/// The fp32 box is converted into the fp64 staged x in rounds: per round each warp k_commit_planes
/// planes (channel, d line) and each lane k_commit_elems of a plane's elements, all read before
/// any is written (a barrier between). Rounds go plane groups outer, element groups inner. 16 planes
/// per warp: the default's box (64 planes of 99 values) in one round, 64 floats per thread (the
/// finish's registers are free by then): a tile's barriers 7 -> 5, measured on an H100 against 8
/// planes (two rounds): 3.178 -> 3.158 ms.
constexpr int k_commit_planes = 16;
constexpr int k_commit_elems = 4;

/// Where the fp32 box lies in shared memory: the top of x's memory, 128-byte aligned (the tensor
/// copy's destination), so that it stays clear of the policy's rows at the bottom.
FB_HOST_DEVICE std::size_t box_offset(const geometry& g) {
  const std::size_t b = box_bytes(g);
  return b <= g.x_bytes ? (g.x_bytes - b) / 128 * 128 : 0;
}

/// True where converting the box in place is safe: no round writes an fp64 value over fp32 values
/// a later round still reads (x's fp64 planes grow faster than the box's fp32 lines, both from
/// their starts: checked round by round, the writes so far against the earliest read to come).
inline bool box_converts_in_place(const geometry& g) {
  const int planes = static_cast<int>(g.c_in) * g.xd, plane_elems = g.xh * g.xw;
  const int round_planes = k_warps * k_commit_planes, round_elems = 32 * k_commit_elems;
  const int bw = box_width(g), skip = box_w_skip(g);
  const std::size_t base = box_offset(g);
  auto written_end = [&](int p, int e) {  // one past the last byte of fp64 element e of plane p
    const int ci = p / g.xd, ud = p % g.xd;
    return (static_cast<std::size_t>(ci) * g.x_ci_stride + static_cast<std::size_t>(ud) * plane_elems + e + 1) *
           sizeof(double);
  };
  auto read_start = [&](int p, int e) {  // the first byte of fp32 element e of plane p
    const int uh = e / g.xw, uw = e % g.xw;
    return base + (static_cast<std::size_t>(p) * g.xh * bw + static_cast<std::size_t>(uh) * bw + skip + uw) *
                      sizeof(float);
  };
  std::vector<std::size_t> wrote, reads;  // per round in order: its last write's end, its first read
  for (int p0 = 0; p0 < planes; p0 += round_planes)
    for (int e0 = 0; e0 < plane_elems; e0 += round_elems) {
      wrote.push_back(written_end(imin(p0 + round_planes, planes) - 1, imin(e0 + round_elems, plane_elems) - 1));
      reads.push_back(read_start(p0, e0));
    }
  std::size_t wrote_max = 0, reads_min = static_cast<std::size_t>(-1);
  std::vector<std::size_t> later_min(reads.size() + 1, reads_min);
  for (std::size_t r = reads.size(); r-- > 0;) later_min[r] = reads[r] < later_min[r + 1] ? reads[r] : later_min[r + 1];
  for (std::size_t r = 0; r < wrote.size(); ++r) {
    wrote_max = wrote[r] > wrote_max ? wrote[r] : wrote_max;
    if (wrote_max > later_min[r + 1]) return false;
  }
  return true;
}

/// Whether the persistent program serves a geometry whose policy keeps `rows_bytes` at the start of
/// x's memory during the finish: one chunk of input channels (x staged once per tile), one
/// position pass per w phase, W a multiple of 4 floats (the tensor map's row pitch is a multiple of
/// 16 bytes), box dimensions of at most 256 (the tensor copy's limit), the box clear of the rows and
/// convertible in place. The caller also needs x 16-byte aligned (run time) and the koff tables of
/// every w phase beside x (persistent_koff_bytes).
inline bool persistent_fits(const geometry& g, std::size_t rows_bytes) {
  if (g.n_chunks != 1 || g.dim[2].n_in % 4 != 0) return false;
  const int cap = g.warp_rows * k_warp_m;
  for (int rw = 0; rw < g.s[2]; ++rw)
    if (g.tile_h * g.order[2].count(rw) > cap) return false;
  if (box_width(g) > 256 || g.xh > 256 || g.xd > 256 || g.c_in > 256) return false;
  if (box_bytes(g) > g.x_bytes || box_offset(g) < rows_bytes) return false;
  return box_converts_in_place(g);
}

/// Shared memory of the koff tables of every w phase (the persistent program keeps them all).
FB_HOST_DEVICE std::size_t persistent_koff_bytes(const geometry& g) {
  return static_cast<std::size_t>(g.s[2]) * g.steps_stride * arch::mma::k_k * sizeof(int);
}
/// What the persistent kernel adds to its dynamic shared memory: its static variables (the
/// stager's mbarrier, the claimed tile) and the dynamic area's 128-byte alignment.
constexpr std::size_t k_persistent_static_bytes = 256;

}  // namespace fb::fused::conv3d::mma_fp64
