#include "search/search.h"

#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/host.h"
#include "store/store.h"

namespace kestrel {

std::vector<std::filesystem::path> TaskDirs(const std::vector<std::filesystem::path>& extra) {
  std::vector<std::filesystem::path> dirs{BuiltinTasksDir()};
  dirs.insert(dirs.end(), extra.begin(), extra.end());
  return dirs;
}

Result<std::unique_ptr<Evaluator>> MakeEvaluator(const Task& task, const EvaluatorConfig& config, std::uint64_t seed,
                                                 const std::filesystem::path& runner_path) {
  if (config.kind != "cpu") return Fail(Error::InvalidArgument("evaluator.kind: '" + config.kind + "' is not available"));
  if (task.language != "cpp") {
    return Fail(Error::InvalidArgument("task " + task.name + ": language '" + task.language +
                                       "' needs an evaluator this build does not have (the cpu evaluator takes cpp)"));
  }
  CpuEvaluatorOptions options;
  options.compiler = config.compiler;
  options.flags = config.flags;
  options.threads = config.threads;
  options.min_time_s = config.min_time_s;
  options.min_samples = config.min_samples;
  options.input_sets = config.input_sets;
  options.run_timeout_s = config.timeout_s;
  options.seed = seed;
  options.runner_path = runner_path;
  return MakeCpuEvaluator(task, options);
}

Result<std::vector<std::unique_ptr<Mutator>>> MakeMutators(const RunConfig& config) {
  std::vector<std::unique_ptr<Mutator>> mutators;
  for (std::size_t i = 0; i < config.mutators.size(); ++i) {
    const MutatorConfig& mutator = config.mutators[i];
    if (mutator.kind == "knob") {
      mutators.push_back(MakeKnobMutator());
    } else {
      return Fail(Error::InvalidArgument(fmt::format(
          "mutators[{}]: the '{}' mutator is not available in this build yet; use {{\"kind\": \"knob\"}}", i,
          mutator.kind)));
    }
  }
  return mutators;
}

Result<RunSummary> RunSearch(const RunConfig& config, const SearchOptions& options) {
  auto task = FindTask(config.task, TaskDirs(options.task_dirs));
  if (!task) return Fail(task.error().IsNotFound() ? Error::InvalidArgument(task.error().message()) : task.error());
  auto mutators = MakeMutators(config);
  if (!mutators) return Fail(mutators.error());
  auto strategy = MakeStrategy(config.strategy);
  if (!strategy) return Fail(strategy.error());

  auto store = Store::Open(options.db_path);
  if (!store) return Fail(store.error());
  auto task_id = (*store)->UpsertTask(*task);
  if (!task_id) return Fail(task_id.error());
  auto graph_id = (*store)->GraphForTask(*task_id, options.fresh);
  if (!graph_id) return Fail(graph_id.error());

  if (options.progress) *options.progress << "kestrel: building the reference of " << task->name << "...\n" << std::flush;
  auto evaluator = MakeEvaluator(*task, config.evaluator, config.seed, options.runner_path);
  if (!evaluator) return Fail(evaluator.error());
  auto host_id = (*store)->UpsertHost((*evaluator)->Host());
  if (!host_id) return Fail(host_id.error());

  RunRecord run;
  run.task_id = *task_id;
  run.task_name = task->name;
  run.graph_id = *graph_id;
  run.host_id = *host_id;
  run.config_json = ToJson(config).dump();
  run.started_at = NowMillis();
  auto run_id = (*store)->CreateRun(run);
  if (!run_id) return Fail(run_id.error());
  if (options.progress) {
    *options.progress << fmt::format("kestrel: run {} on task {} (graph {}), strategy {}, db {}\n", *run_id, task->name,
                                     *graph_id, config.strategy.name, options.db_path.string())
                      << std::flush;
  }

  EngineOptions engine_options{*run_id, *graph_id, *host_id, options.progress};
  Engine engine(**store, *task, **evaluator, config, std::move(*mutators), std::move(*strategy), engine_options);
  return engine.Run();
}

}  // namespace kestrel
