#pragma once
/// The README's fuzz-domain table (README.md, "The fuzz domain") and the table the registry's
/// declarations make of it. generators_test holds the two equal; the sixth model's registry test
/// shows that a model registered without its row makes them differ.
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "harness/model/fuzz_domain.h"
#include "harness/model/model_entry.h"

namespace fb::readme {

/// The table's header, as README.md writes it.
inline const std::string domain_table_header = "| model | KernelBench | domain |\n|---|--:|---|\n";

/// The rows of the fuzz-domain table of the Markdown file at `path`, each with its '\n': the lines
/// after the table's header up to the first line that is no table row. nullopt when the file cannot
/// be read or has no such table.
[[nodiscard]] inline std::optional<std::string> domain_table_rows(const std::string& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::size_t start = text.find(domain_table_header);
  if (start == std::string::npos) return std::nullopt;
  std::string rows;
  for (std::size_t at = start + domain_table_header.size(); at < text.size() && text[at] == '|';) {
    const std::size_t end = text.find('\n', at);
    const std::size_t next = end == std::string::npos ? text.size() : end + 1;
    rows += text.substr(at, next - at);
    at = next;
  }
  return rows;
}

/// The table's rows as `models` declare them, in their order (the registry's), each with its '\n'.
[[nodiscard]] inline std::string declared_domain_table_rows(const std::vector<model_entry>& models) {
  std::string rows;
  for (const model_entry& model : models)
    rows += domain::table_row(model.id, model.kernelbench_id, model.fuzz_domain) + "\n";
  return rows;
}

}  // namespace fb::readme
