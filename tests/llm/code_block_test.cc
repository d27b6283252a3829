// ExtractCode: fenced blocks in LLM replies (llm/code_block.h).

#include "llm/code_block.h"

#include <doctest.h>

namespace kestrel {
namespace {

TEST_SUITE("code_block") {
  TEST_CASE("the block that defines the entry wins over later ones") {
    const std::string reply =
        "Here is the kernel:\n"
        "```cpp\n"
        "void saxpy(int n, float a, const float* x, float* y) {\n"
        "  for (int i = 0; i < n; ++i) y[i] += a * x[i];\n"
        "}\n"
        "```\n"
        "And how to call it:\n"
        "```cpp\n"
        "saxpy(n, 2.0f, x, y);\n"
        "```\n";
    const auto code = ExtractCode(reply, "saxpy");
    REQUIRE(code.has_value());
    CHECK(code->find("y[i] += a * x[i]") != std::string::npos);
    CHECK(code->find("```") == std::string::npos);
  }

  TEST_CASE("the last of several defining blocks wins") {
    const std::string reply =
        "First try:\n```c++\nvoid k(float* x) { x[0] = 1; }\n```\n"
        "Better:\n```c++\nvoid k(float* x) noexcept { x[0] = 2; }\n```\nDone.";
    const auto code = ExtractCode(reply, "k");
    REQUIRE(code.has_value());
    CHECK(*code == "void k(float* x) noexcept { x[0] = 2; }\n");
  }

  TEST_CASE("no language tag, stray prose and CRLF are tolerated") {
    const std::string reply =
        "Sure!\r\n\r\n```\r\n#include <cstddef>\r\nvoid k(float* x)\r\n{\r\n  x[0] = 1;\r\n}\r\n```\r\n"
        "This is faster because...\r\n";
    const auto code = ExtractCode(reply, "k");
    REQUIRE(code.has_value());
    CHECK(*code == "#include <cstddef>\nvoid k(float* x)\n{\n  x[0] = 1;\n}\n");
  }

  TEST_CASE("the only block is taken even if the entry is not found in it") {
    const auto code = ExtractCode("```cpp\nint helper() { return 1; }\n```", "k");
    REQUIRE(code.has_value());
    CHECK(*code == "int helper() { return 1; }\n");
  }

  TEST_CASE("tilde fences and an empty entry take the last non-empty block") {
    const auto code = ExtractCode("~~~\nint a;\n~~~\n~~~cpp\nint b;\n~~~\n", "");
    REQUIRE(code.has_value());
    CHECK(*code == "int b;\n");
  }

  TEST_CASE("prose only is refused") {
    const auto code = ExtractCode("I cannot do that, but consider tiling the loop.", "k");
    REQUIRE_FALSE(code.has_value());
    CHECK(code.error().IsNotFound());
    CHECK(code.error().message().find("no fenced code block") != std::string::npos);
  }

  TEST_CASE("an unterminated block (a truncated reply) is refused") {
    const auto code = ExtractCode("```cpp\nvoid k(float* x) {\n  for (int i = 0; i <", "k");
    REQUIRE_FALSE(code.has_value());
    CHECK(code.error().message().find("unterminated") != std::string::npos);
  }

  TEST_CASE("an empty block is refused") {
    const auto code = ExtractCode("Here:\n```cpp\n\n```\n", "k");
    REQUIRE_FALSE(code.has_value());
    CHECK(code.error().message().find("empty") != std::string::npos);
  }

  TEST_CASE("several blocks and none defines the entry is refused") {
    const auto code = ExtractCode("```\nint a;\n```\n```\nk(x);\n```\n", "k");
    REQUIRE_FALSE(code.has_value());
    CHECK(code.error().message().find("none defines `k`") != std::string::npos);
  }

  TEST_CASE("ExtractVariants takes every block that defines the entry, in order, up to the limit") {
    const std::string reply =
        "Three versions:\n"
        "```cpp\nvoid k(int n) { /* one */ }\n```\n"
        "A helper on its own:\n```cpp\nk(4);\n```\n"
        "```cpp\nvoid k(int n) { /* two */ }\n```\n"
        "```\n\n```\n"
        "~~~c++\r\nvoid k(int n) { /* three */ }\r\n~~~\r\n";
    const auto all = ExtractVariants(reply, "k", 8);
    REQUIRE(all.has_value());
    REQUIRE(all->size() == 3);
    CHECK((*all)[0] == "void k(int n) { /* one */ }\n");
    CHECK((*all)[1] == "void k(int n) { /* two */ }\n");
    CHECK((*all)[2] == "void k(int n) { /* three */ }\n");
    const auto two = ExtractVariants(reply, "k", 2);
    REQUIRE(two.has_value());
    CHECK(two->size() == 2);
    // No block defines the entry: ExtractCode's one block, or its error.
    const auto only = ExtractVariants("```cpp\nint helper() { return 1; }\n```\n", "k", 4);
    REQUIRE(only.has_value());
    CHECK(only->size() == 1);
    const auto none = ExtractVariants("No code today.", "k", 4);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().message().find("no fenced code block") != std::string::npos);
  }

  TEST_CASE("DefinesFunction tells a definition from a call or a longer name") {
    CHECK(DefinesFunction("void k(int a) { }", "k"));
    CHECK(DefinesFunction("extern \"C\" void k(int (*f)(int)) const\n{", "k"));
    CHECK_FALSE(DefinesFunction("k(1);", "k"));
    CHECK_FALSE(DefinesFunction("void kk(int a) { }", "k"));
    CHECK_FALSE(DefinesFunction("void k(int a);", "k"));
  }
}

}  // namespace
}  // namespace kestrel
