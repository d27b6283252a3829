#include "evaluators/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

extern char** environ;

namespace kestrel {
namespace {

using Clock = std::chrono::steady_clock;

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Moves `fd` to a number >= 10 (close-on-exec), so that the child's dup2
// onto 0..3 can never clobber another of our descriptors.
Fd High(int fd) {
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return Fd(moved);
}

Status MakePipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Fail(Error::Io(std::string("pipe: ") + std::strerror(errno)));
  read_end = High(fds[0]);
  write_end = High(fds[1]);
  if (read_end.get() < 0 || write_end.get() < 0) return Fail(Error::Io("fcntl: cannot move a pipe"));
  return {};
}

// Keeps the first part of a stream and its last part, counting what was dropped.
class TrimmedBuffer {
 public:
  explicit TrimmedBuffer(std::size_t limit) : head_cap_(limit - limit / 4), tail_cap_(limit / 4) {}
  void Append(const char* data, std::size_t size) {
    const std::size_t to_head = std::min(size, head_cap_ - head_.size());
    head_.append(data, to_head);
    if (to_head == size) return;
    tail_.append(data + to_head, size - to_head);
    if (tail_.size() > 2 * tail_cap_ + 4096) {
      const std::size_t erase = tail_.size() - tail_cap_;
      tail_.erase(0, erase);
      dropped_ += erase;
    }
  }
  std::string Take() {
    if (tail_.size() > tail_cap_) {
      dropped_ += tail_.size() - tail_cap_;
      tail_.erase(0, tail_.size() - tail_cap_);
    }
    if (dropped_ == 0) return head_ + tail_;
    return head_ + "\n[... " + std::to_string(dropped_) + " bytes omitted ...]\n" + tail_;
  }

 private:
  std::size_t head_cap_;
  std::size_t tail_cap_;
  std::string head_;
  std::string tail_;
  std::size_t dropped_ = 0;
};

struct ChildSetup {
  const char* program;
  char* const* argv;
  char* const* envp;
  const char* cwd;  // nullptr: stay
  int stdin_fd, log_fd, result_fd, error_fd;
  double cpu_limit_s;
  std::uint64_t memory_limit_bytes, file_size_limit_bytes;
};

[[noreturn]] void ChildFail(int error_fd) {
  const int error = errno;
  [[maybe_unused]] ssize_t ignored = ::write(error_fd, &error, sizeof error);
  ::_exit(127);
}

void SetLimit(int resource, rlim_t value, rlim_t hard_extra = 0) {
  const struct rlimit limit = {value, value + hard_extra};
  ::setrlimit(resource, &limit);
}

// In the forked child: async-signal-safe calls only.
[[noreturn]] void ExecChild(const ChildSetup& setup) {
  ::setpgid(0, 0);
  sigset_t all;
  ::sigemptyset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) ::sigaction(sig, &default_action, nullptr);
  if (::dup2(setup.stdin_fd, 0) < 0 || ::dup2(setup.log_fd, 1) < 0 || ::dup2(setup.log_fd, 2) < 0) {
    ChildFail(setup.error_fd);
  }
  if (setup.result_fd >= 0 && ::dup2(setup.result_fd, 3) < 0) ChildFail(setup.error_fd);
  const unsigned first_closed = setup.result_fd >= 0 ? 4 : 3;
  // Everything else closes at exec (the error pipe too, which tells the
  // parent that exec succeeded).
  if (::syscall(SYS_close_range, first_closed, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */) != 0) {
    struct rlimit files {};
    ::getrlimit(RLIMIT_NOFILE, &files);
    const rlim_t max_fd = std::min<rlim_t>(files.rlim_cur, 1 << 16);
    for (rlim_t fd = first_closed; fd < max_fd; ++fd) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
  }
  SetLimit(RLIMIT_CORE, 0);
  // SIGXCPU at the soft limit (a hard limit equal to it would be SIGKILL),
  // SIGKILL a second later for a program that ignores SIGXCPU.
  if (setup.cpu_limit_s > 0) SetLimit(RLIMIT_CPU, static_cast<rlim_t>(std::ceil(setup.cpu_limit_s)), 1);
  if (setup.memory_limit_bytes > 0) SetLimit(RLIMIT_AS, setup.memory_limit_bytes);
  if (setup.file_size_limit_bytes > 0) SetLimit(RLIMIT_FSIZE, setup.file_size_limit_bytes);
  if (setup.cwd != nullptr && ::chdir(setup.cwd) != 0) ChildFail(setup.error_fd);
  ::execve(setup.program, setup.argv, setup.envp);
  ChildFail(setup.error_fd);
}

