#pragma once
/// The live progress line on a terminal (bench, verify, a fan-out's children): redrawn in place, and
/// cleared, never left behind, when other output comes or the run ends. Header-only and includes
/// nothing of fusebench's.
#include <string>
#include <string_view>

namespace fb::format {

/// Erases from the cursor to the end of the line (ANSI "EL").
inline constexpr std::string_view erase_to_end_of_line = "\x1b[K";

/// `text` drawn over the live line: back to its start, the text, then what a longer earlier line
/// left behind erased.
[[nodiscard]] inline std::string redrawn_line(std::string_view text) {
  return "\r" + std::string(text) + std::string(erase_to_end_of_line);
}

/// Clears the live line and leaves the cursor at its start, so that what is printed next (a failure,
/// the table) starts on a clean line and no stale progress stays on the screen.
inline constexpr std::string_view cleared_line = "\r\x1b[K";

}  // namespace fb::format
