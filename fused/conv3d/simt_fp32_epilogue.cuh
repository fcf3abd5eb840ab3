#pragma once
/// The fp32 CUDA-core tile loop's epilogue interface: what conv_tile_block (simt_fp32_tile.cuh)
/// keeps per thread and what it asks of the model's epilogue policy, checked by
/// is_simt_epilogue_policy at the block program's entry (as CUTLASS checks its epilogues).
///
/// A policy P is a const object (it holds no per-block state of its own: what it needs comes with
/// the calls, so fewer registers stay live across the tap loops) with five hooks, called in this
/// order per block; `region` is the policy's shared memory, after the convolution's regions:
///   prologue(ex, bp, region)          once, before the block's first barrier (ex.threads and
///                                     ex.sync as it likes)
///   phase_begin(tid, bp, pp, region)  per thread, with the first staging of each phase (before its
///                                     barrier): per-phase tables for the epilogue, double-buffered
///                                     by phase parity (the previous phase's epilogue may still read)
///   epilogue(tid, state, bp, pp, outputs, region)
///                                     per thread after each phase's tap loops: the thread's
///                                     accumulators (state.acc) for the outputs `outputs` stands for
///   phase_end(ex, bp, pp, region)     after each phase's epilogues (may use ex.sync(); the next
///                                     phase's epilogue runs after the next staging barrier)
///   finish(ex, bp, region)            once at the end (may use ex.sync())
/// with Exec the block executor (fused/exec/block_program.cuh), bp the block_pos, pp the
/// phase_pos, state the thread's thread_state and outputs a thread_outputs.

#include <type_traits>
#include <utility>

#include "fused/conv3d/simt_fp32_mainloop.cuh"
#include "fused/conv3d/simt_fp32_outputs.cuh"
#include "fused/exec/block_program.cuh"

namespace fb::fused::conv3d::simt_fp32 {

/// A thread's registers across conv_tile_block's phases (its executors' thread_state): the
/// accumulators and the partial sum of the current channel group (two-level accumulation).
struct thread_state {
  acc_tile acc, part;
};

namespace detail {
template <class P, class Exec, class = void>
struct has_simt_epilogue_hooks : std::false_type {};
template <class P, class Exec>
struct has_simt_epilogue_hooks<
    P, Exec,
    std::void_t<decltype(std::declval<const P&>().prologue(std::declval<Exec&>(), std::declval<const block_pos&>(),
                                                           std::declval<float*>())),
                decltype(std::declval<const P&>().phase_begin(0, std::declval<const block_pos&>(),
                                                              std::declval<const phase_pos&>(),
                                                              std::declval<float*>())),
                decltype(std::declval<const P&>().epilogue(
                    0, std::declval<typename Exec::thread_state&>(), std::declval<const block_pos&>(),
                    std::declval<const phase_pos&>(), std::declval<thread_outputs>(), std::declval<float*>())),
                decltype(std::declval<const P&>().phase_end(std::declval<Exec&>(), std::declval<const block_pos&>(),
                                                            std::declval<const phase_pos&>(), std::declval<float*>())),
                decltype(std::declval<const P&>().finish(std::declval<Exec&>(), std::declval<const block_pos&>(),
                                                         std::declval<float*>()))>> : std::true_type {};
}  // namespace detail

/// True where P is an epilogue policy of conv_tile_block on executor Exec: the five hooks above,
/// callable on a const P.
template <class P, class Exec>
struct is_simt_epilogue_policy
    : std::bool_constant<exec::is_block_executor_v<Exec> && detail::has_simt_epilogue_hooks<P, Exec>::value> {};
template <class P, class Exec>
constexpr bool is_simt_epilogue_policy_v = is_simt_epilogue_policy<P, Exec>::value;

}  // namespace fb::fused::conv3d::simt_fp32
