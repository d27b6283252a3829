#include "report/html.h"

#include <ctime>

#include <fmt/format.h>

namespace kestrel::report {
namespace {

// The length of the valid UTF-8 sequence at text[i], 0 when it is not one.
std::size_t Utf8Length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return length;
}

}  // namespace

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; ++i; continue;
      case '<': out += "&lt;"; ++i; continue;
      case '>': out += "&gt;"; ++i; continue;
      case '"': out += "&quot;"; ++i; continue;
      case '\'': out += "&#39;"; ++i; continue;
      case '\0': out += "\xEF\xBF\xBD"; ++i; continue;
      default: break;
    }
    const std::size_t length = Utf8Length(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string Speedup(double speedup) { return fmt::format("{:.2f}x", speedup); }

std::string Percent(double fraction) { return fraction <= 0 ? "-" : fmt::format("{:.1f}%", fraction * 100.0); }

std::string Number(double value, int digits) { return fmt::format("{:.{}f}", value, digits); }

std::string Timestamp(std::int64_t millis) {
  if (millis == 0) return "-";
  const std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

std::string Duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const auto whole = static_cast<std::int64_t>(seconds);
  if (whole < 3600) return fmt::format("{}m {:02}s", whole / 60, whole % 60);
  return fmt::format("{}h {:02}m", whole / 3600, whole % 3600 / 60);
}

std::string NodeAnchor(std::int64_t node_id) { return "node-" + std::to_string(node_id); }

std::string NodeLink(std::int64_t node_id) {
  return "<a href=\"#" + NodeAnchor(node_id) + "\">#" + std::to_string(node_id) + "</a>";
}

}  // namespace kestrel::report
