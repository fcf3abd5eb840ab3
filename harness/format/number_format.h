#pragma once
/// Human-readable numbers shared by the Markdown table, the compare table and the charts: below both
/// the printers and report/, so neither reaches up into the other.
#include <optional>
#include <string>
#include <string_view>

#include "harness/stats/ratio_interval.h"

namespace fb::format {

/// Placeholder for a value that does not exist (reference-only model, failing case, ...).
inline constexpr std::string_view none = "—";

/// A time unit picked for a value, so that a median and its p10–p90 share one unit.
struct time_unit {
  double per_second;    ///< units in one second
  std::string_view suffix;  ///< "ns", "us", "ms" or "s"
  int decimals;             ///< digits after the point
};

/// Unit that shows `seconds` with 3–4 significant digits: ns, us, ms or s.
[[nodiscard]] time_unit pick_time_unit(double seconds);

/// e.g. "4.22 ms", "812.3 us"; "—" for a non-finite value.
[[nodiscard]] std::string format_time(double seconds);

/// e.g. "4.22 ms (4.20–4.25)": median with p10–p90 in the median's unit.
[[nodiscard]] std::string format_time_range(double median, double p10, double p90);

/// e.g. "3.01× [2.95–3.07]"; just "3.01×" when the interval is unknown (NaN ends).
[[nodiscard]] std::string format_ratio(const stats::ratio_estimate& ratio);

/// e.g. "3.01×"; "—" for nullopt.
[[nodiscard]] std::string format_ratio(std::optional<double> ratio);

/// median / floor_seconds [ratio]; nullopt when either is not a positive finite number.
[[nodiscard]] std::optional<double> time_over_floor(double median, double floor_seconds);

/// e.g. "0.12", "3.1e-05", "1.8" (a max |err| / tolerance); "—" for NaN, "inf" for infinity.
[[nodiscard]] std::string format_tolerance_ratio(double ratio);

/// Element counts with an SI suffix: "63.0M", "512", "2.1G".
[[nodiscard]] std::string format_count(double count);

/// Bytes in binary units: "50.0 MiB".
[[nodiscard]] std::string format_bytes(double bytes);

/// A rate with an SI prefix: format_rate(4.28e12, "B/s") gives "4.28 TB/s"; "—" when <= 0 or NaN.
[[nodiscard]] std::string format_rate(double per_second, std::string_view unit);

/// Escapes the characters that would break a Markdown table cell (`|`, newlines).
[[nodiscard]] std::string markdown_cell(std::string_view text);

/// An RFC 4180 CSV field: quoted when it holds a comma, a quote or a newline (a quote inside doubled).
[[nodiscard]] std::string csv_field(std::string_view text);

}  // namespace fb::format
