#pragma once
/// Programmatic dependent launch (Hopper): a kernel launched with launch_dependent (device_exec.cuh)
/// may start while the kernel before it on the stream still runs, once every block of that kernel
/// has called allow_dependent_launch() or exited. It must call wait_for_preceding_launch() before it
/// reads anything that kernel writes. What earlier kernels wrote is complete and visible at its
/// start only if the preceding kernel was not itself allowed to start early, or allows its
/// dependents only after its own wait (measured: otherwise #15's pass 1 read prep's x - c before
/// prep had finished). A dependent's waiting blocks hold their SM's resources: allow dependents only
/// near the end of a long kernel, or not at all (NOTES.md 2026-11-25). Host executors run launches
/// in order: both calls do nothing there.
#include "fused/arch/host_device.cuh"

namespace fb::fused::arch {

/// Blocks until the preceding kernel on the stream has completed and its writes are visible (at
/// once when this kernel was not launched as a dependent).
FB_HOST_DEVICE void wait_for_preceding_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Lets the kernel after this one on the stream (if launched as a dependent) start its blocks.
FB_HOST_DEVICE void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

}  // namespace fb::fused::arch
