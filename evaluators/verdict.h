#pragma once
// Small helpers every evaluator uses to word its verdicts: a Measurement
// with an outcome, a short number for messages, the nonce a runner or a
// harness must echo, and elapsed seconds.

#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "core/measurement.h"

namespace kestrel {

inline Measurement Verdict(Outcome outcome, std::string reason, std::string log) {
  Measurement measurement;
  measurement.outcome = outcome;
  measurement.reason = std::move(reason);
  measurement.log = std::move(log);
  return measurement;
}

// "%.4g": 1.234, 5.6e-05.
inline std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

// 128 random bits, hex: a result that does not echo it did not come from
// this evaluation's runner or harness.
inline std::string MakeNonce() {
  std::random_device random;
  char text[33];
  std::snprintf(text, sizeof text, "%08x%08x%08x%08x", static_cast<unsigned>(random()), static_cast<unsigned>(random()),
                static_cast<unsigned>(random()), static_cast<unsigned>(random()));
  return text;
}

inline double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kestrel
