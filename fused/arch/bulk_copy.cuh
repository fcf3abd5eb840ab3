#pragma once
/// Bulk copies from global into shared memory on Hopper (cp.async.bulk, the TMA unit's 1-D form,
/// and its tensor form), completing on one mbarrier: the GPU's stager of block programs that stage
/// runs of consecutive floats (convt3d_bn_sub's rows_band_block; the host executor's stager is a
/// memcpy) or a box of a tensor (conv3d::mma_fp64's conv_persistent). One thread
/// issues the copies, arrives and waits; a __syncthreads() after its wait passes the data on to the
/// block. The barrier is reused item after item: the waiting thread keeps the phase parity. nvcc only.
#if !defined(__CUDACC__)
#error "fused/arch/bulk_copy.cuh is CUDA-only"
#endif
#include <cstdint>

namespace fb::fused::device {

struct bulk_stager {
  std::uint64_t* barrier;  ///< in shared memory
  std::uint32_t parity = 0;

  __device__ std::uint32_t barrier_addr() const {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(barrier));
  }

  /// Once per block, by one thread, before a __syncthreads(): one arrival completes each phase.
  __device__ void init() const {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(barrier_addr()) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }

  /// Copies `floats` floats (a multiple of 4; both addresses 16-byte aligned) and adds their bytes
  /// to the transactions the current phase waits for. Only the arriving thread calls it, before arrive().
  __device__ void copy(float* dst_shared, const float* src_global, int floats) const {
    copy_bytes(dst_shared, src_global, static_cast<std::uint32_t>(floats) * 4u);
  }

  /// Orders the block's earlier accesses of shared memory (made visible to the issuing thread by a
  /// barrier) before the copies it issues next: the copies write through the async proxy.
  __device__ void hand_to_async_proxy() const { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

  /// copy() of `bytes` bytes (a multiple of 16; both addresses 16-byte aligned).
  __device__ void copy_bytes(void* dst_shared, const void* src_global, std::uint32_t bytes) const {
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(barrier_addr()), "r"(bytes)
                 : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            static_cast<std::uint32_t>(__cvta_generic_to_shared(dst_shared))),
        "l"(src_global), "r"(bytes), "r"(barrier_addr())
        : "memory");
  }

  /// One TMA tensor copy of `bytes` (the whole box) from the 5-D tensor `tensor_map` (a CUtensorMap
  /// in parameter or constant memory) at coordinates c0 (innermost) .. c4 into dst_shared (128-byte
  /// aligned), with the phase's one arrival: the phase completes when it and the copies issued
  /// before it have landed. Elements outside the tensor read zero. Only the issuing thread calls
  /// it, after hand_to_async_proxy() where the block used that shared memory before.
  __device__ void tensor_copy_5d(float* dst_shared, const void* tensor_map, int c0, int c1, int c2, int c3, int c4,
                                 std::uint32_t bytes) const {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier_addr()), "r"(bytes)
                 : "memory");
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, "
        "%6}], [%7];" ::"r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(dst_shared))),
        "l"(tensor_map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(barrier_addr())
        : "memory");
  }

  /// The one arrival of the phase: it completes when every copy issued before has landed.
  __device__ void arrive() const {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(barrier_addr()) : "memory");
  }

  /// Returns when the current phase has completed (the copies' data is visible to this thread).
  __device__ void wait() {
    std::uint32_t done = 0;
    do {
      asm volatile(
          "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
          : "=r"(done)
          : "r"(barrier_addr()), "r"(parity)
          : "memory");
    } while (done == 0);
    parity ^= 1u;
  }
};

}  // namespace fb::fused::device
