#pragma once
/// Seeds in JSON files. A seed is 0..2^64-1; jq and JavaScript read JSON numbers as doubles, which
/// round every integer above 2^53, so a replay from a seed read that way would run another case. Seeds
/// are written as decimal strings ("18446744073709551615"), which every reader keeps exact; files
/// written before hold them as numbers, and those are still read. Header-only, torch-free: the verify
/// report, the results file, repro bundles and the CLI's --seed all read seeds by these rules.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace fb {

/// `text` as a seed: decimal digits only (no sign, space, exponent, base prefix), at most 2^64-1;
/// nothing otherwise.
[[nodiscard]] inline std::optional<std::uint64_t> parse_decimal_seed(const std::string& text) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

/// How a seed is written to JSON: its decimal digits as a string.
[[nodiscard]] inline nlohmann::json seed_to_json(std::uint64_t seed) { return std::to_string(seed); }

/// A seed read from JSON: a decimal string (as written now) or a non-negative integer number (files
/// written before); nothing for anything else (a negative or fractional number, other text).
[[nodiscard]] inline std::optional<std::uint64_t> seed_from_json(const nlohmann::json& v) {
  if (v.is_string()) return parse_decimal_seed(v.get<std::string>());
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(v.get<std::int64_t>());
  return std::nullopt;
}

}  // namespace fb
