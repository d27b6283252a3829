#include "search/suite/suite_runner.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "core/stop.h"
#include "search/graph_lock.h"
#include "store/store.h"

namespace kestrel {
namespace {

nlohmann::json SelectionJson(const SuiteSelection& selection) {
  return {{"levels", selection.levels}, {"tasks", selection.tasks}};
}

nlohmann::json BudgetJson(const BudgetConfig& budget) {
  nlohmann::json json = nlohmann::json::object();
  if (budget.time) json["time_s"] = budget.time->count();
  if (budget.evaluations) json["evaluations"] = *budget.evaluations;
  if (budget.usd) json["usd"] = *budget.usd;
  return json;
}

// The suite's config with `task` in it, as a run of that task is started with.
Result<RunConfig> ConfigFor(const SuiteRecord& suite, const std::string& task, const std::string& db) {
  const std::string origin = db + ": suite " + std::to_string(suite.id) + "'s saved config";
  nlohmann::json saved = nlohmann::json::parse(suite.config_json, nullptr, false);
  if (!saved.is_object()) return Fail(Error::Corruption(origin + ": not a JSON object"));
  saved["task"] = task;
  return ParseRunConfig(saved, origin);
}

// The run a task that was killed before its run id was recorded had
// started: the newest run of the task begun since the task started, alone
// on its graph (a suite's run searches a fresh graph). A person's run of
// the task in the meantime, on the task's shared graph, is not it.
Result<std::int64_t> OrphanRun(Store& store, const SuiteTaskRecord& task) {
  auto runs = store.ListRuns();
  if (!runs) return Fail(runs.error());
  for (const RunRecord& run : *runs) {
    if (run.task_name != task.task || run.started_at < task.started_at) continue;
    const bool alone = std::none_of(runs->begin(), runs->end(), [&](const RunRecord& other) {
      return other.id != run.id && other.graph_id == run.graph_id;
    });
    if (alone) return run.id;
  }
  return std::int64_t{0};
}

// The suite's lock (GraphLock::TakeSuite), held for the session; Io while
// another process runs the suite.
Result<GraphLock> TakeSuiteLock(const std::filesystem::path& db, std::int64_t suite_id) {
  auto lock = GraphLock::TakeSuite(db, suite_id);
  if (!lock) return Fail(lock.error());
  if (!*lock) {
    return Fail(Error::Io(fmt::format("suite {} is being run by another kestrel process (one process runs a suite "
                                      "at a time: wait for it, or stop it and `kestrel suite resume`)",
                                      suite_id)));
  }
  return std::move(**lock);
}

class SuiteSession {
 public:
  SuiteSession(Store& store, const SuiteRecord& suite, const SuiteOptions& options)
      : store_(store), suite_(suite), options_(options) {}

  Result<SuiteOutcome> Run() {
    auto tasks = store_.SuiteTasks(suite_.id);
    if (!tasks) return Fail(tasks.error());
    SuiteOutcome outcome;
    outcome.suite_id = suite_.id;
    for (const SuiteTaskRecord& task : *tasks) {
      if (task.state != SuiteTaskState::kPending && task.state != SuiteTaskState::kRunning) continue;
      if (StopRequested()) {
        outcome.interrupted = true;
        break;
      }
      if (options_.task_started) options_.task_started(task, tasks->size());
      auto interrupted = RunTask(task);
      if (!interrupted) {
        // Not the task's failure (a missing task folder, a run another
        // process holds, the environment): the suite stops, resumable, and
        // the task is run again once that is fixed.
        (void)store_.SetSuiteState(suite_.id, SuiteState::kInterrupted);
        return Fail(interrupted.error().WithContext(
            fmt::format("suite {} stopped at task {} (`kestrel suite resume` goes on from it)", suite_.id, task.task)));
      }
      if (*interrupted) {
        outcome.interrupted = true;
        break;
      }
      auto ended = Reread(task.id);
      if (!ended) return Fail(ended.error());
      if (options_.task_ended) options_.task_ended(*ended);
    }
    const SuiteState state = outcome.interrupted ? SuiteState::kInterrupted : SuiteState::kDone;
    if (auto set = store_.SetSuiteState(suite_.id, state); !set) return Fail(set.error());
    auto final_tasks = store_.SuiteTasks(suite_.id);
    if (!final_tasks) return Fail(final_tasks.error());
    outcome.tasks = std::move(*final_tasks);
    return outcome;
  }

 private:
  Result<SuiteTaskRecord> Reread(std::int64_t id) {
    auto tasks = store_.SuiteTasks(suite_.id);
    if (!tasks) return Fail(tasks.error());
    for (const SuiteTaskRecord& task : *tasks) {
      if (task.id == id) return task;
    }
    return Fail(Error::NotFound("no suite task " + std::to_string(id)));
  }

