#pragma once
/// The entry point of the standalone probes (probes/*/): runs a probe's body and turns an exception
/// (a failed CUDA call: FB_CUDA_CHECK, fused/runtime/cuda_check.h, also inside the kernels' run_cuda)
/// into one line on stderr and exit status 1, instead of std::terminate's abort.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <vector>

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

/// The options every timing probe takes: --reps N, --out FILE (its outputs), --compare FILE (another
/// build's outputs). A probe's own options go to `extra(name, value)`, which returns whether it took
/// the pair.
struct timing_options {
  int reps;
  const char* out_path = nullptr;
  const char* compare_path = nullptr;
};

template <class Extra>
timing_options parse_timing_options(int argc, char** argv, int default_reps, Extra&& extra) {
  timing_options o{default_reps};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--reps")) o.reps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--out")) o.out_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--compare")) o.compare_path = argv[i + 1];
    else if (!extra(argv[i], argv[i + 1])) std::fprintf(stderr, "ignored option %s\n", argv[i]);
  }
  return o;
}

inline timing_options parse_timing_options(int argc, char** argv, int default_reps) {
  return parse_timing_options(argc, argv, default_reps, [](const char*, const char*) { return false; });
}

/// How a timing probe compares two builds' outputs: writes `out` to `out_path` (if given) and, given
/// `compare_path` (the file another build wrote), prints "TAG outputs against FILE: D of N differ"
/// (bit for bit) and, where `values` > 0, the largest absolute and relative difference over the
/// first `values` entries (outputs whose summation order changed differ in their last bits).
inline void save_and_compare(const char* tag, const std::vector<float>& out, const char* out_path,
                             const char* compare_path, std::size_t values = 0) {
  if (out_path) {
    FILE* f = std::fopen(out_path, "wb");
    if (f) {
      std::fwrite(out.data(), sizeof(float), out.size(), f);
      std::fclose(f);
    }
  }
  if (!compare_path) return;
  std::vector<float> other(out.size());
  FILE* g = std::fopen(compare_path, "rb");
  const std::size_t got = g ? std::fread(other.data(), sizeof(float), other.size(), g) : 0;
  if (g) std::fclose(g);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < got; ++i) differ += std::memcmp(&out[i], &other[i], sizeof(float)) != 0;
  std::printf("%s outputs against %s: %zu of %zu differ\n", tag, compare_path, differ, got);
  double max_abs = 0.0, max_rel = 0.0;
  for (std::size_t i = 0; i < values && i < got; ++i) {
    const double a = out[i], b = other[i], d = std::fabs(a - b), m = std::max(std::fabs(a), std::fabs(b));
    max_abs = std::max(max_abs, d);
    if (m > 0) max_rel = std::max(max_rel, d / m);
  }
  if (values > 0) std::printf("%s first %zu values: max |diff| %.3g, max relative %.3g\n", tag, values, max_abs, max_rel);
}

}  // namespace fb::probes