// The child's error pipe closes at exec, or carries errno when exec failed
// (the child is then reaped here).
Status AwaitExec(pid_t pid, int error_read, const std::string& program_path) {
  int exec_errno = 0;
  ssize_t got;
  do {
    got = ::read(error_read, &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  if (got != sizeof exec_errno) return {};
  int status;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return Fail(Error::Io("cannot execute " + program_path + ": " + std::strerror(exec_errno)));
}

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const auto& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

enum class ReadState { kData, kAgain, kEnd };

// Reads what is available on `fd` into a string (up to `limit`, then
// *truncated) or a trimmed buffer. kEnd at end of file or on an error.
ReadState ReadSome(int fd, std::string* into_string, TrimmedBuffer* into_buffer, std::size_t limit,
                   bool* truncated) {
  char chunk[65536];
  const ssize_t got = ::read(fd, chunk, sizeof chunk);
  if (got < 0) return errno == EINTR || errno == EAGAIN ? ReadState::kAgain : ReadState::kEnd;
  if (got == 0) return ReadState::kEnd;
  if (into_buffer != nullptr) into_buffer->Append(chunk, static_cast<std::size_t>(got));
  if (into_string != nullptr) {
    const std::size_t room = limit - std::min(limit, into_string->size());
    into_string->append(chunk, std::min(room, static_cast<std::size_t>(got)));
    if (static_cast<std::size_t>(got) > room) *truncated = true;
  }
  return ReadState::kData;
}

}  // namespace

std::string SubprocessResult::Describe(double timeout_s) const {
  if (!lost.empty()) return lost;
  if (timed_out) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", timeout_s);
    return std::string("timed out after ") + limit + "s (wall-clock limit)";
  }
  if (signal != 0) return "killed by " + SignalName(signal);
  return "exited with status " + std::to_string(exit_code);
}

void SubprocessResult::ReadAsBubblewrapped() {
  if (signal != 0 || exit_code <= 128 || exit_code > 128 + 64) return;
  signal = exit_code - 128;
  exit_code = -1;
}

std::string SignalName(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  if (abbrev == nullptr) return "signal " + std::to_string(signal);
  return std::string("SIG") + abbrev;
}

