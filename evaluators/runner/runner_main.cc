// kestrel-runner JOB.json: runs one job of the evaluator (evaluators/job.h)
// and writes exactly one result JSON on fd 3 (on stdout when fd 3 is not
// open, for debugging by hand). kestrel-runner --host writes the machine's
// HostInfo there instead (the Slurm executor asks a compute node). Whatever the kernel prints goes to stdout and
// stderr, which the engine only logs.
//
// Exit status: 0 when the result was written (it may carry an error), 2 on a
// bad command line or job, 1 when the result could not be written.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>

#include "evaluators/job.h"
#include "evaluators/runner/modes.h"
#include "evaluators/runner/report.h"

namespace {

int Report(const std::string& text) { return kestrel::runner::WriteResult(text) ? 0 : 1; }

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--host") return Report(kestrel::HostToJson(kestrel::DetectHost()));
  if (argc != 2) {
    std::fprintf(stderr, "usage: kestrel-runner JOB.json | --host\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  auto job = kestrel::ParseJob(text.str());
  if (!job) {
    std::fprintf(stderr, "kestrel-runner: %s: %s\n", argv[1], job.error().message().c_str());
    return 2;
  }
  kestrel::JobResult result;
  result.nonce = job->nonce;
  try {
    auto done = job->mode == "outputs" ? kestrel::runner::RunOutputs(*job, result)
                                       : kestrel::runner::RunTiming(*job, result);
    if (!done) result.error = done.error().message();
  } catch (const std::exception& e) {
    result.error = std::string("runner: ") + e.what();
  }
  std::fflush(stdout);
  return Report(kestrel::JobResultToJson(result));
}
