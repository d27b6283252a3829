#pragma once
// Plain rows of a benchmark suite (the suites and suite_tasks tables,
// docs/SCHEMA.md; docs/SUITE.md): one run config applied to a list of tasks
// in order. Store methods in store_suite.cc.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kestrel {

// running: started and not finished (or killed while it ran); interrupted: a
// signal stopped it (`kestrel suite resume` goes on); done: every task ended.
enum class SuiteState { kRunning, kInterrupted, kDone };
std::string_view ToString(SuiteState state);
std::optional<SuiteState> ParseSuiteState(std::string_view text);

// pending: not started; running: its run exists and is not finished (or was
// killed); done: its run finished; failed: an error stopped it (reason);
// skipped: the suite's evaluator cannot run the task (reason).
enum class SuiteTaskState { kPending, kRunning, kDone, kFailed, kSkipped };
std::string_view ToString(SuiteTaskState state);
std::optional<SuiteTaskState> ParseSuiteTaskState(std::string_view text);

struct SuiteRecord {
  std::int64_t id = 0;
  std::string selection_json;  // {"levels": [1], "tasks": [...]}: what was asked for
  std::string budget_json;     // {"evaluations": N} or {"time_s": S}: each task's budget
  std::string config_json;     // the run config every task runs with (its "task" empty)
  SuiteState state = SuiteState::kRunning;
  std::int64_t created_at = 0;
  std::int64_t finished_at = 0;  // 0 until done
};

struct SuiteTaskRecord {
  std::int64_t id = 0;
  std::int64_t suite_id = 0;
  int position = 0;  // the order tasks run in, from 0
  std::string task;
  int level = 0;
  std::int64_t run_id = 0;  // 0: no run yet
  SuiteTaskState state = SuiteTaskState::kPending;
  std::string reason;  // failed or skipped: why
  std::int64_t started_at = 0;   // 0: not started
  std::int64_t finished_at = 0;  // 0: not ended
};

}  // namespace kestrel