  // Runs (or resumes) one task to its end; true when a signal stopped it.
  Result<bool> RunTask(SuiteTaskRecord task) {
    if (task.state == SuiteTaskState::kRunning && task.run_id == 0) {
      auto orphan = OrphanRun(store_, task);
      if (!orphan) return Fail(orphan.error());
      if (*orphan > 0) {
        if (auto set = store_.SetSuiteTaskRun(task.id, *orphan); !set) return Fail(set.error());
        task.run_id = *orphan;
      }
    }
    if (task.run_id > 0) return ResumeTask(task);
    return StartTask(task);
  }

  Result<bool> StartTask(const SuiteTaskRecord& task) {
    // A task the suite listed and cannot find now: the folders it was
    // started with are missing (resumed without --tasks-dir), not a failure.
    auto found = FindTask(task.task, TaskDirs(options_.search.task_dirs));
    if (!found) return Fail(found.error());
    auto config = ConfigFor(suite_, task.task, options_.search.db_path.string());
    if (!config) return Fail(config.error());
    if (auto why = CannotRun(*found, config->evaluator.kind)) return Finish(task, SuiteTaskState::kSkipped, *why);
    if (auto started = store_.StartSuiteTask(task.id); !started) return Fail(started.error());

    SearchOptions search = options_.search;
    search.fresh = true;  // each suite task searches from its seeds alone
    std::int64_t run_id = 0;
    Status recorded;
    search.events.started = [&](const RunOpened& run, const std::string& strategy, const std::string& db) {
      run_id = run.run_id;
      recorded = store_.SetSuiteTaskRun(task.id, run.run_id);
      Notify(options_.search.events.started, run, strategy, db);
    };
    auto summary = RunSearch(*config, search);
    if (!recorded) return Fail(recorded.error());
    return Ended(task, summary, run_id);
  }

  Result<bool> ResumeTask(const SuiteTaskRecord& task) {
    auto run = store_.GetRun(task.run_id);
    if (!run) return Fail(run.error());
    // Killed after its run ended and before the suite noted it.
    if (run->status == RunStatus::kFinished) return Finish(task, SuiteTaskState::kDone, "");
    if (run->status == RunStatus::kFailed) return Finish(task, SuiteTaskState::kFailed, run->stop_reason);
    ResumeOptions resume;
    resume.run_id = task.run_id;
    auto summary = ResumeSearch(resume, options_.search);
    return Ended(task, summary, task.run_id);
  }

  Result<bool> Ended(const SuiteTaskRecord& task, const Result<RunSummary>& summary, std::int64_t run_id) {
    if (!summary) {
      // A cuda evaluator this build or host lacks: the task cannot run here.
      if (run_id == 0 && summary.error().code() == ErrorCode::kUnsupported) {
        return Finish(task, SuiteTaskState::kSkipped, summary.error().message());
      }
      // The task failed when its run did (stored as failed, with why);
      // anything else (a config or setup error before the run, a run
      // another process holds) stops the suite with the error, as it
      // stops `kestrel run`, instead of failing every task for good.
      if (run_id != 0) {
        auto run = store_.GetRun(run_id);
        if (run && run->status == RunStatus::kFailed) {
          return Finish(task, SuiteTaskState::kFailed, summary.error().message());
        }
      }
      return Fail(summary.error());
    }
    if (summary->interrupted) return true;
    return Finish(task, SuiteTaskState::kDone, "");
  }

  Result<bool> Finish(const SuiteTaskRecord& task, SuiteTaskState state, const std::string& reason) {
    if (auto done = store_.FinishSuiteTask(task.id, state, reason); !done) return Fail(done.error());
    return false;
  }

