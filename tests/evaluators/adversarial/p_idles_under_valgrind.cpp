// Invented (issue 18's simulated counts): a kernel that wants its profile to
// show less work than it does. Under valgrind (which it can tell, with
// valgrind's own RUNNING_ON_VALGRIND) it returns at once, so cachegrind
// would count almost no instructions and no misses for it; everywhere else
// it is right. Its measurement must be honest (the clock never runs under
// valgrind), and its profile must have no counts: the simulated call's
// outputs are judged against the reference's (profile_ladder_test).
#include <valgrind/valgrind.h>

#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  if (RUNNING_ON_VALGRIND) return;
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
