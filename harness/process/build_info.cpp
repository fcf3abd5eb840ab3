#include "harness/process/build_info.h"

#include <cstdio>

#include <fmt/format.h>

#include "harness/process/command_output.h"

#if FUSEBENCH_BENCH_DEVICE
#include <cuda_runtime_api.h>
#endif
#if __has_include(<torch/version.h>)
#include <torch/version.h>  // only the TORCH_VERSION macros, no torch API
#endif

namespace fb {
namespace {

/// The command's output without its trailing newline, or "" when it cannot run or fails.
std::string run_command(const std::string& command) {
  std::string out = command_output(command).value_or("");
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

/// The commit that measured: asked of git at run time (the binary may be older than the checkout's
/// HEAD only if someone forgot to rebuild, which -dirty does not catch), else the configure-time one.
std::string git_commit() {
#ifdef FUSEBENCH_SOURCE_DIR
  const std::string git = std::string("git -C '") + FUSEBENCH_SOURCE_DIR + "' ";
  // --verify: a repository without commits prints "HEAD" for plain rev-parse HEAD.
  const std::string head = run_command(git + "rev-parse --verify --quiet HEAD 2>/dev/null");
  if (!head.empty())
    return head + (run_command(git + "status --porcelain --untracked-files=no 2>/dev/null").empty() ? "" : "-dirty");
#endif
#ifdef FUSEBENCH_GIT_COMMIT
  if (std::string(FUSEBENCH_GIT_COMMIT).size() > 0) return FUSEBENCH_GIT_COMMIT;
#endif
  return "unknown";
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
      "libtorch:   {} ({})\n"
      "CUDA:       {}\n"
      "build type: {}",
      info.version, info.git_commit, info.libtorch, info.libtorch_cuda ? "with CUDA" : "CPU-only",
      info.cuda_runtime.empty() ? std::string("cpu-only (built without nvcc: no CUDA kernels or timers)")
                                : fmt::format("runtime {} (CUDA kernels and timers built in)", info.cuda_runtime),
      info.build_type.empty() ? std::string("unknown") : info.build_type);
}

}  // namespace fb
