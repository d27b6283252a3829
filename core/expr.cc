#include "core/expr.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

namespace kestrel {
namespace {

// Recursive descent over the grammar
//
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/') unary)*
//   unary   := ('-' | '+') unary | power
//   power   := primary ('^' unary)?          right-associative: 2^3^2 = 2^9
//   primary := number | identifier | '(' sum ')'
//   number  := digits ['.' digits] [('e' | 'E') ['+' | '-'] digits]  (or '.' digits ...)
//
// so that -2^2 = -(2^2) and 2^-1 = 0.5. The first error sticks: once set,
// every rule returns 0 without consuming input, and Parse reports it with its
// 1-based column.
class Parser {
 public:
  // `evaluate` false: only names are checked (values may be anything, so a
  // division by zero is not an error).
  Parser(std::string_view text, const Shape& vars, bool evaluate) : text_(text), vars_(vars), evaluate_(evaluate) {}

  Result<double> Parse() {
    SkipSpace();
    if (pos_ == text_.size()) return Fail(Error::InvalidArgument("empty expression"));
    const double value = Sum();
    SkipSpace();
    if (!error_ && pos_ != text_.size()) SetError(pos_, "unexpected '" + std::string(1, text_[pos_]) + "'");
    if (error_) return Fail(Error::InvalidArgument(*error_));
    if (evaluate_ && !std::isfinite(value)) return Fail(Error::InvalidArgument("the result is not a finite number"));
    return value;
  }

 private:
  double Sum() {
    double value = Product();
    for (;;) {
      SkipSpace();
      if (error_ || pos_ == text_.size()) return value;
      const char op = text_[pos_];
      if (op != '+' && op != '-') return value;
      ++pos_;
      const double rhs = Product();
      value = op == '+' ? value + rhs : value - rhs;
    }
  }

  double Product() {
    double value = Unary();
    for (;;) {
      SkipSpace();
      if (error_ || pos_ == text_.size()) return value;
      const char op = text_[pos_];
      if (op != '*' && op != '/') return value;
      const std::size_t op_pos = pos_++;
      const double rhs = Unary();
      if (op == '*') {
        value *= rhs;
      } else if (rhs == 0.0 && evaluate_ && !error_) {
        SetError(op_pos, "division by zero");
      } else {
        value = rhs == 0.0 ? 0.0 : value / rhs;
      }
    }
  }

  double Unary() {
    SkipSpace();
    if (error_) return 0.0;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) {
      const bool negate = text_[pos_++] == '-';
      const double value = Unary();
      return negate ? -value : value;
    }
    return Power();
  }

  double Power() {
    const double base = Primary();
    SkipSpace();
    if (error_ || pos_ == text_.size() || text_[pos_] != '^') return base;
    ++pos_;
    const double exponent = Unary();
    return std::pow(base, exponent);
  }

  double Primary() {
    SkipSpace();
    if (error_) return 0.0;
    if (pos_ == text_.size()) {
      SetError(pos_, "expected a number, a name or '(' but the expression ends");
      return 0.0;
    }
    const char c = text_[pos_];
    if (c == '(') {
      const std::size_t open = pos_++;
      const double value = Sum();
      SkipSpace();
      if (error_) return 0.0;
      if (pos_ == text_.size() || text_[pos_] != ')') {
        SetError(open, "'(' is not closed");
        return 0.0;
      }
      ++pos_;
      return value;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return Number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return Name();
    SetError(pos_, "expected a number, a name or '(', got '" + std::string(1, c) + "'");
    return 0.0;
  }

  double Number() {
    const std::size_t start = pos_;
    const auto digits = [&] {
      const std::size_t from = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      return pos_ - from;
    };
    std::size_t mantissa_digits = digits();
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      mantissa_digits += digits();
    }
    if (mantissa_digits == 0) {
      SetError(start, "malformed number");
      return 0.0;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (digits() == 0) {
        SetError(start, "malformed number '" + std::string(text_.substr(start, pos_ - start)) + "'");
        return 0.0;
      }
    }
    if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      SetError(start, "malformed number (a name must not start with a digit)");
      return 0.0;
    }
    return std::strtod(std::string(text_.substr(start, pos_ - start)).c_str(), nullptr);
  }

  double Name() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    const std::string name(text_.substr(start, pos_ - start));
    const auto it = vars_.find(name);
    if (it == vars_.end()) {
      std::string known;
      for (const auto& [var, value] : vars_) known += (known.empty() ? "" : " ") + var;
      SetError(start, "unknown name '" + name + "' (known: " + (known.empty() ? "none" : known) + ")");
      return 0.0;
    }
    return static_cast<double>(it->second);
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  void SetError(std::size_t pos, const std::string& what) {
    if (!error_) error_ = "at column " + std::to_string(pos + 1) + ": " + what;
  }

  std::string_view text_;
  const Shape& vars_;
  bool evaluate_;
  std::size_t pos_ = 0;
  std::optional<std::string> error_;
};

}  // namespace

Result<double> EvalExpr(std::string_view expr, const Shape& vars) { return Parser(expr, vars, true).Parse(); }

Status CheckExpr(std::string_view expr, const Shape& names) {
  auto parsed = Parser(expr, names, false).Parse();
  if (!parsed) return Fail(parsed.error());
  return {};
}

}  // namespace kestrel
