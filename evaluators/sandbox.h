#pragma once
// Which protections the runner gets on this machine (EVALUATION.md,
// "Isolation"), and how a sandbox violation reads.
//
// Three layers, each used when it works here:
//   - bubblewrap: the runner runs under `bwrap` with / read-only, /dev and
//     /proc fresh, its scratch dir the only writable path, and no network
//     (a new network namespace). Probed once per scratch dir by running
//     `bwrap ... true`; unusable e.g. in a container without user namespaces.
//   - seccomp: the runner installs a filter before it loads a kernel
//     (evaluators/runner/seccomp_filter.h): no socket, exec, fork, ptrace,
//     no opening files for writing. A refused call kills the runner with
//     SIGSYS after it printed the call's number; SandboxViolation() turns
//     that into the `rejected` reason.
//   - rlimits (always): wall clock, CPU time, address space, file size, no
//     core files (evaluators/subprocess.h).
//
// Thread-safety: every function may be called from several threads.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kestrel {

struct SandboxReport {
  bool bwrap = false;        // bwrap found and the probe succeeded
  std::string bwrap_why;     // why not, when !bwrap ("bwrap not found in $PATH", its error)
  std::string bwrap_path;    // when bwrap
  bool seccomp = false;      // libseccomp and the kernel support filters
  std::string seccomp_why;   // why not, when !seccomp
  bool rlimits = true;       // always applied

  // One line: "sandbox: bwrap+seccomp+rlimits" or
  // "sandbox: seccomp+rlimits (bwrap unavailable: <why>)".
  std::string Summary() const;
};

// Probes bwrap (with `scratch` as the writable dir; empty: the temp dir) and
// seccomp. The bwrap probe runs a process (about 10 ms); the result for a
// given scratch dir is cached for the life of the process.
SandboxReport DetectSandbox(const std::filesystem::path& scratch = {});

// `argv` wrapped in bwrap when report.bwrap (scratch writable, the rest
// read-only, no network, dies with its parent), else `argv` itself.
std::vector<std::string> SandboxedArgv(const SandboxReport& report, const std::filesystem::path& scratch,
                                       const std::vector<std::string>& argv);

// bwrap reports a child killed by signal N as exit status 128 + N: the
// signal, when `exit_code` reads like one under bwrap, else 0.
int SignalFromBwrapExit(int exit_code);

// When the runner died of SIGSYS: "sandbox: the kernel tried to open a
// socket" and the like, from the runner's last "blocked system call N" line
// in `log` ("sandbox: the kernel made a forbidden system call" without one).
std::string SandboxViolation(const std::string& log);

}  // namespace kestrel
