#pragma once
/// Removes a folder and everything in it (best effort), through POSIX nftw rather than
/// std::filesystem::remove_all. Why: the pip libtorch 2.11 on the GPU host ships a libtorch.so that
/// exports its own std::filesystem::remove_all (a devtoolset build's copy), and the dynamic linker
/// binds fusebench's calls to that copy, which jumped to address 0: the `verify --devices` parent
/// died of SIGSEGV there, after its shards had finished and before it printed its table (H100,
/// 2026-11-23 twice, found 2026-11-25 from the crash handler's "called from" line). Debian's
/// libtorch 1.13 exports no such symbol, so the CPU never saw it.
#include <ftw.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

namespace fb::detail {

/// True when the folder (or file) at root is gone afterwards; false when something could not be
/// removed or root did not exist.
inline bool remove_tree(const std::filesystem::path& root) {
  // Children before their folder (FTW_DEPTH); symbolic links removed, not followed (FTW_PHYS).
  const auto remove_one = [](const char* path, const struct stat*, int, struct FTW*) -> int {
    return std::remove(path) == 0 ? 0 : -1;
  };
  return ::nftw(root.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0;
}

}  // namespace fb::detail
