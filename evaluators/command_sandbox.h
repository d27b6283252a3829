#pragma once
// The command evaluator's run step in a sandbox (EVALUATION.md, "Isolation";
// docs/COMMAND_PROTOCOL.md, "Sandbox"). The run command is a user's harness
// that loads an LLM-written kernel into its own process, so the harness runs
// where the kernel may: under bubblewrap (sandbox_args.h, ProgramSandboxArgs)
// with new user, PID, IPC and network namespaces, no capabilities and a
// cleared environment, seeing /usr, the task's folder and the candidate's
// build folder read-only, its own work dir writable, and nothing else but
// what the run config names: `binds` (more read-only paths: a Python
// environment, a harness kept elsewhere), `devices` (device nodes, globs:
// "/dev/nvidia*") and `pass_env` (variables passed in with their values).
// A seccomp denylist rather than an allowlist (kestrel-confine,
// confine/denylist.h): a harness is an arbitrary program (interpreters,
// JITs, GPU drivers) that no allowlist fits. The build command runs in the
// same sandbox (WrapBuild) with its build folder writable instead of a work
// dir: a compiler reading an LLM's source can be made to read host files
// (`#include "/home/me/.ssh/id_rsa"`, whose text the error log would carry
// to the database and the next prompt), and a build that imports the
// kernel (an ahead-of-time compile of a Python kernel) runs it.
//
// The answer itself is the harness's: a kernel in the harness's process can
// write it (docs/COMMAND_PROTOCOL.md says so); the sandbox keeps the kernel
// from the rest of the machine, the database and Kestrel's secrets.

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "evaluators/sandbox_args.h"

namespace kestrel {

struct SubprocessResult;

struct CommandSandboxConfig {
  std::string mode = "auto";          // "auto": bubblewrap, required for LLM kernels; "none": unconfined
  std::vector<std::string> binds;     // absolute paths that must exist
  std::vector<std::string> devices;   // absolute paths or globs under /dev
  std::vector<std::string> pass_env;  // variable names
};

class CommandSandbox {
 public:
  // Checks the config (each bind exists and is absolute; each device pattern
  // is under /dev) and probes bubblewrap with `scratch` as the scratch dir.
  // InvalidArgument naming the field for a bad config.
  static Result<CommandSandbox> Make(const CommandSandboxConfig& config, const std::filesystem::path& scratch);

  // `argv` (expanded) wrapped in the sandbox: the task's folder and the
  // build folder read-only, `workdir` writable and the working directory,
  // and each file the command names by an absolute path elsewhere (its
  // program, a harness script) read-only; `hidden` (files in those folders:
  // the source of a build with a code hash) there but unreadable. Unchanged
  // without a sandbox.
  std::vector<std::string> Wrap(std::vector<std::string> argv, const std::filesystem::path& task_dir,
                                const std::filesystem::path& build_dir, const std::filesystem::path& workdir,
                                const std::vector<std::filesystem::path>& hidden = {}) const;

  // The build command (expanded) wrapped in the sandbox: the task's folder
  // read-only, `build_dir` writable and the working directory, the binds,
  // devices, files named by absolute path and pass_env as for Wrap.
  // Unchanged without a sandbox.
  std::vector<std::string> WrapBuild(std::vector<std::string> argv, const std::filesystem::path& task_dir,
                                     const std::filesystem::path& build_dir) const;

  // How a wrapped command ended, as if it had run unwrapped: bubblewrap
  // exits with 128 + N when the command was killed by signal N.
  void Unwrap(SubprocessResult& ended) const;

  bool Confined() const { return !bwrap_.empty(); }
  bool Unconfined() const { return unconfined_; }
  // "" when confined or unconfined by choice, else why it is not confined.
  const std::string& Gap() const { return gap_; }
  // One line for each evaluation's log: what confined the run command.
  std::string Summary() const;

 private:
  // `argv` under bubblewrap with `view` (cwd: its first writable folder),
  // plus the binds, devices and the files argv names by absolute path.
  std::vector<std::string> WrapIn(std::vector<std::string> argv, ProgramView view) const;

  std::string bwrap_;
  std::filesystem::path confine_;
  bool unconfined_ = false;
  std::string gap_;
  std::vector<std::filesystem::path> binds_;
  std::vector<std::string> device_patterns_;
  std::vector<std::string> pass_env_;
};

}  // namespace kestrel
