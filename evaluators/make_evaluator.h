#pragma once
// MakeEvaluator: the mapping from a run config's "evaluator" and "executor"
// blocks to an Evaluator (the cpu, cuda or command one, its programs run here
// or as Slurm jobs).

#include <cstdint>
#include <filesystem>
#include <memory>

#include "core/error.h"
#include "core/task.h"
#include "evaluators/evaluator.h"
#include "evaluators/evaluator_config.h"

namespace kestrel {

// The evaluator a run config asks for (builds the task's reference); `seed`
// is the run's input seed, `runner_path` kestrel-runner's (empty: the
// default). A Slurm executor is checked first (its time limit, shared_dir,
// sbatch). InvalidArgument for a bad config or task, Unsupported for a cuda
// evaluator this build or host cannot run.
Result<std::unique_ptr<Evaluator>> MakeEvaluator(const Task& task, const EvaluatorConfig& config, std::uint64_t seed,
                                                 const std::filesystem::path& runner_path,
                                                 const ExecutorConfig& executor = {});

}  // namespace kestrel
