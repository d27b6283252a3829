#pragma once
// How a runner (kestrel-runner, kestrel-cuda-runner) hands back its one
// result: on fd 3 when the evaluator opened it (a pipe here, a file in the
// shared folder under Slurm), else on stdout, for running a job by hand.

#include <string>

namespace kestrel::runner {

// Writes all of `text`; false when it could not.
bool WriteResult(const std::string& text);

}  // namespace kestrel::runner
