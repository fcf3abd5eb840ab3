#include "harness/cli/output_paths.h"

#include <fmt/format.h>

#include <stdexcept>
#include <system_error>

namespace fb::cli {
namespace {

namespace fs = std::filesystem;

/// `path` made absolute with "..", "." and the symlinks of its existing part resolved.
fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  return ec ? fs::absolute(path, ec).lexically_normal() : p;
}

/// True when `inner` is `outer` or lies below it (both resolved).
bool is_within(const fs::path& inner, const fs::path& outer) {
  const fs::path rel = inner.lexically_relative(outer);
  return !rel.empty() && *rel.begin() != "..";
}

/// The same file: equal resolved paths, or (both existing) one inode under two names.
bool same_file(const fs::path& a, const fs::path& b) {
  if (resolved(a) == resolved(b)) return true;
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

/// How `output` destroys `other`, or "" when it does not.
std::string clash(const path_role& output, const path_role& other) {
  if (output.path == "-" || other.path == "-" || output.path.empty() || other.path.empty()) return {};
  const fs::path out = resolved(output.path), theirs = resolved(other.path);
  if (same_file(output.path, other.path)) return "is the same file as";
  if (other.folder && is_within(out, theirs)) return "lies inside";
  if (output.folder && is_within(theirs, out)) return "would replace a folder holding";
  return {};
}

}  // namespace

void refuse_clashing_paths(const std::vector<path_role>& inputs, const std::vector<path_role>& outputs) {
  const auto refuse = [](const path_role& output, const std::string& how, const path_role& other, const char* kind) {
    throw std::invalid_argument(fmt::format("{} {} {} {} {} {}: it would be overwritten; choose another path",
                                            output.name, output.path.string(), how, kind, other.name,
                                            other.path.string()));
  };
  // "-" is stdout: one output at most can have it, or their texts would run together.
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (outputs[i].path == "-" && outputs[j].path == "-")
        throw std::invalid_argument(fmt::format("{} - and {} -: only one output can go to stdout ('-')",
                                                outputs[i].name, outputs[j].name));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (const path_role& input : inputs)
      if (const std::string how = clash(outputs[i], input); !how.empty()) refuse(outputs[i], how, input, "the input");
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (const std::string how = clash(outputs[i], outputs[j]); !how.empty())
        refuse(outputs[i], how, outputs[j], "the output");
  }
}

}  // namespace fb::cli
