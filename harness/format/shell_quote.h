#pragma once
/// Words of the command lines fusebench prints for a person to paste (repro and replay lines): a
/// path with a space or a quote must reach the shell as one word. Header-only and includes nothing
/// of fusebench's.
#include <string>
#include <string_view>

namespace fb::format {

/// `word` as one POSIX shell word: unchanged when it holds only characters no shell treats
/// specially (letters, digits and _ @ % + = : , . / -), else in single quotes, each ' written '\''.
[[nodiscard]] inline std::string shell_quoted(std::string_view word) {
  const auto plain = [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           std::string_view("_@%+=:,./-").find(ch) != std::string_view::npos;
  };
  bool safe = !word.empty();
  for (const char ch : word) safe = safe && plain(ch);
  if (safe) return std::string(word);
  std::string out = "'";
  for (const char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace fb::format
