// Knob declarations, knob values and candidate identity (CONTRACT.md, "Knobs").

#include "core/candidate.h"

#include <doctest.h>

#include <string>

namespace kestrel {
namespace {

constexpr const char* kSource = R"(#include <cstdint>
// kestrel:knob BLOCK_ROWS 1 2 4 8
// kestrel:knob UNROLL 1 2 4
void f(float* y) { y[0] = BLOCK_ROWS * UNROLL; }
)";

std::string ParseError(const std::string& source) {
  auto knobs = ParseKnobs(source);
  REQUIRE_MESSAGE(!knobs.has_value(), source);
  CHECK(knobs.error().IsInvalidArgument());
  return knobs.error().message();
}

Candidate MakeCandidate() {
  Candidate candidate;
  candidate.source = kSource;
  candidate.knobs = {{"BLOCK_ROWS", "4"}, {"UNROLL", "2"}};
  candidate.toolchain = "g++ (Debian 12.2.0-14) 12.2.0";
  candidate.flags = {"-O3", "-march=native"};
  return candidate;
}

TEST_SUITE("candidate") {
  TEST_CASE("ParseKnobs reads declarations in order") {
    auto knobs = ParseKnobs(kSource);
    REQUIRE(knobs.has_value());
    REQUIRE(knobs->size() == 2);
    CHECK((*knobs)[0].name == "BLOCK_ROWS");
    CHECK((*knobs)[0].values == std::vector<std::string>{"1", "2", "4", "8"});
    CHECK((*knobs)[1].name == "UNROLL");
    CHECK((*knobs)[1].values == std::vector<std::string>{"1", "2", "4"});
    CHECK(DefaultKnobs(*knobs) == KnobValues{{"BLOCK_ROWS", "1"}, {"UNROLL", "1"}});
  }

  TEST_CASE("ParseKnobs tolerates spacing and ignores other comments") {
    auto knobs = ParseKnobs("int x;  //   kestrel:knob   A   x  y\n// knob B 1\n/* kestrel:knob C 1 */\n// kestrel:knobs D 1\n");
    REQUIRE(knobs.has_value());
    REQUIRE(knobs->size() == 1);
    CHECK((*knobs)[0].name == "A");
    CHECK((*knobs)[0].values == std::vector<std::string>{"x", "y"});
    CHECK(ParseKnobs("void f() {}\n")->empty());
    // The values end at a comment after them (they were once values too).
    auto commented = ParseKnobs("// kestrel:knob UNROLL 1 2 4 8 16  // elements per iteration\n// kestrel:knob B 1 //x\n");
    REQUIRE(commented.has_value());
    REQUIRE(commented->size() == 2);
    CHECK((*commented)[0].values == std::vector<std::string>{"1", "2", "4", "8", "16"});
    CHECK((*commented)[1].values == std::vector<std::string>{"1"});
    CHECK(ParseError("// kestrel:knob A // none\n").find("no values") != std::string::npos);
  }

  TEST_CASE("ParseKnobs refuses malformed declarations with the line") {
    SUBCASE("no name") { CHECK(ParseError("// kestrel:knob\n").find("line 1") != std::string::npos); }
    SUBCASE("no values") {
      const std::string message = ParseError("int x;\n// kestrel:knob A\n");
      CHECK(message.find("line 2") != std::string::npos);
      CHECK(message.find("no values") != std::string::npos);
    }
    SUBCASE("bad name") { CHECK(ParseError("// kestrel:knob 9A 1 2\n").find("not an identifier") != std::string::npos); }
    SUBCASE("name with a dash") { CHECK(ParseError("// kestrel:knob A-B 1\n").find("'A-B'") != std::string::npos); }
    SUBCASE("declared twice") {
      CHECK(ParseError("// kestrel:knob A 1\n// kestrel:knob A 2\n").find("declared twice") != std::string::npos);
    }
    SUBCASE("a value that is not a number or a word (it reached a shell through {knob_flags})") {
      for (const char* line : {"// kestrel:knob BLOCK 1;touch${IFS}/tmp/x 2\n", "// kestrel:knob A $(id)\n",
                               "// kestrel:knob A `id`\n", "// kestrel:knob A 'x'\n", "// kestrel:knob A (1<<4)\n"}) {
        CAPTURE(line);
        CHECK(ParseError(line).find("is not a number or a word") != std::string::npos);
      }
      auto fine = ParseKnobs("// kestrel:knob A -1 2.5 1e-3 float __m256 +4\n");
      REQUIRE(fine.has_value());
      CHECK((*fine)[0].values.size() == 6);
    }
    SUBCASE("value twice") { CHECK(ParseError("// kestrel:knob A 1 2 1\n").find("'1' twice") != std::string::npos); }
  }

  TEST_CASE("identity is stable and changes with each part") {
    const Candidate base = MakeCandidate();
    const std::string id = base.Identity();
    CHECK(id.size() == 64);
    CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(MakeCandidate().Identity() == id);

    SUBCASE("knob map order does not matter") {
      Candidate other;
      other.knobs["UNROLL"] = "2";
      other.knobs["BLOCK_ROWS"] = "4";
      other.source = base.source;
      other.toolchain = base.toolchain;
      other.flags = base.flags;
      CHECK(other.Identity() == id);
    }
    SUBCASE("source") {
      Candidate other = base;
      other.source += " ";
      CHECK(other.Identity() != id);
    }
    SUBCASE("knob value") {
      Candidate other = base;
      other.knobs["UNROLL"] = "4";
      CHECK(other.Identity() != id);
    }
    SUBCASE("knob set") {
      Candidate other = base;
      other.knobs["EXTRA"] = "1";
      CHECK(other.Identity() != id);
    }
    SUBCASE("toolchain") {
      Candidate other = base;
      other.toolchain = "clang version 16.0.6";
      CHECK(other.Identity() != id);
    }
    SUBCASE("flag") {
      Candidate other = base;
      other.flags.push_back("-ffast-math");
      CHECK(other.Identity() != id);
    }
    SUBCASE("flag order") {
      Candidate other = base;
      std::swap(other.flags[0], other.flags[1]);
      CHECK(other.Identity() != id);
    }
    SUBCASE("fields do not run into each other") {
      Candidate a = base;
      Candidate b = base;
      a.flags = {"-O3 -march=native"};
      b.flags = {"-O3", "-march=native"};
      CHECK(a.Identity() != b.Identity());
    }
  }

  TEST_CASE("KnobDefines and ToString") {
    const Candidate candidate = MakeCandidate();
    CHECK(candidate.KnobDefines() == std::vector<std::string>{"-DBLOCK_ROWS=4", "-DUNROLL=2"});
    CHECK(ToString(candidate.knobs) == "BLOCK_ROWS=4 UNROLL=2");
    CHECK(ToString(KnobValues{}).empty());
  }

  TEST_CASE("SubstituteKnobs defines each knob before the source and fixes the declarations") {
    const std::string out = SubstituteKnobs(kSource, {{"BLOCK_ROWS", "4"}, {"UNROLL", "2"}});
    CHECK(out.rfind("#define BLOCK_ROWS 4\n#define UNROLL 2\n", 0) == 0);
    // The declarations are gone: the exported file is one fixed kernel.
    REQUIRE(ParseKnobs(out).has_value());
    CHECK(ParseKnobs(out)->empty());
    CHECK(out.find("knob fixed by kestrel export: BLOCK_ROWS") != std::string::npos);
    CHECK(SubstituteKnobs(kSource, {}) == kSource);
  }

  TEST_CASE("CheckKnobValues") {
    const auto knobs = ParseKnobs(kSource).value();
    CHECK(CheckKnobValues(knobs, {{"BLOCK_ROWS", "8"}, {"UNROLL", "4"}}).has_value());
    CHECK(CheckKnobValues(knobs, DefaultKnobs(knobs)).has_value());
    SUBCASE("missing knob") {
      const auto status = CheckKnobValues(knobs, {{"BLOCK_ROWS", "8"}});
      REQUIRE(!status.has_value());
      CHECK(status.error().message().find("'UNROLL' has no value") != std::string::npos);
    }
    SUBCASE("undeclared value") {
      const auto status = CheckKnobValues(knobs, {{"BLOCK_ROWS", "3"}, {"UNROLL", "4"}});
      REQUIRE(!status.has_value());
      CHECK(status.error().message().find("undeclared value '3'") != std::string::npos);
    }
    SUBCASE("unknown knob") {
      const auto status = CheckKnobValues(knobs, {{"BLOCK_ROWS", "8"}, {"UNROLL", "4"}, {"TILE", "2"}});
      REQUIRE(!status.has_value());
      CHECK(status.error().message().find("'TILE' is not a knob") != std::string::npos);
    }
    SUBCASE("no knobs") {
      CHECK(CheckKnobValues({}, {}).has_value());
      CHECK(!CheckKnobValues({}, {{"A", "1"}}).has_value());
    }
  }
}

}  // namespace
}  // namespace kestrel
