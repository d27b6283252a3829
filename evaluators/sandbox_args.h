#pragma once
// The bubblewrap command lines kernels run under (EVALUATION.md,
// "Isolation"). Every one has: new user (uid 65534), PID, IPC, network, UTS
// and cgroup namespaces; no capabilities; a new session; death with its
// parent; only `env`; a file system of /usr and the loader's links and cache
// (read-only), /proc and /dev of its own. Then:
//   - WorkerSandboxArgs: a kestrel-worker's (up to its own binds,
//     runner/worker_process.h): `scratch` as /tmp, its working directory.
//     Shared by the supervisor and by DetectSandbox's probe, so the probe
//     tries exactly what workers get.
//   - ProgramSandboxArgs: a program that loads a kernel itself — a command
//     evaluator's run command (a user's harness) and kestrel-cuda-runner:
//     a fresh /tmp, and the paths of a ProgramView at their own paths, so
//     that the program's arguments stay valid inside; the command line ends
//     with kestrel-confine when the view has it: append the program's argv.

#include <filesystem>
#include <string>
#include <vector>

namespace kestrel {

std::vector<std::string> WorkerSandboxArgs(const std::string& bwrap, const std::vector<std::string>& env,
                                           const std::filesystem::path& scratch);

// What a program sees besides the system: each path at its own place.
struct ProgramView {
  std::vector<std::filesystem::path> read_only;  // files or folders (its binary, the kernel, the task)
  std::vector<std::filesystem::path> writable;   // folders (the evaluation's own work dir)
  std::vector<std::filesystem::path> devices;    // device nodes (the GPU's), bound where they exist
  std::vector<std::filesystem::path> hidden;     // files inside the above it must not read: /dev/null, unreadable
  bool sys = false;                              // /sys read-only (the CUDA driver reads it)
  std::filesystem::path cwd;                     // empty: /tmp
  // kestrel-confine: bound read-only and run first, so that the program runs
  // under its seccomp denylist (confine/denylist.h); empty: no filter.
  std::filesystem::path confine;
};

std::vector<std::string> ProgramSandboxArgs(const std::string& bwrap, const std::vector<std::string>& env,
                                            const ProgramView& view);

// The environment a sandboxed program gets: PATH, HOME (`home`), TMPDIR,
// LANG, and each of `pass` that is set here, with its value.
std::vector<std::string> ProgramEnvironment(const std::vector<std::string>& pass, const std::filesystem::path& home);

// The NVIDIA driver's device nodes a CUDA program needs bound: the usual
// ones (/dev/nvidiactl, nvidia-uvm, nvidia0..15, ...; bound only where they
// exist) and every /dev/nvidia* and /dev/dxg (WSL) of this machine.
std::vector<std::filesystem::path> NvidiaDevices();

}  // namespace kestrel
