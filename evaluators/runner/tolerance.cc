#include "evaluators/runner/tolerance.h"

#include <cmath>
#include <cstring>

namespace kestrel::runner {
namespace {

template <class T>
std::int64_t First(const std::byte* candidate, const std::byte* reference, std::int64_t count, double rtol,
                   double atol) {
  if (std::memcmp(candidate, reference, static_cast<std::size_t>(count) * sizeof(T)) == 0) return -1;
  const auto* c = reinterpret_cast<const T*>(candidate);
  const auto* r = reinterpret_cast<const T*>(reference);
  for (std::int64_t i = 0; i < count; ++i) {
    const double cv = static_cast<double>(c[i]);
    const double rv = static_cast<double>(r[i]);
    if (std::fabs(cv - rv) <= atol + rtol * std::fabs(rv)) continue;  // false for NaN
    if (std::isfinite(rv) || (std::isnan(rv) ? !std::isnan(cv) : cv != rv)) return i;
  }
  return -1;
}

}  // namespace

std::int64_t FirstMismatch(ScalarType type, const std::byte* candidate, const std::byte* reference, std::int64_t count,
                           double rtol, double atol) {
  switch (type) {
    case ScalarType::kF32: return First<float>(candidate, reference, count, rtol, atol);
    case ScalarType::kF64: return First<double>(candidate, reference, count, rtol, atol);
    case ScalarType::kI8: return First<std::int8_t>(candidate, reference, count, rtol, atol);
    case ScalarType::kU8: return First<std::uint8_t>(candidate, reference, count, rtol, atol);
    case ScalarType::kI32: return First<std::int32_t>(candidate, reference, count, rtol, atol);
    case ScalarType::kI64: return First<std::int64_t>(candidate, reference, count, rtol, atol);
  }
  return -1;
}

}  // namespace kestrel::runner
