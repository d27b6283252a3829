#include "evaluators/runner/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <thread>

#include "evaluators/runner/run_queue.h"
#include "evaluators/sandbox_args.h"
#include "evaluators/subprocess.h"
#include "evaluators/syscall_names.h"
#include "evaluators/worker/protocol.h"

namespace kestrel::runner {
namespace {

using Clock = std::chrono::steady_clock;
namespace wp = kestrel::worker;

constexpr std::size_t kLogPart = 16 * 1024;  // head and tail kept of what a worker prints
constexpr int kPipeBytes = 1 << 20;
constexpr double kExitGraceSeconds = 0.5;

int MillisecondsLeft(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left + 1, 0, 1000));
}

// A descriptor moved to >= 20 for the child's dup2s (no clobbering).
int High(int fd) { return fd < 0 ? fd : ::fcntl(fd, F_DUPFD_CLOEXEC, 20); }

std::string Seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

}  // namespace

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::Start(const WorkerOptions& options, const SharedRegion& arena,
                                                            const SharedRegion& inputs, Deadline deadline,
                                                            std::optional<WorkerVerdict>& failed) {
  std::unique_ptr<WorkerProcess> worker(new WorkerProcess(options));
  if (auto spawned = worker->Spawn(arena, inputs); !spawned) return Fail(spawned.error());
  failed = worker->AwaitHello(deadline);
  if (failed) return worker;
  char byte = 0;
  failed = worker->AwaitByte(deadline, &byte);
  if (failed) return worker;
  if (byte == wp::kFailed) {
    std::uint32_t length = 0;
    std::string why;
    char part = 0;
    // The loader's message: a length, then the text (bounded, read byte by byte).
    for (std::size_t i = 0; i < sizeof length && !failed; ++i) {
      failed = worker->AwaitByte(deadline, &part);
      reinterpret_cast<char*>(&length)[i] = part;
    }
    for (std::uint32_t i = 0; i < std::min<std::uint32_t>(length, 4096) && !failed; ++i) {
      failed = worker->AwaitByte(deadline, &part);
      why += part;
    }
    if (!failed) failed = WorkerVerdict{Outcome::kCrashed, "runner: " + why};
  } else if (byte != wp::kReady) {
    worker->Kill();
    failed = WorkerVerdict{Outcome::kRejected, "worker protocol violation: the kernel wrote on its control channel"};
  }
  return worker;
}

