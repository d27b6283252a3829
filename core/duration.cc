#include "core/duration.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace kestrel {

Result<Seconds> ParseDuration(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return Fail(Error::InvalidArgument("duration '" + std::string(text) + "': " + std::string(why) +
                                       " (expected e.g. 90s, 10m, 8h, 1h30m)"));
  };
  if (text.empty()) return bad("empty");
  double total = 0.0;
  std::size_t pos = 0;
  bool any = false;
  while (pos < text.size()) {
    const std::size_t start = pos;
    while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.')) ++pos;
    if (pos == start) return bad("expected a number");
    double value = 0.0;
    const std::string number(text.substr(start, pos - start));
    try {
      std::size_t used = 0;
      value = std::stod(number, &used);
      if (used != number.size()) return bad("'" + number + "' is not a number");
    } catch (...) {
      return bad("'" + number + "' is not a number");
    }
    const std::size_t unit_start = pos;
    while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos]))) ++pos;
    const std::string_view unit = text.substr(unit_start, pos - unit_start);
    if (unit.empty()) {
      if (pos != text.size() || any) return bad("a number without a unit must stand alone");
      total += value;
    } else if (unit == "ms") {
      total += value / 1000.0;
    } else if (unit == "s") {
      total += value;
    } else if (unit == "m") {
      total += value * 60.0;
    } else if (unit == "h") {
      total += value * 3600.0;
    } else if (unit == "d") {
      total += value * 86400.0;
    } else {
      return bad("unknown unit '" + std::string(unit) + "'");
    }
    any = true;
  }
  if (!(total > 0)) return bad("not longer than zero");
  if (!std::isfinite(total)) return bad("too long");
  return Seconds(total);
}

std::string FormatDuration(Seconds duration) {
  double seconds = duration.count();
  if (seconds < 60.0) {
    char buffer[32];
    // Three digits under ten seconds: a short budget saved with its run
    // parses back (ParseDuration refuses zero), 0.04s as "0.04s", not "0.0s".
    std::snprintf(buffer, sizeof(buffer), seconds < 10 ? "%.3gs" : "%.0fs", seconds);
    return buffer;
  }
  auto total = static_cast<long long>(std::llround(seconds));
  const long long hours = total / 3600;
  const long long minutes = (total % 3600) / 60;
  const long long secs = total % 60;
  std::string out;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (minutes > 0) out += std::to_string(minutes) + "m";
  if (secs > 0 && hours == 0) out += std::to_string(secs) + "s";
  return out;
}

}  // namespace kestrel
