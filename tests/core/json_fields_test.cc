// ParseJsonDocument: the one parse of a user's JSON, which refuses a key
// given twice (nlohmann alone would keep the last one silently).

#include "core/json_fields.h"

#include <doctest.h>

#include <string>

#include "tests/testing.h"

namespace kestrel {
namespace {

std::string RefusalOf(const std::string& text) {
  auto document = ParseJsonDocument(text, "in.json");
  REQUIRE_FALSE(document.has_value());
  CHECK(document.error().IsInvalidArgument());
  return document.error().message();
}

TEST_SUITE("json_fields") {
  TEST_CASE("a key twice is refused, named by its path") {
    CHECK(RefusalOf(R"({"a": 1, "a": 2})") == "in.json: a: the field appears twice in one object");
    CHECK(RefusalOf(R"({"a": {"b": 1, "c": [], "b": 2}})") == "in.json: a.b: the field appears twice in one object");
    CHECK(RefusalOf(R"({"a": [1, {"x": 1}, {"x": 1, "x": 2}]})") ==
          "in.json: a[2].x: the field appears twice in one object");
    CHECK(RefusalOf(R"([[], {"y": [{}], "y": 0}])") == "in.json: [1].y: the field appears twice in one object");
  }

  TEST_CASE("the same key in two objects is fine") {
    auto document = ParseJsonDocument(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 3}, {"x": 4}]})", "in.json");
    REQUIRE_MESSAGE(document.has_value(), testing::ErrorOf(document));
    CHECK((*document)["c"][1]["x"] == 4);
  }

  TEST_CASE("a document nested deeper than 64 levels is refused, and soon") {
    // 100000 levels (200 KB, an answer a harness may write) once took
    // gigabytes before anything was said.
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    const std::string message = RefusalOf(deep);
    CHECK(message.find("in.json: nested more than 64 arrays and objects deep") == 0);
    const std::string fine = std::string(64, '[') + std::string(64, ']');
    CHECK(ParseJsonDocument(fine, "in.json").has_value());
  }

  TEST_CASE("text that is not JSON names the origin") {
    CHECK(RefusalOf("{\"a\": ").rfind("in.json: not valid JSON: ", 0) == 0);
  }
}

}  // namespace
}  // namespace kestrel
