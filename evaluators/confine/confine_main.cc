// kestrel-confine PROGRAM [ARGS...]: installs the seccomp denylist
// (confine/denylist.h) and executes PROGRAM (found in $PATH) in its place.
// Inside bubblewrap it is the first thing a command evaluator's run command
// or the CUDA runner runs (sandbox_args.h, ProgramSandboxArgs).
//
// Exit status: 126 when the filter cannot be installed (nothing is run),
// 127 when PROGRAM cannot be executed, else PROGRAM's own.

#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <cstring>

#include "evaluators/confine/denylist.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: kestrel-confine PROGRAM [ARGS...]\n");
    return 2;
  }
  if (const int status = kestrel::confine::InstallDenylist(); status != 0) {
    std::fprintf(stderr, "kestrel-confine: cannot install the seccomp filter: %s\n", std::strerror(-status));
    return 126;
  }
  ::execvp(argv[1], argv + 1);
  std::fprintf(stderr, "kestrel-confine: cannot execute %s: %s\n", argv[1], std::strerror(errno));
  return 127;
}
