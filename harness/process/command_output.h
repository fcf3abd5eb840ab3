#pragma once
/// The standard output of a shell command: build_info asks git for the commit, the history page asks
/// it for the commit graph. Header-only and includes nothing of fusebench's, so both reach it downward.
#include <cstdio>
#include <optional>
#include <string>

namespace fb {

/// The standard output of `command` run by /bin/sh, or nullopt when it cannot start or exits non-zero.
[[nodiscard]] inline std::optional<std::string> command_output(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  char buffer[4096];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, got);
  if (::pclose(pipe) != 0) return std::nullopt;
  return out;
}

}  // namespace fb
