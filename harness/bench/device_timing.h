#pragma once
/// CUDA timing building blocks: event timer, L2 flusher, device description and the two roofline
/// calibrations (copy bandwidth, FP32 FMA peak). Host-includable without CUDA headers; the
/// implementation is device_timing.cu, built only when FUSEBENCH_HAVE_CUDA.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fused/runtime/stream.h"

struct CUevent_st;  // cudaEvent_t without including the CUDA runtime

namespace fb::bench {

/// Times work on one stream with a pair of CUDA events (SPEC 3: events on the current stream, then
/// synchronise). Construction and destruction must happen with a current device.
class cuda_timer {
 public:
  /// Creates the two events. Throws std::runtime_error (FB_CUDA_CHECK) on a CUDA error.
  cuda_timer();
  ~cuda_timer();
  cuda_timer(const cuda_timer&) = delete;
  cuda_timer& operator=(const cuda_timer&) = delete;

  /// Records the start event on `stream`.
  void start(fused::stream_t stream);
  /// Records the stop event on `stream`.
  void stop(fused::stream_t stream);
  /// Waits for the stop event; returns the time between the events [seconds].
  [[nodiscard]] double get_elapsed() const;

 private:
  CUevent_st* m_start = nullptr;
  CUevent_st* m_stop = nullptr;
};

/// Reads a device buffer once with 16-byte loads (threads striding over one full wave of blocks, 4
/// loads in flight each): the L2 flush, the read-bandwidth calibration and the self-test's
/// plain-read probe. Keeps its grid size and the kernel's (practically never written) result slot.
class buffer_reader {
 public:
  /// Sizes the grid for the current device. Throws std::runtime_error on a CUDA error.
  buffer_reader();
  ~buffer_reader();
  buffer_reader(const buffer_reader&) = delete;
  buffer_reader& operator=(const buffer_reader&) = delete;

  /// Reads the first bytes / 16 float4 of `p` (16-byte aligned) on `stream`: one kernel.
  void read(const void* p, std::size_t bytes, fused::stream_t stream);

 private:
  float* m_sink = nullptr;  // one float per block; keeps the loads
  int m_blocks = 0;         // one full wave
};

/// Evicts the L2 before a timed repetition, so every repetition reads its inputs from DRAM as in a
/// real pipeline (a warm 50 MB L2 would hide most of a small case's traffic). Allocates a buffer of
/// at least twice the L2 size once, and sets the persisting-L2 limit to 0 so that no access-policy
/// window can keep lines resident across the flush.
///
/// The flush READS the buffer, so it leaves the L2 full of clean lines. Overwriting it instead (a
/// memset, as nvbench and triton's do_bench do) leaves up to an L2 of dirty lines that the timed
/// call then has to write back while it reads its own inputs: DRAM traffic that is not the call's
/// and that no kernel can avoid. Measured on an H200 (fused_cuda_selftest --bench): a plain 16-byte
/// read of a 67 MB tensor took 24.9 µs after a memset flush and 18.7 µs after a read flush; the
/// #42 kernel (1.07 GB) 271 µs and 263 µs. Every implementation is timed the same way.
class l2_flusher {
 public:
  /// Allocates the buffer on the current device. Throws std::runtime_error on a CUDA error.
  l2_flusher();
  ~l2_flusher();
  l2_flusher(const l2_flusher&) = delete;
  l2_flusher& operator=(const l2_flusher&) = delete;

  /// Reads the whole buffer on `stream` (one kernel); call before recording the start event.
  void flush(fused::stream_t stream);
  /// Size of the flush buffer [bytes].
  [[nodiscard]] std::size_t get_buffer_bytes() const { return m_bytes; }

 private:
  void* m_buffer = nullptr;
  std::size_t m_bytes = 0;
  buffer_reader m_reader;
};

/// What the results file records about the device.
struct device_info {
  std::string name;            ///< e.g. "NVIDIA H200"
  int sm_count = 0;            ///< [count]
  std::int64_t l2_bytes = 0;   ///< [bytes]
  std::string driver;          ///< kernel-module version when readable, and the CUDA version the driver supports
  std::string cuda_runtime;    ///< runtime version, e.g. "13.0"
};

/// Describes the current device. Throws std::runtime_error on a CUDA error.
[[nodiscard]] device_info device_description();

/// Device-to-device copy bandwidth: the median of several cudaMemcpyAsync of a buffer of up to 1 GiB
/// (a quarter of free memory at most), counting bytes read plus bytes written [bytes/s].
[[nodiscard]] double measure_copy_bandwidth(fused::stream_t stream = nullptr);

/// Read-only bandwidth: the median of several reads of a buffer of up to 1 GiB (a quarter of free
/// memory at most) with 16-byte loads and one full wave of blocks, for two read patterns (threads
/// striding over the grid; warps reading whole 4 KB pieces, as the fused kernels stream); the
/// faster pattern counts [bytes/s]. On HBM a pure
/// read runs faster than a copy (no read/write turnaround): measured on an H200, 4.17 TB/s copy and
/// a #42 kernel reading 2.15 GB at 4.33 TB/s. A floor from the copy alone would not be a floor.
[[nodiscard]] double measure_read_bandwidth(fused::stream_t stream = nullptr);

/// FP32 peak of the current device: a kernel of many independent FMA chains per thread at full
/// occupancy, its length calibrated to run for about 20 ms; the median of several runs, counting
/// 2 FLOP per FMA [FLOP/s].
[[nodiscard]] double measure_fp32_peak(fused::stream_t stream = nullptr);

/// fp64 MMA peak of the current device: warps of independent mma.sync m16n8k16 f64 chains from
/// registers at full occupancy, calibrated like measure_fp32_peak, 2 FLOP per multiply-add
/// [FLOP/s]. 0 on devices before sm_90 (no such instruction).
[[nodiscard]] double measure_fp64_mma_peak(fused::stream_t stream = nullptr);

}  // namespace fb::bench
