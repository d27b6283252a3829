// ParseDuration / FormatDuration: durations as users write them.

#include "core/duration.h"

#include <doctest.h>

#include <string>

#include "tests/testing.h"

namespace kestrel {
namespace {

double Parse(const std::string& text) {
  auto duration = ParseDuration(text);
  REQUIRE_MESSAGE(duration.has_value(), text, ": ", testing::ErrorOf(duration));
  return duration->count();
}

TEST_SUITE("duration") {
  TEST_CASE("the forms of CONTRACT.md") {
    CHECK(Parse("90s") == 90.0);
    CHECK(Parse("10m") == 600.0);
    CHECK(Parse("8h") == 28800.0);
    CHECK(Parse("1h30m") == 5400.0);
    CHECK(Parse("500ms") == doctest::Approx(0.5));
    CHECK(Parse("2.5s") == 2.5);
    CHECK(Parse("45") == 45.0);  // a bare number is seconds
  }

  TEST_CASE("bad input is refused with the expected forms") {
    // "1.2.3s" once read as 1.2s; a total of zero is no budget.
    for (const char* text : {"", "abc", "10x", "-5s", "1h30", "h", "5 s", "1.2.3s", "1..5m", ".", "0s", "0", "0m0s", "0.0s"}) {
      CAPTURE(text);
      const auto duration = ParseDuration(text);
      REQUIRE(!duration.has_value());
      CHECK(duration.error().IsInvalidArgument());
      CHECK(duration.error().message().find("expected e.g.") != std::string::npos);
    }
  }

  TEST_CASE("format") {
    CHECK(FormatDuration(Seconds(90)) == "1m30s");
    CHECK(FormatDuration(Seconds(5400)) == "1h30m");
    CHECK(FormatDuration(Seconds(2.5)) == "2.5s");
    CHECK(FormatDuration(Seconds(45)) == "45s");
  }

  TEST_CASE("format and parse round-trip") {
    for (double seconds : {5400.0, 600.0, 28800.0, 3723.0 - 3.0, 0.04, 2.5, 0.5}) {
      CAPTURE(seconds);
      CHECK(Parse(FormatDuration(Seconds(seconds))) == seconds);
    }
  }
}

}  // namespace
}  // namespace kestrel
