#include "harness/format/number_format.h"

#include <cmath>

#include <fmt/format.h>

namespace fb::format {

time_unit pick_time_unit(double seconds) {
  const double magnitude = std::abs(seconds);
  if (magnitude < 1e-6) return {1e9, "ns", 1};
  if (magnitude < 1e-3) return {1e6, "us", 1};
  if (magnitude < 1.0) return {1e3, "ms", 2};
  return {1.0, "s", 3};
}

std::string format_time(double seconds) {
  if (!std::isfinite(seconds)) return std::string(none);
  const time_unit u = pick_time_unit(seconds);
  return fmt::format("{:.{}f} {}", seconds * u.per_second, u.decimals, u.suffix);
}

std::string format_time_range(double median, double p10, double p90) {
  if (!std::isfinite(median)) return std::string(none);
  const time_unit u = pick_time_unit(median);
  if (!std::isfinite(p10) || !std::isfinite(p90)) return format_time(median);
  return fmt::format("{:.{}f} {} ({:.{}f}–{:.{}f})", median * u.per_second, u.decimals, u.suffix,
                     p10 * u.per_second, u.decimals, p90 * u.per_second, u.decimals);
}

std::string format_ratio(const stats::ratio_estimate& ratio) {
  if (!std::isfinite(ratio.ratio)) return std::string(none);
  if (!std::isfinite(ratio.low) || !std::isfinite(ratio.high)) return fmt::format("{:.2f}×", ratio.ratio);
  return fmt::format("{:.2f}× [{:.2f}–{:.2f}]", ratio.ratio, ratio.low, ratio.high);
}

std::string format_ratio(std::optional<double> ratio) {
  if (!ratio || !std::isfinite(*ratio)) return std::string(none);
  return fmt::format("{:.2f}×", *ratio);
}

std::optional<double> time_over_floor(double median, double floor_seconds) {
  if (!(std::isfinite(median) && std::isfinite(floor_seconds) && median > 0.0 && floor_seconds > 0.0))
    return std::nullopt;
  return median / floor_seconds;
}

std::string format_tolerance_ratio(double ratio) {
  if (std::isnan(ratio)) return std::string(none);
  if (std::isinf(ratio)) return "inf";
  return fmt::format("{:.2g}", ratio);
}

std::string format_count(double count) {
  if (!std::isfinite(count)) return std::string(none);
  if (count >= 1e9) return fmt::format("{:.1f}G", count / 1e9);
  if (count >= 1e6) return fmt::format("{:.1f}M", count / 1e6);
  if (count >= 1e3) return fmt::format("{:.1f}k", count / 1e3);
  return fmt::format("{:.0f}", count);
}

std::string format_bytes(double bytes) {
  if (!std::isfinite(bytes) || bytes <= 0) return std::string(none);
  if (bytes >= 1024.0 * 1024.0 * 1024.0) return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  if (bytes >= 1024.0 * 1024.0) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
  if (bytes >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

std::string format_rate(double per_second, std::string_view unit) {
  if (!std::isfinite(per_second) || per_second <= 0) return std::string(none);
  constexpr std::pair<double, std::string_view> prefixes[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [scale, prefix] : prefixes)
    if (per_second >= scale) return fmt::format("{:.2f} {}{}", per_second / scale, prefix, unit);
  return fmt::format("{:.2f} {}", per_second, unit);
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else out += ch;
  }
  return out;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"') out += '"';  // RFC 4180: a quote inside a quoted field is doubled
    out += ch;
  }
  return out + "\"";
}

}  // namespace fb::format
