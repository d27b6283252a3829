// Store: benchmark suites (suites and suite_tasks, schema v8; docs/SUITE.md).
#include <array>
#include <string>
#include <utility>

#include "store/store.h"
#include "store/store_impl.h"

namespace kestrel {
namespace {

constexpr std::array<std::pair<SuiteState, std::string_view>, 3> kSuiteStates = {
    {{SuiteState::kRunning, "running"}, {SuiteState::kInterrupted, "interrupted"}, {SuiteState::kDone, "done"}}};
constexpr std::array<std::pair<SuiteTaskState, std::string_view>, 5> kTaskStates = {
    {{SuiteTaskState::kPending, "pending"},
     {SuiteTaskState::kRunning, "running"},
     {SuiteTaskState::kDone, "done"},
     {SuiteTaskState::kFailed, "failed"},
     {SuiteTaskState::kSkipped, "skipped"}}};

constexpr std::string_view kSuiteColumns =
    "id, selection_json, budget_json, config_json, state, created_at, coalesce(finished_at, 0)";

Result<SuiteRecord> ReadSuite(const store::Statement& s) {
  SuiteRecord suite;
  suite.id = s.Int(0);
  suite.selection_json = s.Text(1);
  suite.budget_json = s.Text(2);
  suite.config_json = s.Text(3);
  const auto state = ParseSuiteState(s.Text(4));
  if (!state) return Fail(Error::Corruption("DB: suites row " + std::to_string(suite.id) + ": unknown state '" + s.Text(4) + "'"));
  suite.state = *state;
  suite.created_at = s.Int(5);
  suite.finished_at = s.Int(6);
  return suite;
}

// Runs an UPDATE of one suite_tasks or suites row; NotFound when `id` is no row.
Status UpdateOne(Store::Impl& impl, std::string_view operation, std::string_view sql, std::string_view what,
                 std::int64_t id, const std::function<void(store::Statement&)>& bind) {
  auto update = impl.Prepare(operation, sql);
  if (!update) return Fail(update.error());
  (*update)->Bind(1, id);
  bind(**update);
  if (auto done = (*update)->Run(); !done) return Fail(done.error());
  if (impl.Changes() == 0) return Fail(Error::NotFound("no " + std::string(what) + " " + std::to_string(id)));
  return {};
}

}  // namespace

std::string_view ToString(SuiteState state) {
  for (const auto& [value, word] : kSuiteStates) {
    if (value == state) return word;
  }
  return "running";
}

std::optional<SuiteState> ParseSuiteState(std::string_view text) {
  for (const auto& [value, word] : kSuiteStates) {
    if (word == text) return value;
  }
  return std::nullopt;
}

std::string_view ToString(SuiteTaskState state) {
  for (const auto& [value, word] : kTaskStates) {
    if (value == state) return word;
  }
  return "pending";
}

std::optional<SuiteTaskState> ParseSuiteTaskState(std::string_view text) {
  for (const auto& [value, word] : kTaskStates) {
    if (word == text) return value;
  }
  return std::nullopt;
}

Result<std::int64_t> Store::CreateSuite(const SuiteRecord& suite, const std::vector<SuiteTaskRecord>& tasks) {
  constexpr std::string_view kOp = "CreateSuite";
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  auto insert = impl_->Prepare(kOp, R"sql(
    INSERT INTO suites (selection_json, budget_json, config_json, state, created_at)
    VALUES (?1, ?2, ?3, 'running', ?4))sql");
  if (!insert) return Fail(insert.error());
  (*insert)->Bind(1, suite.selection_json).Bind(2, suite.budget_json).Bind(3, suite.config_json).Bind(4, NowMillis());
  if (auto done = (*insert)->Run(); !done) return Fail(done.error());
  const std::int64_t suite_id = impl_->LastInsertId();
  for (const SuiteTaskRecord& task : tasks) {
    auto add = impl_->Prepare(kOp, R"sql(
      INSERT INTO suite_tasks (suite_id, position, task, level, state) VALUES (?1, ?2, ?3, ?4, 'pending'))sql");
    if (!add) return Fail(add.error());
    (*add)->Bind(1, suite_id).Bind(2, task.position).Bind(3, task.task).Bind(4, task.level);
    if (auto done = (*add)->Run(); !done) return Fail(done.error());
  }
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return suite_id;
}

Result<SuiteRecord> Store::GetSuite(std::int64_t suite_id) {
  auto select = impl_->Prepare("GetSuite", "SELECT " + std::string(kSuiteColumns) + " FROM suites WHERE id = ?1");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, suite_id);
  auto row = (*select)->Step();
  if (!row) return Fail(row.error());
  if (!*row) return Fail(Error::NotFound("no suite " + std::to_string(suite_id)));
  return ReadSuite(**select);
}

