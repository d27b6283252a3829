#pragma once
// The command evaluator (docs/COMMAND_PROTOCOL.md): the user's own build and
// run commands, for hardware Kestrel has no evaluator of its own for (a GPU
// through Triton, Trainium through NKI, a TPU through Pallas, anything).
//
// Each command is an argv (no shell) whose elements may hold placeholders:
//   {source}     the candidate's source file (kernel.<ext of the task's first seed>)
//   {build_dir}  the candidate's build folder (content-addressed; the source is in it)
//   {workdir}    a fresh, empty folder for this evaluation (run only)
//   {answer}     where the run command writes its answer: {workdir}/answer.json
//   {job}        {workdir}/job.json: the task spec, timed and check shapes, seed,
//                knobs, min_time, min_samples, input_sets, nonce
//   {task_dir}   the task's folder;  {reference}  the task's reference file
//   {knob_flags} -DNAME=value per knob; as a whole element it becomes one element per knob
//   {knobs}      the knobs as a JSON object;  {seed} {nonce} {min_time} {min_samples}
//   {shapes}     the timed shapes as a JSON array
// The build command (optional) runs in {build_dir}; a nonzero exit is
// build_failed with its trimmed output. The run command runs in {workdir}
// in its own process group, killed whole at run_timeout_s (timed_out). Its
// answer is validated field by field (command_answer.h); a missing or
// malformed one is `rejected` ("protocol violation: ..."), unless the command
// crashed. Kestrel computes the statistics, the speedup, GFLOP/s and GB/s
// from the raw samples, and applies the speedup cap, as for any evaluator.
//
// With options.slurm enabled the run command is submitted with sbatch and
// its work dir is made under slurm.shared_dir, which the nodes must see.
//
// When made, the evaluator evaluates the task's reference as a candidate: a
// set-up whose commands cannot measure the reference is a bad config.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "evaluators/evaluator.h"
#include "evaluators/slurm_job.h"

namespace kestrel {

struct CommandEvaluatorOptions {
  std::vector<std::string> build;  // argv with placeholders; empty: no build step
  std::vector<std::string> run;    // argv with placeholders; required
  double build_timeout_s = 600;
  double run_timeout_s = 600;
  double min_time_s = 0.5;  // passed on as {min_time}
  int min_samples = 10;     // passed on as {min_samples}
  int input_sets = 3;       // in {job}
  double max_speedup = 50;  // a higher speedup is flagged for review (rejected), as for the cpu evaluator
  std::uint64_t seed = 1;
  std::filesystem::path work_dir;  // default: a fresh dir under $TMPDIR (or slurm.shared_dir), removed with the evaluator
  // When enabled, the run command is a Slurm job (slurm_job.h, docs/SLURM.md):
  // its state says how it ended (TIMEOUT: timed_out; CANCELLED, NODE_FAIL,
  // ...: crashed); Kestrel gives up after run_timeout_s plus the time limit.
  SlurmOptions slurm;
};

// The placeholders a command may use, for messages and validation.
const std::vector<std::string>& CommandPlaceholders();

// The commands' shape alone, without a task: a run command is given, every
// placeholder is known and in a command that may use it. InvalidArgument
// naming the element ("evaluator.run[5]: unknown placeholder {sauce} ...").
Status ValidateCommands(const CommandEvaluatorOptions& options);

// Validates the commands (known placeholders, the run command's program
// exists), evaluates the reference, and returns the evaluator.
// InvalidArgument for a bad set-up.
Result<std::unique_ptr<Evaluator>> MakeCommandEvaluator(const Task& task, const CommandEvaluatorOptions& options);

}  // namespace kestrel