std::vector<std::string> EnvironmentWith(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const bool replaced = std::any_of(overrides.begin(), overrides.end(),
                                      [&](const std::string& o) { return name_of(o) == name_of(text); });
    if (!replaced) env.push_back(text);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

Result<std::filesystem::path> FindProgram(const std::string& program) {
  if (program.empty()) return Fail(Error::InvalidArgument("empty program name"));
  if (program.find('/') != std::string::npos) {
    if (::access(program.c_str(), X_OK) != 0) return Fail(Error::NotFound("cannot execute " + program));
    return std::filesystem::absolute(program);
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::filesystem::path candidate = std::filesystem::path(dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return candidate;
    start = end + 1;
  }
  return Fail(Error::NotFound(program + " not found in $PATH"));
}

Result<SubprocessResult> RunSubprocess(const SubprocessOptions& options) {
  if (options.argv.empty()) return Fail(Error::InvalidArgument("RunSubprocess: empty argv"));
  auto program = FindProgram(options.argv[0]);
  if (!program) return Fail(program.error());
  const std::string program_path = program->string();
  std::vector<char*> argv = CStrings(options.argv);
  std::vector<char*> envp = CStrings(options.env);
  const std::string cwd = options.cwd.string();

  Fd log_read, log_write, result_read, result_write, error_read, error_write;
  for (auto [r, w] : {std::pair{&log_read, &log_write}, {&result_read, &result_write}, {&error_read, &error_write}}) {
    if (auto made = MakePipe(*r, *w); !made) return Fail(made.error());
  }
  Fd dev_null;
  if (options.stdin_data.empty()) {
    dev_null = High(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (dev_null.get() < 0) return Fail(Error::Io("cannot open /dev/null"));
  } else {
    // An unlinked in-memory file: written whole before the child starts, so
    // neither side can block on the other, and no path names it.
    dev_null = High(::memfd_create("kestrel-stdin", MFD_CLOEXEC));
    if (dev_null.get() < 0) return Fail(Error::Io(std::string("memfd_create: ") + std::strerror(errno)));
    const char* at = options.stdin_data.data();
    std::size_t left = options.stdin_data.size();
    while (left > 0) {
      const ssize_t put = ::write(dev_null.get(), at, left);
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) return Fail(Error::Io(std::string("cannot write the child's stdin: ") + std::strerror(errno)));
      at += put;
      left -= static_cast<std::size_t>(put);
    }
    if (::lseek(dev_null.get(), 0, SEEK_SET) != 0) return Fail(Error::Io("cannot rewind the child's stdin"));
  }

  const ChildSetup setup{program_path.c_str(),
                         argv.data(),
                         options.env.empty() ? environ : envp.data(),
                         cwd.empty() ? nullptr : cwd.c_str(),
                         dev_null.get(),
                         log_write.get(),
                         options.result_pipe ? result_write.get() : -1,
                         error_write.get(),
                         options.cpu_limit_s,
                         options.memory_limit_bytes,
                         options.file_size_limit_bytes};
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) return Fail(Error::Io(std::string("fork: ") + std::strerror(errno)));
  if (pid == 0) ExecChild(setup);
  ::setpgid(pid, pid);  // also in the child: whichever runs first
  log_write.Reset();
  result_write.Reset();
  error_write.Reset();
  dev_null.Reset();

  if (auto started = AwaitExec(pid, error_read.get(), program_path); !started) return Fail(started.error());

  SubprocessResult result;
  TrimmedBuffer log(std::max<std::size_t>(options.log_limit_bytes, 64));
  Fd pid_fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(options.timeout_s > 0 ? options.timeout_s : 1e9));
  bool log_open = true;
  bool result_open = options.result_pipe;
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) break;
    const auto now = Clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    pollfd fds[3];
    nfds_t count = 0;
    if (log_open) fds[count++] = {log_read.get(), POLLIN, 0};
    if (result_open) fds[count++] = {result_read.get(), POLLIN, 0};
    if (pid_fd.get() >= 0) fds[count++] = {pid_fd.get(), POLLIN, 0};
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    const int wait_ms = static_cast<int>(std::min<long long>(left_ms, pid_fd.get() >= 0 ? 1000 : 5));
    if (::poll(fds, count, wait_ms) <= 0) continue;
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == log_read.get()) {
        log_open = ReadSome(log_read.get(), nullptr, &log, 0, nullptr) != ReadState::kEnd;
      }
      if (fds[i].fd == result_read.get()) {
        result_open = ReadSome(result_read.get(), &result.result, nullptr, options.result_limit_bytes,
                               &result.result_truncated) != ReadState::kEnd;
      }
    }
  }
  // Kill the group (the child on timeout; whatever it left behind otherwise)
  // while the child is unreaped, so that its pid cannot have been reused.
  ::kill(-pid, SIGKILL);
  if (result.timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  // Drain what is left; a descendant that escaped the group may still hold a
  // pipe open, so never block.
  for (Fd* fd : {&log_read, &result_read}) ::fcntl(fd->get(), F_SETFL, O_NONBLOCK);
  constexpr int kMaxDrainReads = 1024;  // bounded: an escaped writer may never stop
  for (int i = 0; log_open && i < kMaxDrainReads; ++i) {
    if (ReadSome(log_read.get(), nullptr, &log, 0, nullptr) != ReadState::kData) break;
  }
  for (int i = 0; result_open && i < kMaxDrainReads; ++i) {
    if (ReadSome(result_read.get(), &result.result, nullptr, options.result_limit_bytes,
                 &result.result_truncated) != ReadState::kData) {
      break;
    }
  }
  result.log = log.Take();
  return result;
}