Result<std::optional<SuiteRecord>> Store::LatestSuite(bool unfinished) {
  auto select = impl_->Prepare("LatestSuite", "SELECT " + std::string(kSuiteColumns) +
                                                  " FROM suites WHERE ?1 = 0 OR state <> 'done' ORDER BY id DESC LIMIT 1");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, unfinished ? 1 : 0);
  auto row = (*select)->Step();
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<SuiteRecord>();
  auto suite = ReadSuite(**select);
  if (!suite) return Fail(suite.error());
  return std::optional<SuiteRecord>(std::move(*suite));
}

Result<std::vector<SuiteTaskRecord>> Store::SuiteTasks(std::int64_t suite_id) {
  auto select = impl_->Prepare("SuiteTasks", R"sql(
    SELECT id, suite_id, position, task, level, coalesce(run_id, 0), state, reason, coalesce(started_at, 0),
           coalesce(finished_at, 0)
    FROM suite_tasks WHERE suite_id = ?1 ORDER BY position)sql");
  if (!select) return Fail(select.error());
  store::Statement& s = **select;
  s.Bind(1, suite_id);
  std::vector<SuiteTaskRecord> tasks;
  for (;;) {
    auto row = s.Step();
    if (!row) return Fail(row.error());
    if (!*row) return tasks;
    SuiteTaskRecord task;
    task.id = s.Int(0);
    task.suite_id = s.Int(1);
    task.position = static_cast<int>(s.Int(2));
    task.task = s.Text(3);
    task.level = static_cast<int>(s.Int(4));
    task.run_id = s.Int(5);
    const auto state = ParseSuiteTaskState(s.Text(6));
    if (!state) return Fail(Error::Corruption("DB: suite_tasks row " + std::to_string(task.id) + ": unknown state '" + s.Text(6) + "'"));
    task.state = *state;
    task.reason = s.Text(7);
    task.started_at = s.Int(8);
    task.finished_at = s.Int(9);
    tasks.push_back(std::move(task));
  }
}

Status Store::StartSuiteTask(std::int64_t suite_task_id) {
  return UpdateOne(*impl_, "StartSuiteTask",
                   "UPDATE suite_tasks SET state = 'running', started_at = coalesce(started_at, ?2) WHERE id = ?1",
                   "suite task", suite_task_id, [](store::Statement& s) { s.Bind(2, NowMillis()); });
}

Status Store::SetSuiteTaskRun(std::int64_t suite_task_id, std::int64_t run_id) {
  return UpdateOne(*impl_, "SetSuiteTaskRun", "UPDATE suite_tasks SET run_id = ?2 WHERE id = ?1", "suite task",
                   suite_task_id, [run_id](store::Statement& s) { s.Bind(2, run_id); });
}

Status Store::FinishSuiteTask(std::int64_t suite_task_id, SuiteTaskState state, const std::string& reason) {
  return UpdateOne(*impl_, "FinishSuiteTask",
                   "UPDATE suite_tasks SET state = ?2, reason = ?3, finished_at = ?4 WHERE id = ?1", "suite task",
                   suite_task_id, [&](store::Statement& s) {
                     s.Bind(2, ToString(state)).Bind(3, reason).Bind(4, NowMillis());
                   });
}

Status Store::SetSuiteState(std::int64_t suite_id, SuiteState state) {
  return UpdateOne(*impl_, "SetSuiteState",
                   "UPDATE suites SET state = ?2, finished_at = CASE WHEN ?2 = 'done' THEN ?3 END WHERE id = ?1",
                   "suite", suite_id, [state](store::Statement& s) { s.Bind(2, ToString(state)).Bind(3, NowMillis()); });
}

}  // namespace kestrel
