#pragma once
/// The entry point of the standalone probes (probes/*/): runs a probe's body and turns an exception
/// (a failed CUDA call: FB_CUDA_CHECK, fused/runtime/cuda_check.h, also inside the kernels' run_cuda)
/// into one line on stderr and exit status 1, instead of std::terminate's abort.
#include <cstdio>
#include <exception>

namespace fb::probes {

template <class Body>
int run_probe(const char* name, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 1;
  }
}

}  // namespace fb::probes
