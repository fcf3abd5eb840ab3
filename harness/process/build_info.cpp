#include "harness/process/build_info.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "harness/process/provenance.h"

#if FUSEBENCH_BENCH_DEVICE
#include <cuda_runtime_api.h>
#endif
#if __has_include(<torch/version.h>)
#include <torch/version.h>  // only the TORCH_VERSION macros, no torch API
#endif

namespace fb {
namespace {

/// The commit of the project's own top level, asked of git at run time: "-dirty" when this build's
/// source digest is not that of the commit's tree (the sources built are not the commit's, or the
/// binary is older than the checkout); "unknown" when the project is no git checkout. Never the commit
/// of an enclosing repository (a copy of the tree without its .git inside another checkout), and never
/// a configure-time commit: a build configured once and rebuilt after commits would name the old one.
/// FUSEBENCH_SOURCE_COMMIT (the GPU gate's FUSEBENCH_GATE_COMMIT) names the commit where the tree's
/// .git cannot (a copy whose .git lags): checked the same way when the repository holds it, else
/// recorded as given, for history and compare to check against the digest at home.
std::string git_commit() {
  const char* claimed = std::getenv("FUSEBENCH_SOURCE_COMMIT");
#ifdef FUSEBENCH_SOURCE_DIR
  const std::filesystem::path top = own_git_toplevel(FUSEBENCH_SOURCE_DIR);
  std::optional<source_repository> repository;
  if (!top.empty()) repository.emplace(top);
  std::optional<std::string> commit;
  if (claimed != nullptr && *claimed != '\0') {
    commit = repository ? repository->resolve(claimed) : std::nullopt;
    if (!commit) return claimed;
  } else if (repository) {
    // --verify: a repository without commits prints "HEAD" for plain rev-parse HEAD.
    commit = repository->resolve_head();
  }
  if (!commit) return "unknown";
  return *commit + (repository->digest_of(*commit) == built_source_digest() ? "" : "-dirty");
#else
  return claimed != nullptr && *claimed != '\0' ? claimed : "unknown";
#endif
}

std::string libtorch_version() {
#if defined(TORCH_VERSION)
  return TORCH_VERSION;
#elif defined(FUSEBENCH_LIBTORCH_VERSION)
  return FUSEBENCH_LIBTORCH_VERSION;
#else
  return "unknown";
#endif
}

/// The runtime linked into this binary; asking it needs no GPU.
std::string cuda_runtime_version() {
#if FUSEBENCH_BENCH_DEVICE
  int version = 0;
  if (cudaRuntimeGetVersion(&version) == cudaSuccess && version > 0)
    return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
  return "unknown";
#else
  return {};
#endif
}

}  // namespace

build_info describe_build() {
  build_info info;
#ifdef FUSEBENCH_VERSION
  info.version = FUSEBENCH_VERSION;
#else
  info.version = "unknown";
#endif
  info.git_commit = git_commit();
  info.source_digest = built_source_digest();
  info.libtorch = libtorch_version();
#if FUSEBENCH_TORCH_CUDA
  info.libtorch_cuda = true;
#endif
  info.cuda_runtime = cuda_runtime_version();
#ifdef FUSEBENCH_BUILD_TYPE
  info.build_type = FUSEBENCH_BUILD_TYPE;
#endif
  return info;
}

std::string version_text(const build_info& info) {
  return fmt::format(
      "fusebench {}\n"
      "git commit: {}\n"
      "sources:    sha256 {} (cmake/source_digest.cmake)\n"
      "libtorch:   {} ({})\n"
      "CUDA:       {}\n"
      "build type: {}",
      info.version, info.git_commit, info.source_digest, info.libtorch, info.libtorch_cuda ? "with CUDA" : "CPU-only",
      info.cuda_runtime.empty() ? std::string("cpu-only (built without nvcc: no CUDA kernels or timers)")
                                : fmt::format("runtime {} (CUDA kernels and timers built in)", info.cuda_runtime),
      info.build_type.empty() ? std::string("unknown") : info.build_type);
}

}  // namespace fb