  Store& store_;
  SuiteRecord suite_;
  const SuiteOptions& options_;
};

}  // namespace

Result<std::vector<SuiteTaskRecord>> SelectSuiteTasks(const std::vector<Task>& tasks, const SuiteSelection& selection) {
  const std::set<int> levels(selection.levels.begin(), selection.levels.end());
  std::set<std::string> named(selection.tasks.begin(), selection.tasks.end());
  std::vector<const Task*> chosen;
  for (const Task& task : tasks) {
    const bool by_name = named.erase(task.name) > 0;
    const bool by_level = levels.count(task.level) > 0;
    const bool every = levels.empty() && selection.tasks.empty() && task.level > 0;
    if (by_name || by_level || every) chosen.push_back(&task);
  }
  if (!named.empty()) {
    return Fail(Error::InvalidArgument("--tasks: no task named '" + *named.begin() + "' (kestrel tasks lists them)"));
  }
  if (chosen.empty()) return Fail(Error::InvalidArgument("the suite's selection matches no task (kestrel tasks lists them with their levels)"));
  std::stable_sort(chosen.begin(), chosen.end(), [](const Task* a, const Task* b) {
    return a->level != b->level ? a->level < b->level : a->name < b->name;
  });
  std::vector<SuiteTaskRecord> records;
  for (const Task* task : chosen) {
    SuiteTaskRecord record;
    record.position = static_cast<int>(records.size());
    record.task = task->name;
    record.level = task->level;
    records.push_back(std::move(record));
  }
  return records;
}

std::optional<std::string> CannotRun(const Task& task, const std::string& evaluator_kind) {
  const bool runs = evaluator_kind == "cpu"    ? task.language == "cpp"
                    : evaluator_kind == "cuda" ? task.language == "cuda"
                                               : task.language != "cpp" && task.language != "cuda";
  if (runs) return std::nullopt;
  return "the " + evaluator_kind + " evaluator does not run " + task.language + " tasks";
}

Result<SuiteOutcome> RunSuite(const RunConfig& config, const SuiteSelection& selection, const SuiteOptions& options) {
  auto listed = ListTasks(TaskDirs(options.search.task_dirs));
  if (!listed) return Fail(listed.error());
  std::vector<Task> loaded;
  for (ListedTask& entry : *listed) {
    if (entry.task) {
      loaded.push_back(std::move(*entry.task));
      continue;
    }
    // A broken task folder: an error when the suite names it, else a note (its level is unknown).
    const auto& named = selection.tasks;
    if (std::find(named.begin(), named.end(), entry.folder.name) != named.end()) return Fail(entry.task.error());
    Notify(options.search.events.task_note, "task folder " + entry.folder.dir.string() +
                                                " is left out of the suite: " + entry.task.error().message());
  }
  auto tasks = SelectSuiteTasks(loaded, selection);
  if (!tasks) return Fail(tasks.error());
  // Checked before the suite is made: a missing key failed every task, and
  // a suite with every task failed is done, with nothing to resume.
  if (auto keys = CheckApiKeys(config); !keys) return Fail(keys.error());
  auto store = Store::Open(options.search.db_path);
  if (!store) return Fail(store.error());
  RunConfig shared = config;
  shared.task.clear();
  SuiteRecord suite;
  suite.selection_json = JsonText(SelectionJson(selection));
  suite.budget_json = BudgetJson(config.budget).dump();
  suite.config_json = JsonText(ToJson(shared));
  auto suite_id = (*store)->CreateSuite(suite, *tasks);
  if (!suite_id) return Fail(suite_id.error());
  auto lock = TakeSuiteLock(options.search.db_path, *suite_id);
  if (!lock) return Fail(lock.error());
  auto created = (*store)->GetSuite(*suite_id);
  if (!created) return Fail(created.error());
  return SuiteSession(**store, *created, options).Run();
}

Result<SuiteOutcome> ResumeSuite(std::optional<std::int64_t> suite_id, const SuiteOptions& options) {
  auto store = Store::Open(options.search.db_path);
  if (!store) return Fail(store.error());
  std::optional<SuiteRecord> suite;
  if (suite_id) {
    auto found = (*store)->GetSuite(*suite_id);
    if (!found && found.error().IsNotFound()) {  // a user's mistake: exit 2
      return Fail(Error::InvalidArgument("--suite " + std::to_string(*suite_id) + ": no suite " +
                                         std::to_string(*suite_id) + " in the database"));
    }
    if (!found) return Fail(found.error());
    suite = *found;
  } else {
    auto latest = (*store)->LatestSuite(/*unfinished=*/true);
    if (!latest) return Fail(latest.error());
    if (!*latest) return Fail(Error::NotFound("no unfinished suite in the database (every suite is done)"));
    suite = *latest;
  }
  if (!suite) return Fail(Error::NotFound("no suite in the database (start one with `kestrel suite run`)"));
  if (suite->state == SuiteState::kDone) {
    return Fail(Error::NotFound("suite " + std::to_string(suite->id) + " is done (nothing to resume)"));
  }
  auto lock = TakeSuiteLock(options.search.db_path, suite->id);
  if (!lock) return Fail(lock.error());
  // The saved config's keys, in this environment (a resume may come from another shell).
  auto config = ConfigFor(*suite, "any", options.search.db_path.string());
  if (!config) return Fail(config.error());
  if (auto keys = CheckApiKeys(*config); !keys) return Fail(keys.error());
  if (auto set = (*store)->SetSuiteState(suite->id, SuiteState::kRunning); !set) return Fail(set.error());
  return SuiteSession(**store, *suite, options).Run();
}

}  // namespace kestrel