Status WorkerProcess::Spawn(const SharedRegion& arena, const SharedRegion& inputs) {
  std::string pattern = (options_.scratch_parent / ("scratch-" + options_.role + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) return Fail(Error::Io("cannot create " + pattern));
  scratch_ = pattern;

  int sockets[2], log_pipe[2], info_pipe[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    return Fail(Error::Io(std::string("socketpair: ") + std::strerror(errno)));
  }
  if (::pipe2(log_pipe, O_CLOEXEC) != 0) return Fail(Error::Io(std::string("pipe: ") + std::strerror(errno)));
  (void)::fcntl(log_pipe[0], F_SETPIPE_SZ, kPipeBytes);
  const bool bwrap = !options_.bwrap.empty();
  const bool confine = !options_.wrapper.empty() && !options_.confine.empty();
  if (bwrap && ::pipe2(info_pipe, O_CLOEXEC) != 0) return Fail(Error::Io(std::string("pipe: ") + std::strerror(errno)));
  const int dev_null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);

  const std::string threads = options_.threads ? "1" : "0";
  const std::string seccomp = options_.seccomp ? "1" : "0";
  const std::string jit = options_.jit ? "1" : "0";
  std::vector<std::string> argv;
  if (bwrap) {
    argv = WorkerSandboxArgs(options_.bwrap, options_.env, scratch_);
    argv.insert(argv.end(), {"--ro-bind", options_.worker.string(), "/kestrel/kestrel-worker", "--ro-bind",
                             options_.library.string(), "/kestrel/kernel.so", "--info-fd", "6"});
    if (confine) {
      argv.insert(argv.end(), {"--ro-bind", options_.confine.string(), "/kestrel/kestrel-confine"});
      argv.push_back("/kestrel/kestrel-confine");
    }
    argv.insert(argv.end(), options_.wrapper.begin(), options_.wrapper.end());
    argv.insert(argv.end(), {"/kestrel/kestrel-worker", "/kestrel/kernel.so", threads, seccomp, jit});
  } else {
    if (confine) argv.push_back(options_.confine.string());
    argv.insert(argv.end(), options_.wrapper.begin(), options_.wrapper.end());
    argv.insert(argv.end(), {options_.worker.string(), options_.library.string(), threads, seccomp, jit});
  }
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<std::string> env = options_.env;
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string cwd = scratch_.string();

  // Sources moved above every target, so that no dup2 clobbers another.
  const int fds[] = {High(dev_null), High(log_pipe[1]), High(sockets[1]), High(arena.fd()), High(inputs.fd()),
                     High(info_pipe[1])};
  const pid_t pid = ::fork();
  if (pid < 0) return Fail(Error::Io(std::string("fork: ") + std::strerror(errno)));
  if (pid == 0) {
    ::setpgid(0, 0);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) ::sigaction(sig, &default_action, nullptr);
    const int targets[] = {0, 1, 3, 4, 5, 6};
    for (int i = 0; i < 6; ++i) {
      if (fds[i] >= 0 && ::dup2(fds[i], targets[i]) < 0) ::_exit(127);
    }
    if (::dup2(1, 2) < 0) ::_exit(127);
    // The job's file size limit, for good: a supervisor kept for many jobs
    // (runner/serve.h) sets each job's as its soft limit only.
    struct rlimit size {};
    if (::getrlimit(RLIMIT_FSIZE, &size) == 0) {
      size.rlim_max = size.rlim_cur;
      ::setrlimit(RLIMIT_FSIZE, &size);
    }
    ::syscall(SYS_close_range, bwrap ? 7U : 6U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
    if (::chdir(cwd.c_str()) != 0) ::_exit(127);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
  for (int fd : {dev_null, log_pipe[1], sockets[1], info_pipe[1]}) {
    if (fd >= 0) ::close(fd);
  }
  pid_ = pid;
  control_ = sockets[0];
  log_ = log_pipe[0];
  info_ = info_pipe[0];
  ::fcntl(control_, F_SETFL, O_NONBLOCK);
  ::fcntl(log_, F_SETFL, O_NONBLOCK);
  if (info_ >= 0) ::fcntl(info_, F_SETFL, O_NONBLOCK);
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  if (!bwrap) worker_pid_ = pid_;
  return {};
}

WorkerProcess::~WorkerProcess() {
  if (control_ >= 0) ::close(control_);  // end of its control stream: it exits
  if (pid_ > 0 && !reaped_) {
    pollfd exited{pidfd_, POLLIN, 0};
    if (pidfd_ < 0 || ::poll(&exited, 1, static_cast<int>(kExitGraceSeconds * 1000)) <= 0) Kill();
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  for (int fd : {pidfd_, log_, info_, notify_, stat_}) {
    if (fd >= 0) ::close(fd);
  }
  std::error_code ignored;
  if (!scratch_.empty() && !options_.wrapper_file.empty() && !options_.wrapper_output.empty()) {
    std::filesystem::copy_file(scratch_ / options_.wrapper_file, options_.wrapper_output,
                               std::filesystem::copy_options::overwrite_existing, ignored);
  }
  if (!scratch_.empty()) std::filesystem::remove_all(scratch_, ignored);
}

void WorkerProcess::Kill() {
  if (pid_ <= 0 || reaped_) return;
  if (worker_pid_ > 0 && worker_pid_ != pid_) ::kill(worker_pid_, SIGKILL);
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
}

void WorkerProcess::DrainLog() {
  if (log_ < 0) return;
  char chunk[65536];
  for (;;) {
    const ssize_t got = ::read(log_, chunk, sizeof chunk);
    if (got <= 0) return;
    std::size_t used = 0;
    if (log_head_.size() < kLogPart) {
      used = std::min<std::size_t>(kLogPart - log_head_.size(), static_cast<std::size_t>(got));
      log_head_.append(chunk, used);
    }
    log_tail_.append(chunk + used, static_cast<std::size_t>(got) - used);
    if (log_tail_.size() > 2 * kLogPart) {
      log_dropped_ += log_tail_.size() - kLogPart;
      log_tail_.erase(0, log_tail_.size() - kLogPart);
    }
  }
}

std::string WorkerProcess::TakeLog() {
  DrainLog();
  if (log_tail_.size() > kLogPart) {
    log_dropped_ += log_tail_.size() - kLogPart;
    log_tail_.erase(0, log_tail_.size() - kLogPart);
  }
  std::string text = log_head_;
  if (log_dropped_ > 0) text += "\n[... " + std::to_string(log_dropped_) + " bytes omitted ...]\n";
  text += log_tail_;
  log_head_.clear();
  log_tail_.clear();
  log_dropped_ = 0;
  return text;
}

void WorkerProcess::FindWorkerPid() {
  if (worker_pid_ > 0 || info_ < 0) return;
  // bwrap's info: {"child-pid": N, ...}; N is the namespace's first process
  // (bwrap's reaper), whose only child is the worker.
  char text[4096];
  const ssize_t got = ::read(info_, text, sizeof text - 1);
  if (got <= 0) return;
  text[got] = '\0';
  const char* key = std::strstr(text, "\"child-pid\"");
  if (key == nullptr) return;
  const long init = std::strtol(std::strchr(key, ':') + 1, nullptr, 10);
  std::ifstream children("/proc/" + std::to_string(init) + "/task/" + std::to_string(init) + "/children");
  long child = 0;
  if (children >> child && child > 0) worker_pid_ = static_cast<pid_t>(child);
}

double WorkerProcess::CpuSeconds() const {
  if (worker_pid_ <= 0 || reaped_) return -1;
  clockid_t clock;
  if (::clock_getcpuclockid(worker_pid_, &clock) != 0) return -1;
  timespec now{};
  if (::clock_gettime(clock, &now) != 0) return -1;
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

double WorkerProcess::RunQueueSeconds() const { return reaped_ ? -1 : runner::RunQueueSeconds(worker_pid_); }

namespace {

// Whether every thread of `pid` is stopped (or gone): the state after the
// command's closing parenthesis in each /proc/PID/task/TID/stat.
bool AllThreadsStopped(pid_t pid) {
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code error;
  std::filesystem::directory_iterator it(tasks, error);
  if (error) return false;
  for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (error) return false;
    std::ifstream stat(it->path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos) continue;  // gone meanwhile
    const char state = close + 2 < text.size() ? text[close + 2] : '?';
    if (state != 'T' && state != 't' && state != 'Z' && state != 'X') return false;
  }
  return true;
}

}  // namespace

WorkerProcess::Frozen WorkerProcess::Freeze(Deadline deadline, Clock::duration patience, double cpu_limit_s) {
  if (worker_pid_ <= 0 || reaped_) return Frozen::kKeptRunning;
  const double cpu_before = CpuSeconds();
  if (::kill(worker_pid_, SIGSTOP) != 0) return Frozen::kKeptRunning;
  const auto start = Clock::now();
  for (;;) {
    if (Stopped()) return Frozen::kStopped;
    const auto now = Clock::now();
    if (now >= deadline) return Frozen::kOutOfTime;
    if (now - start >= patience) {
      const double cpu = CpuSeconds();
      if (cpu < 0 || cpu_before < 0 || cpu - cpu_before > cpu_limit_s) return Frozen::kKeptRunning;
    }
    // Polled often at first (a worker stops in about 0.1 ms on an idle
    // core), then less, so as not to take its core while it waits for it;
    // the stop sent again each time then (one a kernel cancelled with
    // SIGCONT holds once every thread is seen stopped: none is left to
    // cancel it).
    const bool early = now - start < std::chrono::milliseconds(2);
    if (!early) ::kill(worker_pid_, SIGSTOP);
    std::this_thread::sleep_for(early ? std::chrono::microseconds(20) : std::chrono::microseconds(250));
  }
}

bool WorkerProcess::Stopped() {
  if (stat_ < 0) stat_ = ::open(("/proc/" + std::to_string(worker_pid_) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  char text[1024];
  const ssize_t got = stat_ >= 0 ? ::pread(stat_, text, sizeof text - 1, 0) : -1;
  if (got > 0) {
    text[got] = '\0';
    // "pid (comm) state ppid ...": the state is the 3rd field, num_threads
    // the 20th, 17 after it. The last ')' ends comm whatever comm holds.
    const char* close = std::strrchr(text, ')');
    if (close != nullptr && close[1] == ' ') {
      const char state = close[2];
      const char* field = close + 2;
      for (int i = 0; i < 17 && field != nullptr; ++i) {
        field = std::strchr(field, ' ');
        if (field != nullptr) ++field;
      }
      const long threads = field != nullptr ? std::strtol(field, nullptr, 10) : 0;
      if (state != 'T' && state != 't' && state != 'Z' && state != 'X') return false;
      if (threads == 1) return true;
    }
  }
  return AllThreadsStopped(worker_pid_);
}

void WorkerProcess::Thaw() {
  if (worker_pid_ > 0 && !reaped_) ::kill(worker_pid_, SIGCONT);
}

std::optional<WorkerVerdict> WorkerProcess::AwaitHello(Deadline deadline) {
  for (;;) {
    pollfd fds[3] = {{control_, POLLIN, 0}, {log_, POLLIN, 0}, {pidfd_, POLLIN, 0}};
    if (Clock::now() >= deadline) return TimedOut();
    if (::poll(fds, pidfd_ >= 0 ? 3 : 2, MillisecondsLeft(deadline)) <= 0) continue;
    if (fds[1].revents != 0) DrainLog();
    if (fds[0].revents == 0) {
      if (fds[2].revents != 0) return Ended();
      continue;
    }
    wp::Hello hello;
    iovec data{&hello, sizeof hello};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    const ssize_t got = ::recvmsg(control_, &message, MSG_CMSG_CLOEXEC);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (got != static_cast<ssize_t>(sizeof hello) || hello.magic != wp::Hello{}.magic) return Ended();
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr; header = CMSG_NXTHDR(&message, header)) {
      if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
        std::memcpy(&notify_, CMSG_DATA(header), sizeof(int));
      }
    }
    FindWorkerPid();
    return std::nullopt;
  }
}

std::optional<WorkerVerdict> WorkerProcess::TimedOut() {
  Kill();
  DrainLog();
  return WorkerVerdict{Outcome::kTimedOut, "timed out after " + Seconds(options_.timeout_s) + "s (wall-clock limit)"};
}

std::optional<WorkerVerdict> WorkerProcess::Notified() {
  if (notify_ < 0) return std::nullopt;
  pollfd pending{notify_, POLLIN, 0};
  if (::poll(&pending, 1, 0) <= 0 || (pending.revents & POLLIN) == 0) return std::nullopt;
  seccomp_notif* request = nullptr;
  seccomp_notif_resp* response = nullptr;
  if (::seccomp_notify_alloc(&request, &response) != 0) return std::nullopt;
  std::optional<WorkerVerdict> verdict;
  if (::seccomp_notify_receive(notify_, request) == 0) {
    const std::string name = SyscallName(request->data.nr);
    verdict = WorkerVerdict{Outcome::kRejected, "sandbox: the kernel tried to " + SyscallAttempt(name) + " (" + name + ")"};
  }
  ::seccomp_notify_free(request, response);
  if (verdict) {
    Kill();
    DrainLog();
  }
  return verdict;
}

std::optional<WorkerVerdict> WorkerProcess::Ended() {
  if (auto notified = Notified()) return notified;
  // The control channel closed or the process ended: give it a moment to
  // finish exiting, then make sure.
  bool killed = false;
  if (!reaped_) {
    pollfd exited{pidfd_, POLLIN, 0};
    if (pidfd_ < 0 || ::poll(&exited, 1, static_cast<int>(kExitGraceSeconds * 1000)) <= 0) {
      if (auto notified = Notified()) return notified;
      Kill();
      killed = true;
    }
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  DrainLog();
  int signal = WIFSIGNALED(status_) ? WTERMSIG(status_) : 0;
  const int code = WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
  if (signal == 0 && !options_.bwrap.empty() && code > 128 && code < 128 + NSIG) signal = code - 128;
  if (signal == SIGSYS) return WorkerVerdict{Outcome::kRejected, "sandbox: the kernel made a forbidden system call"};
  if (signal == SIGXCPU) return WorkerVerdict{Outcome::kTimedOut, "exceeded its CPU-time limit"};
  if (killed) return WorkerVerdict{Outcome::kCrashed, "closed its control channel"};
  if (signal != 0) return WorkerVerdict{Outcome::kCrashed, "killed by " + SignalName(signal)};
  if (code == 127 && options_.bwrap.empty()) return WorkerVerdict{Outcome::kCrashed, "runner: cannot start kestrel-worker"};
  return WorkerVerdict{Outcome::kCrashed, "exited with status " + std::to_string(code) + " before it reported the call done"};
}

std::optional<WorkerVerdict> WorkerProcess::AwaitByte(Deadline deadline, char* byte) {
  for (;;) {
    if (auto notified = Notified()) return notified;
    const ssize_t got = ::read(control_, byte, 1);
    if (got == 1) return std::nullopt;
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) return Ended();
    if (Clock::now() >= deadline) return TimedOut();
    pollfd fds[4] = {{control_, POLLIN, 0}, {log_, POLLIN, 0}, {pidfd_, POLLIN, 0}, {notify_, POLLIN, 0}};
    if (::poll(fds, 4, MillisecondsLeft(deadline)) <= 0) continue;
    if (fds[1].revents != 0) DrainLog();
    if (fds[2].revents != 0 && fds[0].revents == 0) return Ended();
  }
}

std::optional<WorkerVerdict> WorkerProcess::Send(const void* data, std::size_t bytes, Deadline deadline) {
  const auto* at = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t put = ::send(control_, at, bytes, MSG_NOSIGNAL);
    if (put > 0) {
      at += put;
      bytes -= static_cast<std::size_t>(put);
      continue;
    }
    if (put < 0 && errno != EAGAIN && errno != EINTR) return Ended();
    if (Clock::now() >= deadline) return TimedOut();
    pollfd fds[3] = {{control_, POLLOUT, 0}, {log_, POLLIN, 0}, {pidfd_, POLLIN, 0}};
    if (::poll(fds, 3, MillisecondsLeft(deadline)) <= 0) continue;
    if (fds[1].revents != 0) DrainLog();
    if (fds[2].revents != 0) return Ended();
  }
  return std::nullopt;
}

std::optional<WorkerVerdict> WorkerProcess::Inspect() {
  if (auto notified = Notified()) return notified;
  DrainLog();
  char stray;
  const ssize_t got = ::recv(control_, &stray, 1, MSG_DONTWAIT | MSG_PEEK);
  if (got == 1) {
    Kill();
    return WorkerVerdict{Outcome::kRejected, "worker protocol violation: the kernel wrote on its control channel"};
  }
  if (got == 0) return Ended();
  return std::nullopt;
}

std::optional<WorkerVerdict> WorkerProcess::Layout(const std::vector<std::uint64_t>& places, std::uint32_t args,
                                                   Deadline deadline) {
  if (auto bad = Inspect()) return bad;
  const wp::Message message{wp::kLayout, static_cast<std::uint32_t>(args == 0 ? 0 : places.size() / args), args};
  if (auto failed = Send(&message, sizeof message, deadline)) return failed;
  return Send(places.data(), places.size() * sizeof(std::uint64_t), deadline);
}

std::optional<WorkerVerdict> WorkerProcess::Request(std::uint32_t kind, std::uint32_t a, std::uint32_t b,
                                                    Deadline deadline, double* seconds) {
  if (auto bad = Inspect()) return bad;
  const wp::Message message{kind, a, b};
  const auto start = Clock::now();
  if (auto failed = Send(&message, sizeof message, deadline)) return failed;
  char byte = 0;
  if (auto failed = AwaitByte(deadline, &byte)) return failed;
  if (seconds != nullptr) *seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (byte != wp::kDone) {
    Kill();
    return WorkerVerdict{Outcome::kRejected, "worker protocol violation: the kernel wrote on its control channel"};
  }
  return std::nullopt;
}

std::optional<WorkerVerdict> WorkerProcess::Touch(std::uint64_t arena_bytes, std::uint64_t inputs_bytes,
                                                  Deadline deadline) {
  const auto pages = [](std::uint64_t bytes) {
    return static_cast<std::uint32_t>(
        std::min<std::uint64_t>((bytes + wp::kPageBytes - 1) / wp::kPageBytes, std::numeric_limits<std::uint32_t>::max()));
  };
  return Request(wp::kTouch, pages(arena_bytes), pages(inputs_bytes), deadline, nullptr);
}

std::optional<WorkerVerdict> WorkerProcess::Run(std::uint32_t first, std::uint32_t calls, Deadline deadline,
                                                double* seconds) {
  return Request(wp::kRun, first, calls, deadline, seconds);
}

}  // namespace kestrel::runner
