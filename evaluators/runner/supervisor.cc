#include "evaluators/runner/supervisor.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace kestrel::runner {

Deadline JobDeadline(const Job& job) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(job.timeout_s));
}

WorkerOptions WorkerFor(const Job& job, const std::filesystem::path& library, const std::string& role) {
  WorkerOptions options;
  options.worker = job.worker;
  options.library = library;
  options.bwrap = job.bwrap;
  options.seccomp = job.seccomp;
  options.threads = job.allow_threads;
  options.jit = job.allow_jit && role == "candidate";  // the baseline, in the candidate's place
  options.env = job.worker_env;
  options.scratch_parent = std::filesystem::current_path();
  options.role = role;
  options.timeout_s = job.timeout_s;
  if (role == "candidate") {  // only the kernel profiled runs under the profiler
    options.wrapper = job.worker_wrapper;
    options.wrapper_file = job.wrapper_file;
    options.wrapper_output = job.wrapper_output;
    options.confine = job.wrapper_confine;
  }
  return options;
}

void ReportVerdict(JobResult& result, const WorkerVerdict& verdict, const std::string& role) {
  result.verdict = std::string(ToString(verdict.outcome));
  result.verdict_reason = role == "candidate" ? verdict.reason : "the " + role + ": " + verdict.reason;
}

void ForwardLog(WorkerProcess& worker) {
  const std::string log = worker.TakeLog();
  if (log.empty()) return;
  std::printf("[%s] %s%s", worker.role().c_str(), log.c_str(), log.back() == '\n' ? "" : "\n");
  std::fflush(stdout);
}

Result<OutputFile> OutputFile::Create(const std::filesystem::path& path) {
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Fail(Error::Io("cannot create " + path.string() + ": " + std::strerror(errno)));
  return OutputFile(fd, path);
}

OutputFile::OutputFile(OutputFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status OutputFile::Write(const std::byte* data, std::size_t bytes) {
  while (bytes > 0) {
    const ssize_t put = ::write(fd_, data, bytes);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return Fail(Error::Io("cannot write " + path_.string() + ": " + std::strerror(errno)));
    data += put;
    bytes -= static_cast<std::size_t>(put);
  }
  return {};
}

Status OutputFile::Close() {
  const int fd = std::exchange(fd_, -1);
  if (fd >= 0 && ::close(fd) != 0) return Fail(Error::Io("cannot write " + path_.string()));
  return {};
}

}  // namespace kestrel::runner
