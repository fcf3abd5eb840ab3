// The block executor's contract (fused/exec/block_program.cuh) and the traits that check it and the
// tiles' epilogue policies. The host executor is what makes the CPU tests run a kernel's own block
// program: it must run every thread of a phase, each with its own state kept from phase to phase,
// and every warp with the whole warp and its own state. Its own executable, with headers only, so
// that a mutant of the executor rebuilds this file alone.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "fused/conv3d/mma_fp64_tile.cuh"
#include "fused/conv3d/simt_fp32_tile.cuh"
#include "fused/convt3d_bn_sub/epilogue.cuh"
#include "fused/convt3d_ln_gelu_scale/epilogue.cuh"
#include "fused/exec/block_program.cuh"

namespace {

namespace exec = fb::fused::exec;
namespace mma_tile = fb::fused::conv3d::mma_fp64;
namespace simt_tile = fb::fused::conv3d::simt_fp32;

/// What a thread or warp saw of its own state: how often it ran, and in which phase last.
struct visit_state {
  int visits = 0;
  int last_phase = -1;
};

TEST(BlockExecutor, HostThreadsRunEveryThreadOnceInOrderWithItsOwnState) {
  constexpr int k_threads = 96;
  exec::host_executor<k_threads, visit_state> ex;
  std::set<const visit_state*> states;
  for (int phase = 0; phase < 3; ++phase) {
    std::vector<int> order;
    ex.threads([&](int t, visit_state& st) {
      order.push_back(t);
      EXPECT_EQ(st.visits, phase) << "thread " << t;
      EXPECT_EQ(st.last_phase, phase - 1) << "thread " << t;
      ++st.visits;
      st.last_phase = phase;
      states.insert(&st);
    });
    ex.sync();
    ASSERT_EQ(order.size(), static_cast<std::size_t>(k_threads));
    for (int t = 0; t < k_threads; ++t) EXPECT_EQ(order[static_cast<std::size_t>(t)], t);
  }
  EXPECT_EQ(states.size(), static_cast<std::size_t>(k_threads)) << "every thread has a state of its own";
}

TEST(BlockExecutor, HostThreadsWithoutStateRunEveryThreadOnce) {
  constexpr int k_threads = 40;  // not a whole number of warps: a block without warp-level code
  exec::host_executor<k_threads> ex;
  std::vector<int> runs(k_threads, 0);
  ex.threads([&](int t) { ++runs[static_cast<std::size_t>(t)]; });
  for (int t = 0; t < k_threads; ++t) EXPECT_EQ(runs[static_cast<std::size_t>(t)], 1) << "thread " << t;
}

TEST(BlockExecutor, HostWarpsRunEveryWarpWithTheWholeWarpAndItsOwnState) {
  using warps = exec::warps_of<fb::fused::arch::mma::host_warp, visit_state>;
  exec::host_executor<128, exec::no_state, warps> ex;
  std::set<const visit_state*> states;
  for (int phase = 0; phase < 2; ++phase) {
    std::vector<int> order;
    ex.warps([&](int warp, const fb::fused::arch::mma::host_warp& w, visit_state& st) {
      order.push_back(warp);
      EXPECT_EQ(st.visits, phase) << "warp " << warp;
      ++st.visits;
      states.insert(&st);
      for (int l = 0; l < fb::fused::arch::mma::host_warp::k_lanes; ++l) EXPECT_EQ(w.lane(l), l);
    });
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  }
  EXPECT_EQ(states.size(), 4u) << "every warp has a state of its own";
  EXPECT_EQ(fb::fused::arch::mma::host_warp::k_lanes, 32);
}

// Types the traits must reject: each lacks one part of the contract.
struct without_sync {
  using thread_state = exec::no_state;
  template <class F>
  void threads(F&&) {}
};
struct without_threads {
  using thread_state = exec::no_state;
  void sync() {}
};
struct without_thread_state {
  template <class F>
  void threads(F&&) {}
  void sync() {}
};

TEST(BlockExecutor, TraitsAcceptTheExecutorsAndRejectWhatBreaksTheContract) {
  EXPECT_TRUE((exec::is_block_executor_v<simt_tile::host_exec>));
  EXPECT_TRUE((exec::is_block_executor_v<simt_tile::host_exec, simt_tile::thread_state>));
  EXPECT_TRUE((exec::is_block_executor_v<exec::host_executor<64>, exec::no_state>));
  EXPECT_FALSE((exec::is_block_executor_v<simt_tile::host_exec, exec::no_state>)) << "the wrong thread state";
  EXPECT_FALSE((exec::is_block_executor_v<without_sync>));
  EXPECT_FALSE((exec::is_block_executor_v<without_threads>));
  EXPECT_FALSE((exec::is_block_executor_v<without_thread_state>));
  EXPECT_FALSE((exec::is_block_executor_v<int>));

  EXPECT_TRUE((exec::is_warp_executor_v<mma_tile::mma_host_exec>));
  EXPECT_FALSE((exec::is_warp_executor_v<simt_tile::host_exec>)) << "no warps";
  EXPECT_TRUE((mma_tile::is_mma_executor_v<mma_tile::mma_host_exec>));
  EXPECT_FALSE((mma_tile::is_mma_executor_v<exec::host_executor<128, exec::no_state,
                                                                  exec::warps_of<fb::fused::arch::mma::host_warp, int>>>))
      << "warps without the tile's accumulators";
  EXPECT_TRUE((mma_tile::is_mma_persistent_executor_v<mma_tile::mma_host_tiles_exec>));
  EXPECT_FALSE((mma_tile::is_mma_persistent_executor_v<mma_tile::mma_host_exec>)) << "no tile hooks";
}

// Epilogue policies of the fp64 tensor-core tile: complete, and each missing one part.
struct mma_policy_complete {
  bool last_pass_into_x = false;
  bool rows_own_warp = false;
  template <class W, class State>
  void start_accumulators(const W&, State&, const mma_tile::block_pos&, int, unsigned char*) const {}
  template <class W, class State>
  void store(const W&, const State&, const mma_tile::block_pos&, const mma_tile::pass_pos&, int, unsigned char*,
             unsigned char*) const {}
  template <class Exec>
  void finish(Exec&, const mma_tile::block_pos&, unsigned char*, unsigned char*) const {}
  template <class Exec>
  void setup_columns(Exec&, unsigned char*, unsigned char*) const {}
  template <class Exec>
  void finish_rows(Exec&, const mma_tile::block_pos&, unsigned char*, unsigned char*) const {}
};
struct mma_policy_without_finish {
  bool last_pass_into_x = false;
  template <class W, class State>
  void start_accumulators(const W&, State&, const mma_tile::block_pos&, int, unsigned char*) const {}
  template <class W, class State>
  void store(const W&, const State&, const mma_tile::block_pos&, const mma_tile::pass_pos&, int, unsigned char*,
             unsigned char*) const {}
};
struct mma_policy_with_mutable_store {
  bool last_pass_into_x = false;
  template <class W, class State>
  void start_accumulators(const W&, State&, const mma_tile::block_pos&, int, unsigned char*) const {}
  template <class W, class State>
  void store(const W&, const State&, const mma_tile::block_pos&, const mma_tile::pass_pos&, int, unsigned char*,
             unsigned char*) {}
  template <class Exec>
  void finish(Exec&, const mma_tile::block_pos&, unsigned char*, unsigned char*) const {}
};
struct mma_policy_without_flag {
  template <class W, class State>
  void start_accumulators(const W&, State&, const mma_tile::block_pos&, int, unsigned char*) const {}
  template <class W, class State>
  void store(const W&, const State&, const mma_tile::block_pos&, const mma_tile::pass_pos&, int, unsigned char*,
             unsigned char*) const {}
  template <class Exec>
  void finish(Exec&, const mma_tile::block_pos&, unsigned char*, unsigned char*) const {}
};

struct mma_policy_without_start {
  bool last_pass_into_x = false;
  template <class W, class State>
  void store(const W&, const State&, const mma_tile::block_pos&, const mma_tile::pass_pos&, int, unsigned char*,
             unsigned char*) const {}
  template <class Exec>
  void finish(Exec&, const mma_tile::block_pos&, unsigned char*, unsigned char*) const {}
};

TEST(BlockExecutor, MmaEpiloguePolicyTraitChecksEveryHook) {
  using host = mma_tile::mma_host_exec;
  using tiles = mma_tile::mma_host_tiles_exec;
  using ln_policy = fb::fused::convt3d_ln_gelu_scale::detail::ln_policy;
  EXPECT_TRUE((mma_tile::is_mma_epilogue_policy_v<ln_policy, host>));
  EXPECT_TRUE((mma_tile::is_mma_persistent_policy_v<ln_policy, tiles>));
  EXPECT_TRUE((mma_tile::is_mma_epilogue_policy_v<mma_policy_complete, host>));
  EXPECT_TRUE((mma_tile::is_mma_persistent_policy_v<mma_policy_complete, tiles>));
  EXPECT_FALSE((mma_tile::is_mma_epilogue_policy_v<mma_policy_without_finish, host>));
  EXPECT_FALSE((mma_tile::is_mma_epilogue_policy_v<mma_policy_without_start, host>)) << "no start_accumulators";
  EXPECT_FALSE((mma_tile::is_mma_epilogue_policy_v<mma_policy_with_mutable_store, host>)) << "store on a const policy";
  EXPECT_FALSE((mma_tile::is_mma_epilogue_policy_v<mma_policy_without_flag, host>)) << "no last_pass_into_x";
  EXPECT_FALSE((mma_tile::is_mma_persistent_policy_v<mma_policy_without_flag, tiles>));
  EXPECT_FALSE((mma_tile::is_mma_epilogue_policy_v<mma_policy_complete, simt_tile::host_exec>)) << "no warps";
}

// Epilogue policies of the fp32 CUDA-core tile.
struct simt_policy_complete {
  template <class Exec>
  void prologue(Exec&, const simt_tile::block_pos&, float*) const {}
  void phase_begin(int, const simt_tile::block_pos&, const simt_tile::phase_pos&, float*) const {}
  template <class State>
  void epilogue(int, State&, const simt_tile::block_pos&, const simt_tile::phase_pos&, const simt_tile::thread_outputs&,
                float*) const {}
  template <class Exec>
  void phase_end(Exec&, const simt_tile::block_pos&, const simt_tile::phase_pos&, float*) const {}
  template <class Exec>
  void finish(Exec&, const simt_tile::block_pos&, float*) const {}
};
struct simt_policy_without_phase_end {
  template <class Exec>
  void prologue(Exec&, const simt_tile::block_pos&, float*) const {}
  void phase_begin(int, const simt_tile::block_pos&, const simt_tile::phase_pos&, float*) const {}
  template <class State>
  void epilogue(int, State&, const simt_tile::block_pos&, const simt_tile::phase_pos&, const simt_tile::thread_outputs&,
                float*) const {}
  template <class Exec>
  void finish(Exec&, const simt_tile::block_pos&, float*) const {}
};

TEST(BlockExecutor, SimtEpiloguePolicyTraitChecksEveryHook) {
  using host = simt_tile::host_exec;
  namespace k15 = fb::fused::convt3d_bn_sub::detail;
  EXPECT_TRUE((simt_tile::is_simt_epilogue_policy_v<k15::stats_policy<true>, host>));
  EXPECT_TRUE((simt_tile::is_simt_epilogue_policy_v<k15::write_policy<false>, host>));
  EXPECT_TRUE((simt_tile::is_simt_epilogue_policy_v<simt_policy_complete, host>));
  EXPECT_FALSE((simt_tile::is_simt_epilogue_policy_v<simt_policy_without_phase_end, host>));
  EXPECT_FALSE((simt_tile::is_simt_epilogue_policy_v<simt_policy_complete, without_sync>)) << "not an executor";
}

}  // namespace
