#pragma once
// The supervisor's handle on one kestrel-worker (evaluators/worker/): the
// process that loads one kernel and calls it when told. The supervisor
// starts it in its sandbox, owns the clock around each batch of calls, reads
// its CPU time, names the system calls its seccomp filter stopped, and
// turns however it ended into a verdict.
//
// Sandbox (EVALUATION.md, "Isolation"): with bubblewrap, the worker gets
// new user, PID, IPC, network, UTS and cgroup namespaces, no capabilities,
// a new session, only its environment, and a file system of /usr (read
// only), the loader's cache, the worker and the kernel library (read only)
// and a fresh scratch folder as /tmp; it dies with the supervisor. Its
// only descriptors are the control socket, the two shared regions and its
// log pipe (stdout and stderr).

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/outcome.h"
#include "evaluators/runner/shared_region.h"

namespace kestrel::runner {

using Deadline = std::chrono::steady_clock::time_point;

struct WorkerOptions {
  std::filesystem::path worker;   // kestrel-worker
  std::filesystem::path library;  // the kernel's shared object
  std::string bwrap;              // bubblewrap's path; empty: no namespaces
  bool seccomp = true;
  bool threads = false;           // the kernel may start threads
  bool jit = false;               // the kernel may make memory writable and executable (Job::allow_jit)
  std::vector<std::string> env;   // the worker's whole environment ("NAME=value")
  std::filesystem::path scratch_parent;  // its scratch folder is made fresh in here
  std::string role;               // "candidate", "reference": for messages
  double timeout_s = 60;          // named in a timed-out verdict
  // A profiler the worker runs under (Job::worker_wrapper), the file it
  // writes in the scratch folder and where that is copied when it ends.
  std::vector<std::string> wrapper;
  std::string wrapper_file;
  std::filesystem::path wrapper_output;
  std::filesystem::path confine;  // with a wrapper: kestrel-confine, run before it (Job::wrapper_confine)
};

// How a worker's job ended before it was done: the verdict reported.
struct WorkerVerdict {
  Outcome outcome = Outcome::kCrashed;
  std::string reason;
};

class WorkerProcess {
 public:
  // Starts the worker and waits (until `deadline`) for it to load the
  // kernel. An Error when the supervisor itself cannot (no memory, no
  // fork); a verdict when the kernel failed to load or attacked on load.
  static Result<std::unique_ptr<WorkerProcess>> Start(const WorkerOptions& options, const SharedRegion& arena,
                                                      const SharedRegion& inputs, Deadline deadline,
                                                      std::optional<WorkerVerdict>& failed);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // The call slots (worker/protocol.h): `places` holds slots * args words.
  std::optional<WorkerVerdict> Layout(const std::vector<std::uint64_t>& places, std::uint32_t args,
                                      Deadline deadline);
  // The worker's first access to the first `arena_bytes` of its arena and
  // `inputs_bytes` of the inputs (worker/protocol.h, kTouch), outside any
  // timed interval; returns once it is done.
  std::optional<WorkerVerdict> Touch(std::uint64_t arena_bytes, std::uint64_t inputs_bytes, Deadline deadline);
  // Calls slots first .. first + calls - 1. On success *seconds is the wall
  // time from sending the request to its kDone, by the supervisor's clock.
  std::optional<WorkerVerdict> Run(std::uint32_t first, std::uint32_t calls, Deadline deadline, double* seconds);

  // The worker's CPU time so far, all its threads (-1 when unknown).
  double CpuSeconds() const;
  // The seconds its main thread has spent runnable but waiting for a CPU
  // (/proc/PID/schedstat's run delay): time another task on its core took
  // from it. Sleeping or blocking is not waiting. -1 when unknown (no
  // process id, or a kernel built without scheduler statistics).
  double RunQueueSeconds() const;
  // How a freeze ended (Freeze).
  enum class Frozen { kStopped, kKeptRunning, kOutOfTime };
  // Stops every thread of the worker (SIGSTOP) and waits until each is
  // seen stopped: whatever a kernel's thread was still doing after its
  // calls returned is held where it stood. kKeptRunning: the worker gone,
  // or, past `patience`, it used over `cpu_limit_s` of CPU time since the
  // stop was sent (a kernel that cancels its stop with SIGCONT). A worker
  // that waits for a CPU on a busy machine uses none, and is waited for
  // until `deadline` (kOutOfTime); after 2 ms the stop is sent again with
  // each look.
  Frozen Freeze(Deadline deadline, std::chrono::steady_clock::duration patience, double cpu_limit_s);
  // Lets a frozen worker go on (SIGCONT).
  void Thaw();
  // A system call its filter stopped since the last look, or stray bytes
  // on its control socket: the verdict, without waiting.
  std::optional<WorkerVerdict> Inspect();
  // What it printed, trimmed; "" when nothing.
  std::string TakeLog();
  const std::string& role() const { return options_.role; }
  // The worker's process id as this process sees it (-1 when unknown).
  pid_t pid() const { return reaped_ ? -1 : worker_pid_; }

 private:
  explicit WorkerProcess(const WorkerOptions& options) : options_(options) {}
  Status Spawn(const SharedRegion& arena, const SharedRegion& inputs);
  std::optional<WorkerVerdict> AwaitHello(Deadline deadline);
  std::optional<WorkerVerdict> AwaitByte(Deadline deadline, char* byte);
  std::optional<WorkerVerdict> Send(const void* data, std::size_t bytes, Deadline deadline);
  // Sends a kRun or kTouch message and waits for its kDone; *seconds (when
  // not null) is the wall time from sending to kDone.
  std::optional<WorkerVerdict> Request(std::uint32_t kind, std::uint32_t a, std::uint32_t b, Deadline deadline,
                                       double* seconds);
  std::optional<WorkerVerdict> TimedOut();
  std::optional<WorkerVerdict> Ended();
  std::optional<WorkerVerdict> Notified();
  void FindWorkerPid();
  // Whether every thread of the worker is stopped (or gone).
  bool Stopped();
  void DrainLog();
  void Kill();

  WorkerOptions options_;
  std::filesystem::path scratch_;
  pid_t pid_ = -1;         // the child: bwrap, or the worker itself
  pid_t worker_pid_ = -1;  // the worker, as this process sees it
  int pidfd_ = -1;
  int control_ = -1;
  int log_ = -1;
  int info_ = -1;          // bwrap's --info-fd
  int notify_ = -1;
  int stat_ = -1;          // the worker's /proc/PID/stat, kept open for Stopped
  bool reaped_ = false;
  int status_ = 0;
  std::string log_head_;
  std::string log_tail_;
  std::size_t log_dropped_ = 0;
};

}  // namespace kestrel::runner
