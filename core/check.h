#pragma once
// KESTREL_CHECK(condition, message): a broken invariant is a bug. Not for user
// input or I/O failures (use Result).
//
// By default a broken check prints the location and the message and aborts.
// While a ThrowingChecks guard lives (the engine holds one for a run), it
// throws InvariantError with the same text instead, so that the run can stop
// with stop reason "error: ..." and its state saved rather than die mid-write.

#include <stdexcept>
#include <string>

namespace kestrel {

// A broken invariant, thrown only under a ThrowingChecks guard. what():
// "internal error at FILE:LINE: check 'CONDITION' failed: MESSAGE".
class InvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// While at least one lives (in any thread), broken checks throw. Process-wide,
// because a run's stages run on many threads.
class ThrowingChecks {
 public:
  ThrowingChecks();
  ~ThrowingChecks();
  ThrowingChecks(const ThrowingChecks&) = delete;
  ThrowingChecks& operator=(const ThrowingChecks&) = delete;
};

// Reports a broken check: throws InvariantError under a guard, else aborts.
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition, const std::string& message);

}  // namespace kestrel

#define KESTREL_CHECK(condition, message)                                     \
  do {                                                                        \
    if (!(condition)) ::kestrel::CheckFailed(__FILE__, __LINE__, #condition, (message)); \
  } while (false)
