#pragma once
// The pristine inputs and inouts of every shape and input set of a job
// (job.h, PrepareLayout): what the supervisor copies into a worker's memory
// before a call and compares with after it. A run prepares them once, in
// its reference's job, as a file in the evaluator's work folder (no worker
// can see it: the sandbox binds none of that folder); every later job maps
// the file read-only instead of drawing millions of values again. Without
// a file they are drawn in memory.
//
// A missing file, one of the wrong size (truncated) or one made for another
// job (its header's layout hash) is refused with an error naming it: the
// evaluator then prepares it afresh (cpu_evaluator.cc).

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "evaluators/job.h"

namespace kestrel::runner {

class PreparedInputs {
 public:
  // job.inputs_file empty: drawn in memory; job.prepare_inputs: drawn and
  // written to job.inputs_file (created O_EXCL | O_NOFOLLOW, mode 0600);
  // else the file mapped read-only after its header and size are checked.
  static Result<PreparedInputs> For(const Job& job);
  PreparedInputs(PreparedInputs&& other) noexcept;
  PreparedInputs& operator=(PreparedInputs&&) = delete;
  PreparedInputs(const PreparedInputs&) = delete;
  ~PreparedInputs();

  // The elements of input or inout `arg` of shape `shape`, set `set`.
  const std::byte* Arg(int shape, int set, int arg) const;

 private:
  PreparedInputs(PreparedLayout layout, std::byte* data, int sets, std::size_t args_per_shape);
  static Result<PreparedInputs> Draw(const Job& job, PreparedLayout layout);
  static Result<PreparedInputs> Map(const Job& job, PreparedLayout layout);

  PreparedLayout layout_;
  std::byte* data_ = nullptr;  // the whole mapping, header included
  int sets_ = 1;
  std::vector<std::int64_t> index_;  // (shape, set, arg) -> segment, -1 for other roles
  std::size_t max_args_ = 0;
};

}  // namespace kestrel::runner
