#pragma once
/// What built this fusebench: `fusebench --version` prints it, and the results file's environment
/// records the same commit, source digest and libtorch version.
#include <string>

namespace fb {

/// The build and the libraries it runs with.
struct build_info {
  std::string version;       ///< project version from CMake, e.g. "0.1.0"
  /// HEAD of the project's own git checkout, "-dirty" when the built sources are not HEAD's (their
  /// digest differs from that of HEAD's tree); "unknown" when the project is no git checkout
  std::string git_commit;
  std::string source_digest;  ///< SHA-256 over the built source files (cmake/source_digest.cmake)
  std::string libtorch;      ///< libtorch version, e.g. "2.11.0"
  bool libtorch_cuda = false;  ///< libtorch was built with CUDA
  std::string cuda_runtime;  ///< CUDA runtime the kernels and timers link, e.g. "13.0"; empty without nvcc
  std::string build_type;    ///< CMAKE_BUILD_TYPE, e.g. "Release"
};

/// Describes this build. Asks git at run time for the commit (the binary may be older than the checkout).
[[nodiscard]] build_info describe_build();

/// Lines of `fusebench --version`: "fusebench 0.1.0", the commit, libtorch, and the CUDA runtime or "cpu-only".
[[nodiscard]] std::string version_text(const build_info& info);

}  // namespace fb
