#include <fmt/core.h>

#include "harness/cli/commands.h"

namespace fb::cli {
void print_error(const std::string& what) { fmt::print(stderr, "fusebench: error: {}\n", what); }
}  // namespace fb::cli
