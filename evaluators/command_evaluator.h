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
// The run command runs in a sandbox (command_sandbox.h): it sees the task's
// folder, its build folder and its work dir, and what the config binds.
//
// With a Slurm executor the run command is a batch job and the work dir is
// made under its shared folder, which the nodes must see.
//
// When made, the evaluator evaluates the task's reference as a candidate: a
// set-up whose commands cannot measure the reference is a bad config.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "evaluators/command_sandbox.h"
#include "evaluators/evaluator.h"

namespace kestrel {

struct CommandEvaluatorOptions {
  std::vector<std::string> build;  // argv with placeholders; empty: no build step
  std::vector<std::string> run;    // argv with placeholders; required
  double build_timeout_s = 600;
  // min_time and min_samples are passed on as {min_time} and {min_samples},
  // input_sets in {job}; a speedup above max_speedup is flagged for review
  // (rejected), as for the cpu evaluator.
  MeasureOptions measure{.run_timeout_s = 600};
  std::filesystem::path work_dir;  // default: a fresh dir under the executor's ScratchRoot(), removed with the evaluator
  // Where the run command runs (a Slurm executor: slurm_executor.h,
  // docs/SLURM.md; Kestrel gives up after run_timeout_s plus its time
  // limit) and where the build command runs.
  std::shared_ptr<const Executor> executor = LocalExecutor();
  std::shared_ptr<const Executor> build_executor = LocalExecutor();
  // The run command's sandbox (command_sandbox.h): bubblewrap unless "none".
  CommandSandboxConfig sandbox;
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
