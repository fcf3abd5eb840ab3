// The SM hog of the stress stage (property_tests/sm_hog.h).
#include "property_tests/sm_hog.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace fb::stress {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("sm_hog: ") + what + ": " + cudaGetErrorString(e));
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread per block: the block's shared memory is what keeps other blocks off its SM. Spins on
// the global timer (sleeping between reads, so it takes no issue slots from anything beside it).
__global__ void hog_kernel(unsigned long long ns, int* sink) {
  extern __shared__ int hold[];
  const unsigned long long t0 = global_ns();
  hold[0] = static_cast<int>(blockIdx.x);
  while (global_ns() - t0 < ns) __nanosleep(2000);
  if (hold[0] < 0) *sink = hold[0];  // never true: keeps the shared memory in use
}

uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::string perturbation::describe() const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "hog %s: %d SMs for %d us", hog_first ? "first" : "after", blocks, microseconds);
  return buf;
}

sm_hog::sm_hog() {
  int dev = 0, optin = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&m_sms, cudaDevAttrMultiProcessorCount, dev), "SM count");
  check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), "shared memory limit");
  m_smem = static_cast<std::size_t>(optin);
  check(cudaFuncSetAttribute(hog_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin), "hog shared memory");
  check(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking), "hog stream");
}

sm_hog::~sm_hog() {
  if (m_stream) {
    cudaStreamSynchronize(m_stream);
    cudaStreamDestroy(m_stream);
  }
}

perturbation sm_hog::draw(uint64_t seed, int run) const {
  const uint64_t a = mix(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(run) + 1);
  const uint64_t b = mix(a + 0x632BE59BD9B4E019ull);
  perturbation p;
  p.hog_first = (a & 1) == 0;
  p.blocks = 1 + static_cast<int>((a >> 1) % static_cast<uint64_t>(m_sms));
  const double u = static_cast<double>(b >> 11) * (1.0 / 9007199254740992.0);
  p.microseconds = static_cast<int>(std::lround(2.0 * std::pow(200.0, u)));  // 2 .. 400 us
  return p;
}

void sm_hog::launch(const perturbation& p) {
  if (p.blocks <= 0) return;
  hog_kernel<<<static_cast<unsigned>(p.blocks), 1, m_smem, m_stream>>>(
      static_cast<unsigned long long>(p.microseconds) * 1000ull, nullptr);
  check(cudaGetLastError(), "hog launch");
}

void sm_hog::wait() { check(cudaStreamSynchronize(m_stream), "hog stream"); }

}  // namespace fb::stress
