#pragma once
/// Text for XML content and attribute values: the verify report's JUnit file (harness/verify/verify_report.cpp)
/// and the history page's SVG/HTML (harness/history/history_page.cpp). Header-only and includes
/// nothing of fusebench's, so both reach it downward.
#include <string>
#include <string_view>

namespace fb::format {

/// `text` with & < > " ' escaped ('&#39;', not '&apos;': HTML 4 parsers lack the latter, and XML takes
/// both) and every control character that XML 1.0 forbids (all below 0x20 but tab, newline and
/// carriage return; a message may hold one) replaced by a space.
[[nodiscard]] inline std::string xml_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') out += ' ';
        else out += ch;
    }
  }
  return out;
}

}  // namespace fb::format
