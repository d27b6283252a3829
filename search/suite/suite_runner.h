#pragma once
// The suite runner (`kestrel suite run` and `resume`, docs/SUITE.md): one
// run per task with the same config, in the suite's order, each in a fresh
// graph. The suite and its tasks are rows of the store (suite_records.h),
// each task's run id recorded as soon as the run exists, so a suite killed
// at any moment resumes the run that was going (exactly, as `kestrel resume`
// does) and then runs the rest: every task finishes once.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/task.h"
#include "search/run_config.h"
#include "search/run_session.h"
#include "store/suite_records.h"

namespace kestrel {

// Which tasks a suite runs: those of the given levels and/or names (both
// empty: every task with a level), ordered by level, then name.
struct SuiteSelection {
  std::vector<int> levels;
  std::vector<std::string> tasks;
};

// The suite's tasks among `tasks`, positions from 0. A named task that is
// not among them, or a selection that matches nothing, is InvalidArgument.
Result<std::vector<SuiteTaskRecord>> SelectSuiteTasks(const std::vector<Task>& tasks, const SuiteSelection& selection);

// Why the evaluator `kind` cannot run `task` ("the cpu evaluator runs cpp
// kernels; this is a cuda task"), or nullopt when it can.
std::optional<std::string> CannotRun(const Task& task, const std::string& evaluator_kind);

struct SuiteOptions {
  SearchOptions search;  // db, task folders, progress and session events of each run
  // Before each task (position, count, the task) and after it (its final row).
  std::function<void(const SuiteTaskRecord& task, std::size_t count)> task_started;
  std::function<void(const SuiteTaskRecord& task)> task_ended;
};

// How a session of a suite ended.
struct SuiteOutcome {
  std::int64_t suite_id = 0;
  bool interrupted = false;  // a signal stopped it: `kestrel suite resume` goes on
  std::vector<SuiteTaskRecord> tasks;  // as they stand at the end
};

// Creates the suite (config with its per-task budget; `config.task` is
// ignored) and runs it.
Result<SuiteOutcome> RunSuite(const RunConfig& config, const SuiteSelection& selection, const SuiteOptions& options);

// Continues suite `suite_id` (default: the newest suite that is not done).
Result<SuiteOutcome> ResumeSuite(std::optional<std::int64_t> suite_id, const SuiteOptions& options);

}  // namespace kestrel
