#pragma once
// Running a program under limits: the only place that forks. Used for the
// compiler and for kestrel-runner, and to keep kestrel-runner --serve
// running (ServedProcess).
//
// The child runs in its own process group with stdin from /dev/null (or
// `stdin_data`), stdout
// and stderr captured together into a (trimmed) log, optionally a result
// pipe on fd 3, rlimits applied, and no other file descriptor inherited.
// After the wall-clock timeout the whole group is killed with SIGKILL; when
// the child exits, whatever it left behind in its group is killed too. The
// child is always reaped: no zombies.
//
// Thread-safety: RunSubprocess keeps no global state and may be called from
// several threads at once (the child only makes async-signal-safe calls).

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"

namespace kestrel {

struct SubprocessOptions {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up in $PATH
  std::vector<std::string> env;   // "NAME=value" each; empty: inherit the parent's
  std::filesystem::path cwd;      // empty: the parent's
  std::string stdin_data;         // the child's stdin (an unlinked in-memory file); empty: /dev/null
  double timeout_s = 60;          // wall clock; <= 0: none
  double cpu_limit_s = 0;         // RLIMIT_CPU, rounded up; <= 0: none
  std::uint64_t memory_limit_bytes = 0;     // RLIMIT_AS; 0: none
  std::uint64_t file_size_limit_bytes = 0;  // RLIMIT_FSIZE; 0: none
  bool result_pipe = false;                 // open fd 3 in the child; its bytes go to `result`
  std::size_t log_limit_bytes = 64 * 1024;  // beyond: head and tail kept, middle elided
  std::size_t result_limit_bytes = 64 * 1024 * 1024;  // beyond: the rest is dropped
};

struct SubprocessResult {
  int exit_code = -1;       // when the child exited normally
  int signal = 0;           // the signal that ended it, else 0
  bool timed_out = false;   // killed by us at the deadline (signal is then SIGKILL)
  double wall_seconds = 0;
  std::string log;          // stdout and stderr, interleaved, trimmed
  std::string result;       // what it wrote on fd 3 (result_pipe only)
  bool result_truncated = false;
  // Set when a cluster scheduler ran the program (a Slurm executor, slurm_executor.h):
  std::string job;   // "Slurm job 12 on node1"
  std::string lost;  // non-empty: the scheduler ended the job, not the program
                     // ("Slurm job 12 was cancelled", "... ended NODE_FAIL")
  // The scheduler's job was withdrawn before it ran (a stop was requested
  // while it waited in the queue): nothing ran, and `lost` says so.
  bool withdrawn = false;

  bool Succeeded() const { return !timed_out && signal == 0 && exit_code == 0 && lost.empty(); }
  // "exited with status 2", "killed by SIGSEGV", "timed out after 5s", or `lost`.
  std::string Describe(double timeout_s) const;
  // For a program run under bubblewrap, which exits with 128 + N when the
  // program was killed by signal N: the signal, as if it had run unwrapped.
  void ReadAsBubblewrapped();
};

// Runs argv[0] to completion (or its timeout). An error only when the
// program could not be started at all (not found, not executable, fork
// failed); anything the program does is in the SubprocessResult.
Result<SubprocessResult> RunSubprocess(const SubprocessOptions& options);

// A program kept running to answer requests, a line each way: a request on
// its stdin, its answer on its fd 3 (kestrel-runner --serve, which
// runner_pool.h keeps). It runs with RunSubprocess's set-up (its own process
// group, the rlimits and environment of `options`, no other descriptor
// inherited); `options.timeout_s`, `stdin_data`, `result_pipe` and `cwd` are
// not used here. Its stdout and stderr go to `log_file` until it redirects
// them itself. Not thread-safe: one request at a time.
class ServedProcess {
 public:
  static Result<std::unique_ptr<ServedProcess>> Start(const SubprocessOptions& options,
                                                      const std::filesystem::path& log_file);
  // Closes its stdin, then kills its group and reaps it.
  ~ServedProcess();
  ServedProcess(const ServedProcess&) = delete;
  ServedProcess& operator=(const ServedProcess&) = delete;

  // Sends `request` (one line, no newline in it) and waits up to
  // `timeout_s` for one line on fd 3: then `result` holds it (without its
  // newline) and exit_code is 0. Otherwise the process is gone: killed at
  // the deadline (timed_out), or ended by itself (exit_code or signal), and
  // `result` holds what it wrote, if anything. `log` is empty here.
  SubprocessResult Request(const std::string& request, double timeout_s);
  // True once it has ended (a request it did not answer, or a timeout).
  bool ended() const { return ended_; }
  // False when it has exited since its last answer (killed while idle):
  // it is then reaped, and ended().
  bool Alive();

 private:
  ServedProcess() = default;
  void Reap(SubprocessResult& result);
  pid_t pid_ = -1;
  int input_ = -1;   // its stdin
  int answer_ = -1;  // its fd 3
  int pidfd_ = -1;
  bool ended_ = false;
  std::string pending_;  // bytes read past the last answer's newline
};

// The parent's environment with `overrides` ("NAME=value") replacing or
// adding entries.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& overrides);

// The absolute path of `program`: itself when it contains a '/', else the
// first executable match in $PATH. NotFound when there is none.
Result<std::filesystem::path> FindProgram(const std::string& program);

// "SIGSEGV" for 11 and so on ("signal 42" when unnamed).
std::string SignalName(int signal);

}  // namespace kestrel
