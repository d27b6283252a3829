#pragma once
// What both of the supervisor's modes share: the job's wall clock, each
// kernel's worker options, verdicts into the result, and the files the
// supervisor writes (created afresh, never through a link or a FIFO left
// where a kernel could once write).

#include <cstddef>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "evaluators/job.h"
#include "evaluators/runner/worker_process.h"

namespace kestrel::runner {

Deadline JobDeadline(const Job& job);
WorkerOptions WorkerFor(const Job& job, const std::filesystem::path& library, const std::string& role);
// Records how a worker ended the job; the role names the kernel when it
// was not the candidate ("the reference: killed by SIGSEGV").
void ReportVerdict(JobResult& result, const WorkerVerdict& verdict, const std::string& role);
// Prints what a worker printed to the supervisor's stdout (the engine's log).
void ForwardLog(WorkerProcess& worker);

// A file the supervisor writes: whatever was at the path (a file, a link,
// a FIFO) is unlinked, then it is created O_EXCL | O_NOFOLLOW, mode 0600.
class OutputFile {
 public:
  static Result<OutputFile> Create(const std::filesystem::path& path);
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  ~OutputFile();
  Status Write(const std::byte* data, std::size_t bytes);
  Status Close();

 private:
  OutputFile(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::filesystem::path path_;
};

}  // namespace kestrel::runner
