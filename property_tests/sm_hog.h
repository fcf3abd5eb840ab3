#pragma once
/// The stress stage's scheduling perturbation (torch-free, CUDA runtime only): a kernel on its own
/// non-blocking stream whose blocks each hold a whole SM (the largest dynamic shared memory a block
/// may take, so no block that uses shared memory fits beside it) for a set time. Launched just
/// before or just after the kernels under test, it takes a varying number of SMs away from them for
/// a varying time, so their blocks start, wait and finish in different orders from run to run:
/// a result that depends on the order in which blocks arrive (a missing fence, a race between
/// blocks) then changes between runs, where a correct kernel gives the same bits every time.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace fb::stress {

/// One run's perturbation.
struct perturbation {
  bool hog_first = true;  ///< launched before the kernels under test (else right after them)
  int blocks = 0;         ///< SMs held (0: none)
  int microseconds = 0;   ///< for how long
  [[nodiscard]] std::string describe() const;
};

class sm_hog {
 public:
  /// Sets the hog kernel up on the current device. Throws std::runtime_error on a CUDA error.
  sm_hog();
  ~sm_hog();
  sm_hog(const sm_hog&) = delete;
  sm_hog& operator=(const sm_hog&) = delete;

  /// The perturbation of run `run` from `seed`: blocks uniform in [1, SMs], time log-uniform in
  /// [2, 400] us, before or after at even odds.
  [[nodiscard]] perturbation draw(uint64_t seed, int run) const;
  /// Launches p's hog on the hog's own stream (asynchronous; does nothing for 0 blocks).
  void launch(const perturbation& p);
  /// Waits for the hog's stream.
  void wait();
  [[nodiscard]] int sms() const { return m_sms; }

 private:
  cudaStream_t m_stream = nullptr;
  int m_sms = 0;
  std::size_t m_smem = 0;
};

}  // namespace fb::stress
