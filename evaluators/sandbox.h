#pragma once
// Which protections a kernel gets on this machine (EVALUATION.md,
// "Isolation", and its threat model).
//
// The engine starts kestrel-runner, the supervisor, which never loads a
// kernel; each kernel runs in a kestrel-worker of its own under:
//   - bubblewrap (evaluators/sandbox_args.h): new user, PID, IPC, network,
//     UTS and cgroup namespaces, no capabilities, a new session, a cleared
//     environment, and a file system of /usr (read-only), the worker and the
//     kernel (read-only) and a fresh scratch folder; nothing else exists
//     for it: no database, no other evaluation, no other process.
//   - seccomp (evaluators/worker/allowlist.h): an allowlist; a named
//     forbidden call (socket, fork, exec, ...) is reported to the
//     supervisor by user notification and named in the `rejected` verdict;
//     any other call outside the list kills the worker outright.
//   - rlimits (always): wall clock, CPU time, address space, file size, no
//     core files (evaluators/subprocess.h).
// Without bubblewrap or user namespaces, or without seccomp, the sandbox is
// incomplete: kestrel doctor says so, and LLM-written kernels are refused
// unless the run opts out (evaluator.sandbox "none": no sandbox at all,
// said on every log line).
//
// Thread-safety: every function may be called from several threads.

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace kestrel {

struct SandboxReport {
  bool bwrap = false;          // bwrap found and the probe with every namespace succeeded
  std::string bwrap_why;       // why not, when !bwrap
  std::string bwrap_path;      // when bwrap
  bool seccomp = false;        // libseccomp and the kernel support filters
  std::string seccomp_why;     // why not, when !seccomp
  bool seccomp_notify = false; // forbidden calls can be named (user notification)
  bool rlimits = true;         // always applied
  bool unconfined = false;     // the user chose evaluator.sandbox "none"

  // Every layer there (bwrap and seccomp), or the user opted out.
  bool Complete() const { return bwrap && seccomp; }
  // One line: "sandbox: bwrap+seccomp+rlimits", or what is missing and why;
  // unconfined: "sandbox: NONE (evaluator.sandbox is \"none\") ...".
  std::string Summary() const;
  // For kestrel doctor: each layer ("namespaces", "capabilities",
  // "seccomp", "file system", "environment", "limits") and its state; an
  // empty state... never: a missing layer says "MISSING: why".
  std::vector<std::pair<std::string, std::string>> Layers() const;
};

// Probes bwrap (running `true` under exactly the workers' sandbox, with
// `scratch` as its scratch folder; empty: the temp dir) and seccomp. The
// probe runs a process (about 10 ms); the result for a given scratch dir is
// cached for the life of the process.
SandboxReport DetectSandbox(const std::filesystem::path& scratch = {});

// The sandbox a run uses: `mode` "auto" (what DetectSandbox finds) or
// "none" (nothing but rlimits, by the user's explicit choice).
SandboxReport SandboxFor(const std::string& mode, const std::filesystem::path& scratch = {});

}  // namespace kestrel
