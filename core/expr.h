#pragma once
// Arithmetic over named dims, for a task's flops and bytes formulas:
// integers and decimals, + - * / ^ (power), parentheses, unary minus and
// identifiers bound in `vars`. "5*rows*cols", "2*m*n*k", "4*(n+2)^2".

#include <string_view>

#include "core/error.h"
#include "core/task.h"

namespace kestrel {

Result<double> EvalExpr(std::string_view expr, const Shape& vars);

// Parses `expr` and checks that every identifier is one of `names`
// (values are irrelevant); used to validate a task when it is loaded.
Status CheckExpr(std::string_view expr, const Shape& names);

}  // namespace kestrel
