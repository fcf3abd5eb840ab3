#include "harness/results/detail/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/std.h>

namespace fb::detail {
namespace {
[[noreturn]] void throw_io_error(std::string_view what, const std::filesystem::path& path, int err) {
  throw std::runtime_error(fmt::format("cannot {} {}: {}", what, path, std::strerror(err)));
}
}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  std::FILE* file = std::fopen(tmp.c_str(), "wb");
  if (file == nullptr) throw_io_error("create", tmp, errno);
  const bool written = std::fwrite(content.data(), 1, content.size(), file) == content.size();
  // fsync before rename: otherwise a power loss can leave the new name pointing at empty blocks.
  const bool synced = written && std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0;
  const int err = errno;
  const bool closed = std::fclose(file) == 0;
  if (!written || !synced || !closed) {
    std::remove(tmp.c_str());
    throw_io_error("write", tmp, err != 0 ? err : EIO);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_err = errno;
    std::remove(tmp.c_str());
    throw_io_error("replace", path, rename_err);
  }
}

}  // namespace fb::detail
