#pragma once
/// The block executor: the one interface through which a kernel's block program runs, on the GPU
/// as one CUDA block and on the CPU as the host executors' reference, from the same source.
///
/// A block program is a function `program(Exec& ex, ...)` written for one block of a launch. It
/// runs its code in phases between barriers, and every phase goes through the executor:
///
///   ex.threads(f)   runs f for each thread of the block: f(thread index) or, where f takes it,
///                   f(thread index, Exec::thread_state&), that thread's own state, kept from one
///                   phase to the next (on the GPU the thread's registers)
///   ex.sync()       the block barrier: __syncthreads() on the GPU; nothing on the host, where a
///                   phase has run for every thread before the next one starts
///   ex.warps(f)     warp-level code (executors with warps only): f(warp index, const warp
///                   context&, Exec::warp_state&), with the warp context of fused/arch/mma_f64.cuh
///                   (the GPU: this lane; the host: all 32 lanes) and the warp's own state
///
/// A phase's code may depend only on the thread (or warp) index, its own state and shared memory
/// written before the last barrier; then the host, which runs the threads one after another, gets
/// the GPU's bits. So the CPU tests run the kernels' own tiling, indexing, staging and summation
/// orders, and only the scheduling differs.
///
/// The per-thread and per-warp state are template parameters of the two executors (no_state and
/// no_warps where a program has none); a program says what it needs with a static_assert on the
/// traits below at its entry, e.g.
///   static_assert(exec::is_block_executor_v<Exec, x_state>, "x_program: a block executor with x_state");
/// Kernels add hooks of their own by deriving from an executor (the fp64 tensor-core tile's
/// persistent executors, fused/conv3d/mma_fp64_tile.cuh).
///
/// host_executor runs the threads one after another, each with its state kept in an array;
/// device_executor (nvcc only) is the calling thread with its state in registers. Blocks are spread
/// over CPU threads by fused/exec/host_parallel.h.
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "fused/arch/host_device.cuh"

namespace fb::fused::exec {

/// The state of a block program's threads that keep nothing across phases.
struct no_state {};

/// Warp-level code on warp context Context (fused/arch/mma_f64.cuh: mma::host_warp on the host,
/// mma::device_lane on the GPU) with per-warp state State, kept across warps(f) calls.
template <class Context, class State>
struct warps_of {
  using context = Context;
  using state = State;
};
/// A block program without warp-level code: its executor has no warps(f).
using no_warps = warps_of<void, no_state>;

namespace detail {

/// f(t, state) where f takes a thread's state, f(t) otherwise.
template <class F, class State>
constexpr bool takes_thread_state = std::is_invocable_v<F&, int, State&>;

/// What the traits call threads(f) and warps(f) with.
struct thread_probe {
  FB_HOST_DEVICE void operator()(int) const {}
};
struct warp_probe {
  template <class Context, class State>
  FB_HOST_DEVICE void operator()(int, const Context&, State&) const {}
};

template <class E, class = void>
struct has_block_interface : std::false_type {};
template <class E>
struct has_block_interface<E, std::void_t<typename E::thread_state, decltype(std::declval<E&>().sync()),
                                          decltype(std::declval<E&>().threads(thread_probe{}))>> : std::true_type {};

template <class E, class = void>
struct has_warp_interface : std::false_type {};
template <class E>
struct has_warp_interface<E, std::void_t<typename E::warp_context, typename E::warp_state,
                                         decltype(std::declval<E&>().warps(warp_probe{}))>>
    : std::bool_constant<!std::is_void_v<typename E::warp_context>> {};

template <class E, class State, bool kIsExecutor = has_block_interface<E>::value>
struct thread_state_is : std::false_type {};
template <class E, class State>
struct thread_state_is<E, State, true>
    : std::bool_constant<std::is_void_v<State> || std::is_same_v<typename E::thread_state, State>> {};

}  // namespace detail

/// True where E is a block executor (threads(f), sync(), E::thread_state) whose threads carry
/// State (void: any state; a program that never reads its threads' state runs on any executor).
template <class E, class State = void>
struct is_block_executor : detail::thread_state_is<E, State> {};
template <class E, class State = void>
constexpr bool is_block_executor_v = is_block_executor<E, State>::value;

/// True where E is a block executor with warps(f) (E::warp_context, E::warp_state).
template <class E>
struct is_warp_executor : std::bool_constant<is_block_executor<E>::value && detail::has_warp_interface<E>::value> {};
template <class E>
constexpr bool is_warp_executor_v = is_warp_executor<E>::value;

/// The host executor of a block of kThreads threads: threads(f) runs f for thread 0, 1, ... in
/// turn, each with its own ThreadState; warps(f) runs f for warp 0, 1, ... with all 32 lanes
/// (Warps::context default-constructed) and each warp's own state; sync() has nothing to wait for.
/// One executor serves one block after another (fused/exec/host_parallel.h): a program's state
/// lives only from its first phase to its last.
template <int kThreads, class ThreadState = no_state, class Warps = no_warps>
class host_executor {
 public:
  using thread_state = ThreadState;
  using warp_context = typename Warps::context;
  using warp_state = typename Warps::state;
  static constexpr int k_threads = kThreads;
  static constexpr int k_warps = kThreads / 32;
  static_assert(kThreads > 0 && (std::is_void_v<warp_context> || kThreads % 32 == 0),
                "host_executor: a block of whole warps where it has warp-level code");

  template <class F>
  void threads(F&& f) {
    for (int t = 0; t < kThreads; ++t) {
      if constexpr (detail::takes_thread_state<F, ThreadState>)
        f(t, m_thread_states[static_cast<std::size_t>(t)]);
      else
        f(t);
    }
  }
  template <class F>
  void warps(F&& f) {
    static_assert(!std::is_void_v<warp_context>, "host_executor: warps(f) needs a Warps parameter (warps_of)");
    const warp_context w{};
    for (int i = 0; i < k_warps; ++i) f(i, w, m_warp_states[static_cast<std::size_t>(i)]);
  }
  void sync() {}

 private:
  std::vector<ThreadState> m_thread_states = std::vector<ThreadState>(kThreads);
  std::vector<warp_state> m_warp_states = std::vector<warp_state>(std::is_void_v<warp_context> ? 0 : k_warps);
};

#if defined(__CUDACC__)
/// The GPU executor: the calling thread runs its share of each phase with its ThreadState in
/// registers; warps(f) runs this lane's share of its warp's code (Warps::context made from the
/// lane index) with the warp's state in registers; sync() is __syncthreads().
template <class ThreadState = no_state, class Warps = no_warps>
struct device_executor {
  using thread_state = ThreadState;
  using warp_context = typename Warps::context;
  using warp_state = typename Warps::state;

  ThreadState m_thread_state;
  warp_state m_warp_state;

  template <class F>
  __device__ __forceinline__ void threads(F&& f) {
    if constexpr (detail::takes_thread_state<F, ThreadState>)
      f(static_cast<int>(threadIdx.x), m_thread_state);
    else
      f(static_cast<int>(threadIdx.x));
  }
  template <class F>
  __device__ __forceinline__ void warps(F&& f) {
    static_assert(!std::is_void_v<warp_context>, "device_executor: warps(f) needs a Warps parameter (warps_of)");
    const warp_context w{static_cast<int>(threadIdx.x % 32)};
    f(static_cast<int>(threadIdx.x / 32), w, m_warp_state);
  }
  __device__ __forceinline__ void sync() { __syncthreads(); }
};
#endif

}  // namespace fb::fused::exec
