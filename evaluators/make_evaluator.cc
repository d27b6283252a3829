#include "evaluators/make_evaluator.h"

#include "evaluators/command_evaluator.h"
#if KESTREL_WITH_CUDA
#include "evaluators/cuda_evaluator.h"
#endif
#include "evaluators/slurm_executor.h"

namespace kestrel {
namespace {

// Where an evaluator's measure step and its builds run.
struct Executors {
  std::shared_ptr<const Executor> measure = LocalExecutor();
  std::shared_ptr<const Executor> build = LocalExecutor();
};

Result<Executors> MakeExecutors(const ExecutorConfig& config) {
  Executors executors;
  if (config.kind != "slurm") return executors;
  auto slurm = MakeSlurmExecutor(
      SlurmOptions{config.partition, config.gres, config.time_limit, config.shared_dir, config.sbatch_args,
                   config.queue_limit});
  if (!slurm) return Fail(slurm.error());
  executors.measure = *slurm;
  if (config.builds) executors.build = *slurm;
  return executors;
}

// An evaluator's options with the fields every kind shares filled in.
template <class Options>
Options SharedFields(const MeasureOptions& measure, const Executors& executors) {
  Options options;
  options.measure = measure;
  options.executor = executors.measure;
  options.build_executor = executors.build;
  return options;
}

}  // namespace

Result<std::unique_ptr<Evaluator>> MakeEvaluator(const Task& task, const EvaluatorConfig& config, std::uint64_t seed,
                                                 const std::filesystem::path& runner_path,
                                                 const ExecutorConfig& executor) {
  auto executors = MakeExecutors(executor);
  if (!executors) return Fail(executors.error());
  MeasureOptions measure = config.measure;
  measure.seed = seed;
  if (config.kind == "command") {
    auto options = SharedFields<CommandEvaluatorOptions>(measure, *executors);
    options.build = config.build;
    options.run = config.run;
    options.build_timeout_s = config.build_timeout_s;
    options.sandbox = {config.sandbox, config.binds, config.devices, config.pass_env};
    return MakeCommandEvaluator(task, options);
  }
  if (config.kind == "cuda") {
#if KESTREL_WITH_CUDA
    auto options = SharedFields<CudaEvaluatorOptions>(measure, *executors);
    options.nvcc = config.compiler;
    options.arch = config.arch;
    options.flags = config.flags;
    options.sandbox = config.sandbox;
    options.binds = config.binds;
    options.pass_env = config.pass_env;
    return MakeCudaEvaluator(task, options);
#else
    return Fail(Error::Unsupported("evaluator.kind \"cuda\": this build has no CUDA evaluator (no CUDA toolkit in "
                                   "/usr/local/cuda when it was configured)"));
#endif
  }
  if (config.kind != "cpu") return Fail(Error::InvalidArgument("evaluator.kind: '" + config.kind + "' is not available"));
  if (task.language != "cpp") {
    return Fail(Error::InvalidArgument("task " + task.name + ": the cpu evaluator runs cpp kernels, and this is a " +
                                       task.language + " task; use \"evaluator\": {\"kind\": \"" +
                                       (task.language == "cuda" ? "cuda" : "command") + "\"} in a run config"));
  }
  auto options = SharedFields<CpuEvaluatorOptions>(measure, *executors);
  options.compiler = config.compiler;
  options.flags = config.flags;
  options.threads = config.threads;
  options.flush_cache = config.flush_cache;
  options.profile_counters = config.profile_counters;
  options.runner_path = runner_path;
  options.sandbox = config.sandbox;
  return MakeCpuEvaluator(task, options);
}

}  // namespace kestrel
