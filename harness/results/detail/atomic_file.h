#pragma once
/// Crash-safe whole-file replacement, shared by the results and Google Benchmark writers.
#include <filesystem>
#include <string_view>

namespace fb::detail {

/// Writes `content` to `path.tmp`, flushes it to disk, then rename()s it over `path`. rename() is
/// atomic on POSIX, so a reader (or a run killed at any instant) sees the old or the new file, never
/// a torn one. Throws std::runtime_error naming the file and the errno text on failure.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace fb::detail
