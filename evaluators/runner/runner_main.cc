// kestrel-runner - | JOB.json: the supervisor of one job of the evaluator
// (evaluators/job.h); kestrel-runner --serve: one kept for many jobs
// (runner/serve.h). It never loads a kernel: each kernel runs in a
// kestrel-worker it starts in its sandbox (runner/worker_process.h), while
// it keeps the job, the inputs, the clock and the judgement of every call.
// The job comes on stdin ("-"; or a file named on the command line, when
// run by hand) and exactly one result JSON goes to fd 3 (stdout when fd
// 3 is not open, for debugging by hand). kestrel-runner --host writes the
// machine's HostInfo there instead (the Slurm executor asks a compute
// node). What the workers print is forwarded to stdout, which the engine
// only logs.
//
// Exit status: 0 when the result was written (it may carry an error or a
// verdict), 2 on a bad command line or job, 1 when the result could not be
// written.

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "evaluators/job.h"
#include "evaluators/runner/modes.h"
#include "evaluators/runner/report.h"
#include "evaluators/runner/serve.h"

namespace {

int Report(const std::string& text) { return kestrel::runner::WriteResult(text) ? 0 : 1; }

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--host") return Report(kestrel::HostToJson(kestrel::DetectHost()));
  if (argc != 2) {
    std::fprintf(stderr, "usage: kestrel-runner - | JOB.json | --host | --serve\n");
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);  // a worker that dies mid-message is an EPIPE, judged as its end
  if (std::string(argv[1]) == "--serve") return kestrel::runner::Serve();
  std::stringstream text;
  if (std::string(argv[1]) == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(argv[1], std::ios::binary);
    text << in.rdbuf();
  }
  auto job = kestrel::ParseJob(text.str());
  if (!job) {
    std::fprintf(stderr, "kestrel-runner: %s: %s\n", argv[1], job.error().message().c_str());
    return 2;
  }
  kestrel::JobResult result;
  result.nonce = job->nonce;
  try {
    auto done = job->mode == "outputs"  ? kestrel::runner::RunOutputs(*job, result)
                : job->mode == "evaluate" ? kestrel::runner::RunEvaluate(*job, result)
                                          : kestrel::runner::RunTiming(*job, result);
    if (!done) result.error = done.error().message();
  } catch (const std::exception& e) {
    result.error = std::string("runner: ") + e.what();
  }
  std::fflush(stdout);
  return Report(kestrel::JobResultToJson(result));
}