Result<std::unique_ptr<ServedProcess>> ServedProcess::Start(const SubprocessOptions& options,
                                                           const std::filesystem::path& log_file) {
  if (options.argv.empty()) return Fail(Error::InvalidArgument("ServedProcess: empty argv"));
  auto program = FindProgram(options.argv[0]);
  if (!program) return Fail(program.error());
  const std::string program_path = program->string();
  std::vector<char*> argv = CStrings(options.argv);
  std::vector<char*> envp = CStrings(options.env);

  Fd answer_read, answer_write, error_read, error_write;
  for (auto [r, w] : {std::pair{&answer_read, &answer_write}, {&error_read, &error_write}}) {
    if (auto made = MakePipe(*r, *w); !made) return Fail(made.error());
  }
  // Its stdin is a socket, so that a request to a process that died is an
  // EPIPE here (send with MSG_NOSIGNAL), never a SIGPIPE to the engine.
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    return Fail(Error::Io(std::string("socketpair: ") + std::strerror(errno)));
  }
  Fd input_write = High(sockets[0]);
  Fd input_read = High(sockets[1]);
  if (input_write.get() < 0 || input_read.get() < 0) return Fail(Error::Io("fcntl: cannot move a socket"));
  ::shutdown(input_write.get(), SHUT_RD);
  Fd log = High(::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (log.get() < 0) return Fail(Error::Io("cannot create " + log_file.string() + ": " + std::strerror(errno)));
  const ChildSetup setup{program_path.c_str(),
                         argv.data(),
                         options.env.empty() ? environ : envp.data(),
                         nullptr,
                         input_read.get(),
                         log.get(),
                         answer_write.get(),
                         error_write.get(),
                         options.cpu_limit_s,
                         options.memory_limit_bytes,
                         options.file_size_limit_bytes};
  const pid_t pid = ::fork();
  if (pid < 0) return Fail(Error::Io(std::string("fork: ") + std::strerror(errno)));
  if (pid == 0) ExecChild(setup);
  ::setpgid(pid, pid);
  input_read.Reset();
  answer_write.Reset();
  error_write.Reset();
  log.Reset();
  if (auto started = AwaitExec(pid, error_read.get(), program_path); !started) return Fail(started.error());
  std::unique_ptr<ServedProcess> served(new ServedProcess());
  served->pid_ = pid;
  served->input_ = input_write.Release();
  served->answer_ = answer_read.Release();
  return served;
}

ServedProcess::~ServedProcess() {
  if (input_ >= 0) ::close(input_);  // the end of its requests: it exits
  if (pid_ > 0 && !ended_) {
    SubprocessResult ignored;
    Reap(ignored);
  }
  if (answer_ >= 0) ::close(answer_);
  if (pidfd_ >= 0) ::close(pidfd_);
}

void ServedProcess::Reap(SubprocessResult& result) {
  // Killed while unreaped, so that its pid cannot have been reused; with it
  // whatever it left in its group.
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  ended_ = true;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
}

bool ServedProcess::Alive() {
  if (ended_) return false;
  siginfo_t info{};
  if (::waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_) {
    SubprocessResult ignored;
    Reap(ignored);
    return false;
  }
  return true;
}

SubprocessResult ServedProcess::Request(const std::string& request, double timeout_s) {
  SubprocessResult result;
  const auto start = Clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s > 0 ? timeout_s : 1e9));
  auto finish = [&](bool timed_out) {
    result.timed_out = timed_out;
    // Kill first: an exited process's status is the same, and one that is
    // still running (a timeout) must not live on.
    Reap(result);
    result.result = std::move(pending_);
    pending_.clear();
    result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return result;
  };
  if (ended_) {
    result.lost = "the runner had already ended";
    return result;
  }
  if (pidfd_ < 0) pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  ::fcntl(input_, F_SETFL, O_NONBLOCK);
  ::fcntl(answer_, F_SETFL, O_NONBLOCK);
  std::string out = request + '\n';
  std::size_t sent = 0;
  for (;;) {
    const std::size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      result.result = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      result.exit_code = 0;
      result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
      return result;
    }
    const auto now = Clock::now();
    if (now >= deadline) return finish(true);
    pollfd fds[3];
    nfds_t count = 0;
    fds[count++] = {answer_, POLLIN, 0};
    if (sent < out.size()) fds[count++] = {input_, POLLOUT, 0};
    if (pidfd_ >= 0) fds[count++] = {pidfd_, POLLIN, 0};
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    if (::poll(fds, count, static_cast<int>(std::min<long long>(left_ms, pidfd_ >= 0 ? 1000 : 5))) < 0 &&
        errno != EINTR) {
      return finish(false);
    }
    if (sent < out.size()) {
      const ssize_t put = ::send(input_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (put > 0) sent += static_cast<std::size_t>(put);
      if (put < 0 && errno != EAGAIN && errno != EINTR) return finish(false);  // EPIPE: it is gone
    }
    bool closed = false;
    for (;;) {
      char chunk[65536];
      const ssize_t got = ::read(answer_, chunk, sizeof chunk);
      if (got > 0) {
        if (pending_.size() < (64u << 20)) pending_.append(chunk, static_cast<std::size_t>(got));
        continue;
      }
      closed = got == 0 || (errno != EAGAIN && errno != EINTR);
      break;
    }
    if (pending_.find('\n') != std::string::npos) continue;
    siginfo_t info{};
    const bool exited = ::waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
    if (closed || exited) return finish(false);
  }
}

}  // namespace kestrel
