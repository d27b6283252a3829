#pragma once
// KESTREL_CHECK(condition, message): a broken invariant is a bug; abort with
// the location and the message. Not for user input or I/O failures (use Result).

#include <cstdio>
#include <cstdlib>

#define KESTREL_CHECK(condition, message)                                              \
  do {                                                                                 \
    if (!(condition)) {                                                                \
      std::fprintf(stderr, "kestrel: internal error at %s:%d: check '%s' failed: %s\n", \
                   __FILE__, __LINE__, #condition, (message));                         \
      std::abort();                                                                    \
    }                                                                                  \
  } while (false)
