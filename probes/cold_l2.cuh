#pragma once
/// The timing of the standalone probes (probes/*/): a call timed by CUDA events after L2 has been
/// emptied, either by reading a buffer (clean lines, as fusebench's bench flushes) or by a memset
/// (dirty lines, which the timed call then also writes back). Medians are the caller's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fused/runtime/cuda_check.h"

namespace fb::probes {

/// Reads the flush buffer; the sum is stored only if it equals a value a zero buffer never sums to,
/// so that the loads stay.
__global__ void read_flush(const float4* p, int64_t n, float* sink) {
  float acc = 0.0f;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const float4 v = __ldg(p + i);
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1234.5f) *sink = acc;
}

/// A flush buffer of `bytes` (zeroed) and the L2 flushes.
class l2_flush {
 public:
  explicit l2_flush(std::size_t bytes) : bytes_(bytes) {
    FB_CUDA_CHECK(cudaMalloc(&buf_, bytes_));
    FB_CUDA_CHECK(cudaMalloc(&sink_, sizeof(float)));
    FB_CUDA_CHECK(cudaMemset(buf_, 0, bytes_));
  }
  l2_flush(const l2_flush&) = delete;
  l2_flush& operator=(const l2_flush&) = delete;
  ~l2_flush() {
    cudaFree(buf_);
    cudaFree(sink_);
  }
  /// Empties L2 on `s`: by a read (clean) or by a memset of byte `fill` (dirty).
  void run(cudaStream_t s, bool clean, int fill) {
    if (clean)
      read_flush<<<1056, 256, 0, s>>>(reinterpret_cast<const float4*>(buf_), static_cast<int64_t>(bytes_ / 16), sink_);
    else
      FB_CUDA_CHECK(cudaMemsetAsync(buf_, fill & 0xff, bytes_, s));
  }

 private:
  std::size_t bytes_;
  char* buf_ = nullptr;
  float* sink_ = nullptr;
};

/// `call()` twice to warm up, then `reps` times after a flush, each timed by events on `s`; the
/// times in milliseconds, sorted.
template <class Call>
std::vector<float> time_cold_ms(cudaStream_t s, int reps, l2_flush& flush, bool clean, Call&& call) {
  cudaEvent_t e0, e1;
  FB_CUDA_CHECK(cudaEventCreate(&e0));
  FB_CUDA_CHECK(cudaEventCreate(&e1));
  call();
  call();
  FB_CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    flush.run(s, clean, r);
    FB_CUDA_CHECK(cudaEventRecord(e0, s));
    call();
    FB_CUDA_CHECK(cudaEventRecord(e1, s));
    FB_CUDA_CHECK(cudaEventSynchronize(e1));
    float t = 0;
    FB_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  FB_CUDA_CHECK(cudaGetLastError());
  FB_CUDA_CHECK(cudaEventDestroy(e0));
  FB_CUDA_CHECK(cudaEventDestroy(e1));
  std::sort(ms.begin(), ms.end());
  return ms;
}

}  // namespace fb::probes
