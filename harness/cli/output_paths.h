#pragma once
/// Outputs that would destroy inputs or each other (`--json X --junit X`, `compare BASE CUR --out
/// BASE`): found and refused before a command runs or writes anything. Shared by every subcommand.
#include <filesystem>
#include <string>
#include <vector>

namespace fb::cli {

/// A path a command reads or writes, named as the user gave it ("--json", "BASE"). A folder's role
/// covers everything inside it (a repro bundle read, a charts/ folder replaced as a whole).
struct path_role {
  std::string name;              ///< the flag or argument, for the message
  std::filesystem::path path;    ///< as given; "-" (stdout/stdin) and "" never clash
  bool folder = false;           ///< everything under path is this role's
};

/// Throws std::invalid_argument (exit 2, one line) when an output would destroy an input or another
/// output: the same file (after resolving "..", symlinks and hard links), or one inside the other's
/// folder role. Called before anything runs or is written.
void refuse_clashing_paths(const std::vector<path_role>& inputs, const std::vector<path_role>& outputs);

}  // namespace fb::cli
