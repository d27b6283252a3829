#include "evaluators/runner/serve.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "evaluators/job.h"
#include "evaluators/runner/modes.h"

namespace kestrel::runner {
namespace {

using nlohmann::json;

double CpuSecondsUsed() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

bool WriteLine(int fd, const std::string& text) {
  std::string line = text + '\n';
  const char* at = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t put = ::write(fd, at, left);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    at += put;
    left -= static_cast<std::size_t>(put);
  }
  return true;
}

// The job's folder becomes the working directory, and its runner.log this
// process's stdout and stderr (created afresh, never through a link).
std::string EnterFolder(const std::string& dir) {
  if (dir.empty() || ::chdir(dir.c_str()) != 0) return "cannot enter the job's folder " + dir;
  std::fflush(stdout);
  std::fflush(stderr);
  ::unlink("runner.log");
  const int log = ::open("runner.log", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (log < 0) return "cannot create " + dir + "/runner.log";
  ::dup2(log, 1);
  ::dup2(log, 2);
  ::close(log);
  return "";
}

// The job's file size limit; the hard limit stays (each worker lowers its
// own to this: worker_process.cc).
void LimitFileSize(std::uint64_t bytes) {
  rlimit limit{};
  if (bytes == 0 || ::getrlimit(RLIMIT_FSIZE, &limit) != 0) return;
  limit.rlim_cur = std::min<rlim_t>(bytes, limit.rlim_max);
  ::setrlimit(RLIMIT_FSIZE, &limit);
}

}  // namespace

int Serve() {
  cpu_set_t initial;
  const bool have_mask = ::sched_getaffinity(0, sizeof initial, &initial) == 0;
  rlimit cpu{};
  ::getrlimit(RLIMIT_CPU, &cpu);
  const double retire_at_s =
      cpu.rlim_cur == RLIM_INFINITY ? 1e300 : static_cast<double>(cpu.rlim_cur) / 4;  // see serve.h
  Session session;
  std::string line;
  while (std::getline(std::cin, line)) {
    JobResult result;
    bool retire = false;
    try {
      const json request = json::parse(line);
      auto job = ParseJob(request.at("job").get<std::string>());
      if (!job) {
        result.error = "a bad job: " + job.error().message();
      } else if (const std::string entered = EnterFolder(request.at("dir").get<std::string>()); !entered.empty()) {
        result.nonce = job->nonce;
        result.error = entered;
      } else {
        result.nonce = job->nonce;
        LimitFileSize(request.value("file_size_limit", std::uint64_t{0}));
        // A job whose kernels may start threads gets every core back (an
        // earlier job may have pinned this process to one).
        if (job->allow_threads && have_mask) ::sched_setaffinity(0, sizeof initial, &initial);
        auto done = job->mode == "outputs"    ? RunOutputs(*job, result)
                    : job->mode == "evaluate" ? RunEvaluate(*job, result, &session)
                                              : RunTiming(*job, result, &session);
        if (!done) {
          result.error = done.error().message();
          session.Reset();
        }
      }
    } catch (const std::exception& e) {
      result.error = std::string("runner: a bad request: ") + e.what();
      retire = true;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    retire = retire || CpuSecondsUsed() > retire_at_s;
    if (!WriteLine(3, json{{"result", JobResultToJson(result)}, {"retire", retire}}.dump())) return 1;
    if (retire) return 0;
  }
  return 0;
}

}  // namespace kestrel::runner
