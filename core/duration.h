#pragma once
// Durations as users write them: "90s", "10m", "8h", "1h30m", "500ms".

#include <chrono>
#include <string>
#include <string_view>

#include "core/error.h"

namespace kestrel {

using Seconds = std::chrono::duration<double>;

// A bare number is seconds. Refuses empty text, unknown units, negatives,
// a number that is not one ("1.2.3s") and a total of zero.
Result<Seconds> ParseDuration(std::string_view text);
// "1h30m", "90s", "2.5s"
std::string FormatDuration(Seconds duration);

}  // namespace kestrel
