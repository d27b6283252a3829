#include "search/run_session.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/host.h"
#include "core/json_text.h"
#include "evaluators/make_evaluator.h"
#include "search/engine/line_prefix.h"
#include "search/graph_lock.h"
#include "search/mutators/analyst.h"
#include "search/mutators/llm_mutator.h"
#include "search/mutators/reviewer.h"
#include "store/store.h"

namespace kestrel {

std::vector<std::filesystem::path> TaskDirs(const std::vector<std::filesystem::path>& extra) {
  std::vector<std::filesystem::path> dirs{BuiltinTasksDir()};
  dirs.insert(dirs.end(), extra.begin(), extra.end());
  return dirs;
}

namespace {

// A client for an llm endpoint config; `where` names it in messages.
Result<std::shared_ptr<LlmClient>> ClientFor(const MutatorConfig& config, const std::string& where) {
  // The key lives in the client only: never in the config, the store or a message.
  auto key = ReadApiKey(config.api_key_env);
  if (!key) return Fail(key.error().WithContext(where));
  auto client = LlmClient::Make(EndpointFor(config, std::move(*key)));
  if (!client) return Fail(client.error().WithContext(where));
  return std::shared_ptr<LlmClient>(std::move(*client));
}

}  // namespace

Status CheckApiKeys(const RunConfig& config) {
  for (std::size_t i = 0; i < config.mutators.size(); ++i) {
    if (config.mutators[i].kind != "llm") continue;
    if (auto key = ReadApiKey(config.mutators[i].api_key_env); !key) {
      return Fail(key.error().WithContext(fmt::format("mutators[{}]", i)));
    }
  }
  if (const auto endpoint = AnalystEndpoint(config)) {
    if (auto key = ReadApiKey(endpoint->api_key_env); !key) return Fail(key.error().WithContext("analyst"));
  }
  return {};
}

Result<std::vector<std::unique_ptr<Mutator>>> MakeMutators(const RunConfig& config, const Task& task,
                                                           const HostInfo& host, std::shared_ptr<Budget> budget,
                                                           std::shared_ptr<Reviewer> reviewer) {
  std::vector<std::unique_ptr<Mutator>> mutators;
  auto shared_task = std::make_shared<const Task>(task);
  // The mutators' clients first: a missing key is named by the mutator the
  // user wrote, before the analyst that borrows its endpoint by default.
  std::vector<std::shared_ptr<LlmClient>> clients(config.mutators.size());
  for (std::size_t i = 0; i < config.mutators.size(); ++i) {
    if (config.mutators[i].kind != "llm") continue;
    auto client = ClientFor(config.mutators[i], fmt::format("mutators[{}]", i));
    if (!client) return Fail(client.error());
    clients[i] = std::move(*client);
  }
  std::shared_ptr<Analyst> analyst;
  if (const auto endpoint = AnalystEndpoint(config)) {
    auto client = ClientFor(*endpoint, "analyst");
    if (!client) return Fail(client.error());
    analyst = std::make_shared<Analyst>(*endpoint, std::move(*client), budget);
  }
  for (std::size_t i = 0; i < config.mutators.size(); ++i) {
    const MutatorConfig& mutator = config.mutators[i];
    if (mutator.kind == "knob") {
      mutators.push_back(MakeKnobMutator());
    } else if (mutator.kind == "llm") {
      mutators.push_back(MakeLlmMutator(mutator, std::move(clients[i]),
                                        LlmContext{shared_task, host, config.evaluator.threads, budget, analyst, reviewer}));
    } else {
      return Fail(Error::InvalidArgument(fmt::format(
          "mutators[{}]: the '{}' mutator is not available in this build yet; use {{\"kind\": \"knob\"}}", i,
          mutator.kind)));
    }
  }
  return mutators;
}

Result<Calibration> EnsureCalibration(Store& store, std::int64_t host_id, Evaluator& evaluator, int threads,
                                      const SessionEvents& events) {
  auto stored = store.LatestCalibration(host_id, threads);
  if (!stored) return Fail(stored.error());
  // A row measured before the bandwidth curve (core/roofline.h) is measured
  // again, once: the new row is the latest.
  if (*stored && !(*stored)->curve.empty()) {
    evaluator.SetCalibration(**stored);
    return **stored;
  }
  if (!evaluator.CanCalibrate()) return Fail(Error::NotFound("this evaluator cannot calibrate its host"));
  Notify(events.calibrating);
  auto measured = evaluator.Calibrate();
  if (!measured) return Fail(measured.error());
  if (auto id = store.AddCalibration(host_id, *measured); !id) return Fail(id.error());
  Notify(events.calibrated, *measured, threads);
  evaluator.SetCalibration(*measured);
  return *measured;
}

namespace {

// Everything a run needs besides its store rows.
struct Prepared {
  Task task;
  std::unique_ptr<Evaluator> evaluator;
  std::vector<std::unique_ptr<Mutator>> mutators;
  std::unique_ptr<Strategy> strategy;
};

Result<Prepared> Prepare(const RunConfig& config, const SearchOptions& options, std::shared_ptr<Budget> budget) {
  Prepared prepared;
  std::ostringstream notes;
  auto task = FindTask(config.task, TaskDirs(options.task_dirs), &notes);
  std::istringstream lines(notes.str());
  for (std::string line; std::getline(lines, line);) Notify(options.events.task_note, line);
  if (!task) {
    // An unknown task is the user's mistake (exit code 2), like a bad config.
    return Fail(task.error().IsNotFound() ? Error::InvalidArgument(task.error().message()) : task.error());
  }
  prepared.task = std::move(*task);
  auto mutators = MakeMutators(config, prepared.task, DetectHost(), std::move(budget), options.reviewer);
  if (!mutators) return Fail(mutators.error());
  prepared.mutators = std::move(*mutators);
  auto strategy = MakeStrategy(config.strategy);
  if (!strategy) return Fail(strategy.error());
  prepared.strategy = std::move(*strategy);
  Notify(options.events.building_reference, prepared.task.name);
  auto evaluator = MakeEvaluator(prepared.task, config.evaluator, config.seed, options.runner_path, config.executor);
  if (!evaluator) return Fail(evaluator.error());
  prepared.evaluator = std::move(*evaluator);
  // LLM-written kernels are untrusted code: not without the whole sandbox,
  // unless the user said so (evaluator.sandbox "none").
  const bool untrusted = std::any_of(config.mutators.begin(), config.mutators.end(),
                                     [](const MutatorConfig& mutator) { return mutator.kind != "knob"; });
  if (const std::string gap = prepared.evaluator->SandboxGap(); untrusted && !gap.empty()) {
    return Fail(Error::InvalidArgument(
        "this run's LLM-written kernels would run without the full sandbox (" + gap +
        "); install bubblewrap and allow user namespaces (kestrel doctor shows each layer), or set "
        "\"evaluator\": {\"sandbox\": \"none\"} in the run config to run them unconfined"));
  }
  return prepared;
}

Result<RunSummary> Drive(Store& store, Prepared& prepared, const RunConfig& config, const SessionEvents& events,
                         EngineOptions engine_options) {
  // Unconfined by the user's choice: every line of the run says so.
  std::optional<LinePrefixStream> warned;
  if (prepared.evaluator->Unconfined()) {
    Notify(events.unconfined);
    if (engine_options.progress != nullptr) {
      warned.emplace(*engine_options.progress, "[NO SANDBOX] ");
      engine_options.progress = &*warned;
    }
  }
  auto host_id = store.UpsertHost(prepared.evaluator->Host());
  if (!host_id) return Fail(host_id.error());
  engine_options.host_id = *host_id;
  if (auto calibration = EnsureCalibration(store, *host_id, *prepared.evaluator, config.evaluator.threads,
                                           events);
      !calibration) {
    // Not fatal: measurements then carry no roofline fraction and only the speedup cap guards plausibility.
    Notify(events.calibration_failed, calibration.error().message());
    (void)store.AddRunEvent(engine_options.run_id, "calibration_failed",
                            JsonText(nlohmann::json{{"error", calibration.error().message()}}));
  }
  // The baseline as this session timed it: what a run that finds no
  // correct kernel still says of the task (a suite scores such a failure at
  // the reference's standing over the baseline).
  if (const double baseline = prepared.evaluator->BaselineSpeedup(); baseline > 0) {
    (void)store.AddRunEvent(engine_options.run_id, "baseline", JsonText(nlohmann::json{{"speedup", baseline}}));
  }
  Engine engine(store, prepared.task, *prepared.evaluator, config, std::move(prepared.mutators),
                std::move(prepared.strategy), engine_options);
  return engine.Run();
}

Result<RunRecord> ChooseRunToResume(Store& store, std::optional<std::int64_t> run_id) {
  if (run_id) {
    auto run = store.GetRun(*run_id);
    if (!run && run.error().IsNotFound()) {  // a user's mistake: exit 2, as for any id that names nothing
      return Fail(Error::InvalidArgument(fmt::format("--run {}: no run {} in the database", *run_id, *run_id)));
    }
    return run;
  }
  auto runs = store.ListRuns();
  if (!runs) return Fail(runs.error());
  for (const RunRecord& run : *runs) {
    if (run.status != RunStatus::kFinished) return run;
  }
  return Fail(Error::NotFound("no unfinished run in the database (give --run ID, with --time or --max-evals, to "
                              "extend a finished one)"));
}

}  // namespace

Result<RunSummary> RunSearch(const RunConfig& config, const SearchOptions& options) {
  auto budget = std::make_shared<Budget>(config.budget);
  auto prepared = Prepare(config, options, budget);
  if (!prepared) return Fail(prepared.error());
  auto store = Store::Open(options.db_path);
  if (!store) return Fail(store.error());
  auto task_id = (*store)->UpsertTask(prepared->task);
  if (!task_id) return Fail(task_id.error());
  std::int64_t other_definition = 0;
  auto graph_id = (*store)->GraphForTask(*task_id, options.fresh, prepared->task.Definition(), &other_definition);
  if (!graph_id) return Fail(graph_id.error());
  if (other_definition != 0) {
    Notify(options.events.task_note,
           fmt::format("kestrel: task {} is not as graph {} was searched (its task.json or its reference changed): "
                       "graph {} searches it as it is now; graph {} keeps its results",
                       prepared->task.name, other_definition, *graph_id, other_definition));
  }
  auto lock = GraphLock::Take(options.db_path, *graph_id);
  if (!lock) return Fail(lock.error());
  if (!*lock) {
    return Fail(Error::Io(fmt::format(
        "task {}'s graph (graph {}) is being searched by another kestrel process (`kestrel runs` shows it running): "
        "two searches of one graph would each miss the other's nodes. Wait for it to end, or give --fresh to "
        "search a graph of its own",
        prepared->task.name, *graph_id)));
  }
  auto host_id = (*store)->UpsertHost(prepared->evaluator->Host());
  if (!host_id) return Fail(host_id.error());

  RunRecord run;
  run.task_id = *task_id;
  run.task_name = prepared->task.name;
  run.graph_id = *graph_id;
  run.host_id = *host_id;
  run.config_json = JsonText(ToJson(config));
  run.started_at = NowMillis();
  auto run_id = (*store)->CreateRun(run);
  if (!run_id) return Fail(run_id.error());
  if (options.reviewer) options.reviewer->Attach(options.db_path, *run_id);
  Notify(options.events.started, RunOpened{*run_id, prepared->task.name, *graph_id}, config.strategy.name,
         options.db_path.string());
  EngineOptions engine_options;
  engine_options.run_id = *run_id;
  engine_options.graph_id = *graph_id;
  engine_options.progress = options.progress;
  engine_options.progress_mode = options.progress_mode;
  engine_options.log_interval_s = options.log_interval_s;
  engine_options.budget = std::move(budget);
  return Drive(**store, *prepared, config, options.events, engine_options);
}

Result<RunSummary> ResumeSearch(const ResumeOptions& resume, const SearchOptions& options) {
  auto store = Store::Open(options.db_path);
  if (!store) return Fail(store.error());
  auto run = ChooseRunToResume(**store, resume.run_id);
  if (!run) return Fail(run.error());
  auto lock = GraphLock::Take(options.db_path, run->graph_id);
  if (!lock) return Fail(lock.error());
  if (!*lock) {
    return Fail(Error::Io(fmt::format(
        "run {} (task {}) is running in another kestrel process, or another run searches its graph {}: it is "
        "resumed once that process has ended",
        run->id, run->task_name, run->graph_id)));
  }
  if (run->status == RunStatus::kFailed && !resume.retry) {
    return Fail(Error::Internal(fmt::format(
        "run {} stopped with an error and is not resumed: {}\nResuming it would meet the same failure: it is a "
        "bug in Kestrel (please report it with this message). Once a Kestrel with the fix is installed, `kestrel "
        "resume --run {} --retry` continues it from its saved state.",
        run->id, run->stop_reason, run->id)));
  }
  const std::string origin = fmt::format("{}: run {}'s saved config", options.db_path.string(), run->id);
  nlohmann::json saved;
  try {
    saved = nlohmann::json::parse(run->config_json);
  } catch (const nlohmann::json::exception& error) {
    return Fail(Error::Corruption(origin + ": " + error.what()));
  }
  auto config = ParseRunConfig(saved, origin);
  if (!config) return Fail(config.error());
  auto events = (*store)->RunEvents(run->id);
  if (!events) return Fail(events.error());

  EngineOptions engine_options;
  engine_options.run_id = run->id;
  engine_options.graph_id = run->graph_id;
  engine_options.progress = options.progress;
  engine_options.progress_mode = options.progress_mode;
  engine_options.log_interval_s = options.log_interval_s;
  engine_options.saved_state = run->state_json;
  // A finished run goes on only for the budget it is given: the one that
  // stopped it must be among them (a --time alone on a run stopped by its
  // evaluations stopped again at once, exit 0).
  if (run->status == RunStatus::kFinished) {
    const std::string& why = run->stop_reason;
    std::string needed;
    if (!resume.extra_time && !resume.extra_evaluations) {
      // Nothing to extend: a session that stops at once, as the run did
      // (a run stopped by its plateau or roofline went on searching).
      engine_options.stopped = ParseStopReason(why);
    } else if (why == "evaluations" && !resume.extra_evaluations) {
      needed = "--max-evals";
    } else if (why == "time" && !resume.extra_time) {
      needed = "--time";
    } else if (why == "usd") {
      return Fail(Error::InvalidArgument(fmt::format(
          "run {} is finished: its usd budget is spent, and resume extends only time and evaluations (start a "
          "new run with a budget of its own)",
          run->id)));
    }
    if (!needed.empty()) {
      return Fail(Error::InvalidArgument(
          fmt::format("run {} is finished (it stopped: {}); give {} to extend it", run->id, why, needed)));
    }
    engine_options.new_plateau = why == "plateau";
  }
  auto budget = std::make_shared<Budget>(config->budget, SpentBy(*run, *events));
  budget->Extend(resume.extra_time, resume.extra_evaluations);
  engine_options.budget = budget;
  auto prepared = Prepare(*config, options, budget);
  if (!prepared) return Fail(prepared.error());
  if (auto reopened = (*store)->FinishRun(run->id, RunStatus::kRunning, ""); !reopened) return Fail(reopened.error());
  // Questions a killed session left open (its desk withdraws them only when
  // it stops): no one would act on their answers. The lock above says that
  // session is gone.
  auto orphans = (*store)->OpenReviewQuestions(run->id);
  if (!orphans) return Fail(orphans.error());
  for (const ReviewQuestionRecord& question : *orphans) {
    auto withdrawn = (*store)->AnswerReviewQuestion(
        question.id, ReviewState::kWithdrawn, "the session that asked was killed; its run was resumed", "kestrel");
    if (!withdrawn) return Fail(withdrawn.error());
  }
  const BudgetSpent& spent = budget->before();
  (void)(*store)->AddRunEvent(run->id, "resume",
                              nlohmann::json{{"spent_evaluations", spent.evaluations},
                                             {"spent_seconds", spent.seconds},
                                             {"spent_usd", spent.usd}}
                                  .dump());
  if (options.reviewer) options.reviewer->Attach(options.db_path, run->id);
  Notify(options.events.resumed, RunOpened{run->id, run->task_name, run->graph_id}, spent);
  return Drive(**store, *prepared, *config, options.events, engine_options);
}

}  // namespace kestrel
