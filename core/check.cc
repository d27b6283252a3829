#include "core/check.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace kestrel {
namespace {

std::atomic<int> throwing_guards{0};

}  // namespace

ThrowingChecks::ThrowingChecks() { throwing_guards.fetch_add(1); }
ThrowingChecks::~ThrowingChecks() { throwing_guards.fetch_sub(1); }

void CheckFailed(const char* file, int line, const char* condition, const std::string& message) {
  const std::string text =
      std::string("internal error at ") + file + ":" + std::to_string(line) + ": check '" + condition + "' failed: " + message;
  if (throwing_guards.load() > 0) throw InvariantError(text);
  std::fprintf(stderr, "kestrel: %s\n", text.c_str());
  std::abort();
}

}  // namespace kestrel
