#pragma once
/// The exit status every subcommand returns (README "The CLI"), and its one-line error report: shared
/// by the CLI and the runs it calls into (harness/verify/, harness/bench/, harness/fan_out/).
#include <fmt/core.h>

#include <cstdio>
#include <string>

namespace fb {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;  ///< a check failed / a regression was found / nothing was judged
inline constexpr int exit_usage = 2;    ///< bad usage, invalid config or bad file

/// Prints "fusebench: error: <what>" on stderr.
inline void print_error(const std::string& what) { fmt::print(stderr, "fusebench: error: {}\n", what); }

}  // namespace fb
