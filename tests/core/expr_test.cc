// EvalExpr / CheckExpr: the arithmetic of a task's flops and bytes formulas.

#include "core/expr.h"

#include <doctest.h>

#include <string>

#include "tests/testing.h"

namespace kestrel {
namespace {

const Shape kVars = {{"rows", 2048}, {"cols", 1024}, {"m", 3}, {"n", 4}, {"k", 5}};

double Eval(const std::string& text) {
  auto value = EvalExpr(text, kVars);
  REQUIRE_MESSAGE(value.has_value(), text, ": ", testing::ErrorOf(value));
  return *value;
}

std::string EvalError(const std::string& text) {
  auto value = EvalExpr(text, kVars);
  REQUIRE_MESSAGE(!value.has_value(), text, " evaluated to ", value.value());
  CHECK(value.error().IsInvalidArgument());
  return value.error().message();
}

TEST_SUITE("expr") {
  TEST_CASE("numbers") {
    CHECK(Eval("42") == 42.0);
    CHECK(Eval("2.5") == 2.5);
    CHECK(Eval(".5") == 0.5);
    CHECK(Eval("1e6") == 1e6);
    CHECK(Eval("1.5E-3") == doctest::Approx(1.5e-3));
    CHECK(Eval("2e+2") == 200.0);
  }

  TEST_CASE("names and the task formulas") {
    CHECK(Eval("5*rows*cols") == 5.0 * 2048 * 1024);
    CHECK(Eval("8*rows*cols") == 8.0 * 2048 * 1024);
    CHECK(Eval("2*m*n*k") == 120.0);
    CHECK(Eval("4*(m*k+k*n+m*n)") == 4.0 * (15 + 20 + 12));
  }

  TEST_CASE("precedence and associativity") {
    CHECK(Eval("1+2*3") == 7.0);
    CHECK(Eval("(1+2)*3") == 9.0);
    CHECK(Eval("10-4-3") == 3.0);
    CHECK(Eval("64/4/2") == 8.0);
    CHECK(Eval("2^3^2") == 512.0);  // right-associative
    CHECK(Eval("4*(n+2)^2") == 144.0);
    CHECK(Eval("2*3^2") == 18.0);
  }

  TEST_CASE("unary minus") {
    CHECK(Eval("-3") == -3.0);
    CHECK(Eval("--3") == 3.0);
    CHECK(Eval("-2^2") == -4.0);  // binds looser than ^
    CHECK(Eval("2^-1") == 0.5);
    CHECK(Eval("m*-n") == -12.0);
    CHECK(Eval("+m") == 3.0);
  }

  TEST_CASE("whitespace") { CHECK(Eval("  2 * ( m + 1 )  ") == 8.0); }

  TEST_CASE("errors name the column") {
    SUBCASE("unknown name") {
      const std::string message = EvalError("5*rows*colz");
      CHECK(message.find("at column 8") != std::string::npos);
      CHECK(message.find("unknown name 'colz'") != std::string::npos);
      CHECK(message.find("cols") != std::string::npos);  // lists the known names
    }
    SUBCASE("empty") { CHECK(EvalError("   ").find("empty") != std::string::npos); }
    SUBCASE("dangling operator") { CHECK(EvalError("2*").find("at column 3") != std::string::npos); }
    SUBCASE("unclosed parenthesis") { CHECK(EvalError("(2+3").find("'(' is not closed") != std::string::npos); }
    SUBCASE("stray closing parenthesis") { CHECK(EvalError("2+3)").find("at column 4: unexpected ')'") != std::string::npos); }
    SUBCASE("bad character") { CHECK(EvalError("2 $ 3").find("at column 3") != std::string::npos); }
    SUBCASE("malformed exponent") { CHECK(EvalError("1e").find("malformed number") != std::string::npos); }
    SUBCASE("two numbers") { CHECK(EvalError("2 3").find("at column 3") != std::string::npos); }
    SUBCASE("digit-led name") { CHECK(EvalError("2rows").find("malformed number") != std::string::npos); }
    SUBCASE("division by zero") { CHECK(EvalError("rows/(m-3)").find("division by zero") != std::string::npos); }
  }

  TEST_CASE("CheckExpr checks names, not values") {
    const Shape dims = {{"rows", 1}, {"cols", 1}};
    CHECK(CheckExpr("5*rows*cols", dims).has_value());
    CHECK(CheckExpr("rows/(cols-1)", dims).has_value());  // zero only for these placeholder values
    const auto bad = CheckExpr("5*rows*colz", dims);
    REQUIRE(!bad.has_value());
    CHECK(bad.error().message().find("unknown name 'colz'") != std::string::npos);
    CHECK(!CheckExpr("5*", dims).has_value());
  }
}

}  // namespace
}  // namespace kestrel
