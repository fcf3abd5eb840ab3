#pragma once
/// The fp64 tensor-core tile's epilogue interface: what conv_block (mma_fp64_mainloop.cuh) and
/// conv_persistent (mma_fp64_persistent.cuh) hand the model's epilogue policy and the hooks they
/// call, checked by is_mma_epilogue_policy and is_mma_persistent_policy at their entries (as
/// CUTLASS checks its collective epilogues); and the executors they run on (is_mma_executor).
///
/// A policy P is used as a const object (it holds no per-block state of its own). `region` is its
/// shared memory at g.region_offset (its size the policy's own: make_geometry's
/// region_bytes_per_rows), `x_area` the staged x's memory where a hook may use it:
///   last_pass_into_x   (bool member) the block's last position pass stores into the staged x's
///                      memory: after a barrier no warp reads x any more, so the policy's region
///                      need not hold that pass's accumulators
///   start_accumulators(w, st, bp, warp, region)
///                      per warp, before the first chunk of each position pass: st.acc's starting
///                      values (zero, or a constant per channel that the sum must include before
///                      the store's one rounding, as #34's conv bias)
///   store(w, st, bp, pp, warp, region, x_area)
///                      per warp, after the last chunk of each position pass pp: warp `warp`'s
///                      accumulators st.acc (warp_state<W>: value v of lane slot l in tiles (mt, nt)
///                      is position tile_position and channel tile_channel of the pass) on warp
///                      context w; x_area is null but in the last pass of a last_pass_into_x policy
///   finish(ex, bp, region, x_area)
///                      block-wide, after the last w phase and a barrier (x_area: the staged x's
///                      memory, free by then); ex.threads and ex.sync as it likes
/// conv_persistent, which runs tile after tile in a resident block, calls instead of finish:
///   rows_own_warp      (bool member) every warp finishes only rows it stored itself, so the
///                      point where the rows are whole needs no block barrier (rows_arrive)
///   setup_columns(ex, region, x_area)
///                      once per resident block, before its first tile: what is the same for
///                      every tile (read after the first tile's barrier)
///   finish_rows(ex, bp, region, x_area)
///                      per tile, once its rows are whole (the next tile's inputs arrive meanwhile)
/// with Exec the block executor, bp the tile's block_pos and pp its pass_pos.

#include <type_traits>
#include <utility>

#include "fused/conv3d/mma_fp64_geometry.cuh"
#include "fused/exec/block_program.cuh"

namespace fb::fused::conv3d::mma_fp64 {

/// A w phase's position pass: positions [m0, m0 + n) of the block's (row, w base) pairs of phase rw,
/// position m = row n_qw + (qw - first base).
struct pass_pos {
  int rw;
  int n_qw;     ///< w bases of phase rw
  int qw0;      ///< its first w base
  int m0, n;    ///< the pass's positions
};

/// Where a warp tile's C values go: value v of `lane` in tiles (mt, nt) is the pass's position
/// tile_position and the block's channel tile_channel (outputs only where position < n and channel
/// < n_ch).
FB_HOST_DEVICE int tile_position(int warp_row, int mt, int lane, int v) {
  return warp_row * k_warp_m + mt * arch::mma::k_m + arch::mma::c_row(lane, v);
}
FB_HOST_DEVICE int tile_channel(int warp_col, int nt, int lane, int v) {
  return warp_col * k_warp_n + nt * arch::mma::k_n + arch::mma::c_col(lane, v);
}

/// A warp's accumulators, kept across the chunks of a position pass: [mt][nt][lane slot][value].
template <class W>
struct warp_state {
  double acc[k_mt][k_nt][W::k_lanes][arch::mma::k_c_regs];
};

/// The tile's warps on warp context W (arch::mma::host_warp on the host, arch::mma::device_lane on the GPU),
/// each with its warp_state: the Warps parameter of its executors.
template <class W>
using mma_warps = exec::warps_of<W, warp_state<W>>;

/// True where Exec runs the tile's block programs: a block executor with warps(f) whose warps carry
/// warp_state of their warp context.
template <class Exec, bool kIsWarpExecutor = exec::is_warp_executor_v<Exec>>
struct is_mma_executor : std::false_type {};
template <class Exec>
struct is_mma_executor<Exec, true>
    : std::bool_constant<std::is_same_v<typename Exec::warp_state, warp_state<typename Exec::warp_context>>> {};
template <class Exec>
constexpr bool is_mma_executor_v = is_mma_executor<Exec>::value;

namespace detail {
template <class T>
constexpr bool is_bool_member = std::is_same_v<std::decay_t<T>, bool>;

template <class P, class Exec, class = void>
struct has_mma_epilogue_hooks : std::false_type {};
template <class P, class Exec>
struct has_mma_epilogue_hooks<
    P, Exec,
    std::void_t<std::enable_if_t<is_bool_member<decltype(std::declval<const P&>().last_pass_into_x)>>,
                decltype(std::declval<const P&>().start_accumulators(
                    std::declval<const typename Exec::warp_context&>(), std::declval<typename Exec::warp_state&>(),
                    std::declval<const block_pos&>(), 0, std::declval<unsigned char*>())),
                decltype(std::declval<const P&>().store(
                    std::declval<const typename Exec::warp_context&>(),
                    std::declval<const typename Exec::warp_state&>(),
                    std::declval<const block_pos&>(), std::declval<const pass_pos&>(), 0,
                    std::declval<unsigned char*>(), std::declval<unsigned char*>())),
                decltype(std::declval<const P&>().finish(std::declval<Exec&>(), std::declval<const block_pos&>(),
                                                         std::declval<unsigned char*>(),
                                                         std::declval<unsigned char*>()))>> : std::true_type {};

template <class P, class Exec, class = void>
struct has_mma_persistent_hooks : std::false_type {};
template <class P, class Exec>
struct has_mma_persistent_hooks<
    P, Exec,
    std::void_t<std::enable_if_t<is_bool_member<decltype(std::declval<const P&>().rows_own_warp)>>,
                decltype(std::declval<const P&>().setup_columns(std::declval<Exec&>(), std::declval<unsigned char*>(),
                                                                std::declval<unsigned char*>())),
                decltype(std::declval<const P&>().finish_rows(std::declval<Exec&>(), std::declval<const block_pos&>(),
                                                              std::declval<unsigned char*>(),
                                                              std::declval<unsigned char*>()))>> : std::true_type {};
}  // namespace detail

/// True where P is an epilogue policy of conv_block on executor Exec: last_pass_into_x,
/// start_accumulators, store and finish as above, callable on a const P.
template <class P, class Exec>
struct is_mma_epilogue_policy
    : std::bool_constant<is_mma_executor_v<Exec> && detail::has_mma_epilogue_hooks<P, Exec>::value> {};
template <class P, class Exec>
constexpr bool is_mma_epilogue_policy_v = is_mma_epilogue_policy<P, Exec>::value;

/// True where P is an epilogue policy of conv_persistent on Exec: last_pass_into_x and store, and
/// rows_own_warp, setup_columns and finish_rows.
template <class P, class Exec>
struct is_mma_persistent_policy
    : std::bool_constant<is_mma_executor_v<Exec> && detail::has_mma_epilogue_hooks<P, Exec>::value &&
                         detail::has_mma_persistent_hooks<P, Exec>::value> {};
template <class P, class Exec>
constexpr bool is_mma_persistent_policy_v = is_mma_persistent_policy<P, Exec>::value;

}  // namespace fb::fused::conv3d::mma_fp64
