#pragma once
// kestrel-runner --serve: a supervisor kept for the whole run, one per
// measure slot (evaluators/runner_pool.h starts and reuses it). It reads
// jobs from stdin, one line each:
//
//   {"dir": FOLDER, "file_size_limit": BYTES, "job": JOB}
//
// (JOB: the text of a job, evaluators/job.h), runs each in FOLDER (its
// workers' scratch folders are made there, and what the job prints goes
// to FOLDER/runner.log), and answers each on fd 3 with one line:
//
//   {"result": RESULT, "retire": BOOL}
//
// (RESULT: the text of the job's result). Evaluate and time jobs share one
// Session (runner/modes.h): the regions and the reference's worker are made
// once while the jobs are alike. "retire": the server has used a quarter
// of its CPU-time limit (RLIMIT_CPU, which it keeps from its start, so
// that every job has three quarters of it), or its session failed: the
// caller starts another for the next job. It exits at the end of stdin.

namespace kestrel::runner {

// Returns the exit status: 0 at the end of stdin, 1 when fd 3 is closed.
int Serve();

}  // namespace kestrel::runner
