#pragma once
// RunSearch: everything `kestrel run` does between parsing its flags and
// printing the summary: find the task, open the store, build the evaluator
// and the mutators, create the run, and drive the Engine. It prints nothing:
// what happens is told through SearchOptions::events, and the engine's
// progress goes to SearchOptions::progress.

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <vector>

#include "core/task.h"
#include "evaluators/evaluator.h"
#include "search/engine/engine.h"
#include "search/mutators/mutator.h"
#include "search/run_config.h"
#include "search/session_events.h"

namespace kestrel {

class Reviewer;

struct SearchOptions {
  std::filesystem::path db_path = "kestrel.db";
  std::vector<std::filesystem::path> task_dirs;  // searched besides the built-in tasks
  bool fresh = false;                            // start a separate graph
  SessionEvents events;
  std::ostream* progress = nullptr;              // the engine's progress; nullptr: quiet
  ProgressMode progress_mode = ProgressMode::kEachResult;
  double log_interval_s = 10.0;                  // kInterval: seconds between status lines
  std::filesystem::path runner_path;             // empty: next to the executable
  std::shared_ptr<Reviewer> reviewer;            // kestrel run --review: a person reviews each LLM proposal
};

// The built-in tasks folder followed by `extra`.
std::vector<std::filesystem::path> TaskDirs(const std::vector<std::filesystem::path>& extra);

// One mutator per config entry, in order; an unavailable kind is InvalidArgument.
// An llm entry reads its API key from the environment (api_key_env) now: a
// missing key is InvalidArgument naming the variable. `task` and `host` go
// into the LLM prompts; the llm mutators reserve their spend in `budget`, the
// run's, which the engine checks.
// `reviewer`: a person who reviews every LLM proposal and plan (--review); null: none.
// Whether every LLM endpoint of the config (its llm mutators', its
// analyst's) has its API key in the environment: the first that lacks one,
// named as in the config, is the error. What a suite checks before its
// first task, so that a missing key is one message, not every task failed.
Status CheckApiKeys(const RunConfig& config);

Result<std::vector<std::unique_ptr<Mutator>>> MakeMutators(const RunConfig& config, const Task& task,
                                                           const HostInfo& host, std::shared_ptr<Budget> budget,
                                                           std::shared_ptr<Reviewer> reviewer = nullptr);

// The host's calibration for `threads` threads: the newest in the store,
// else measured now by the evaluator (about two seconds, told to `events`)
// and stored. Then handed to the evaluator (SetCalibration).
Result<Calibration> EnsureCalibration(Store& store, std::int64_t host_id, Evaluator& evaluator, int threads,
                                      const SessionEvents& events);

// Starts a new run.
Result<RunSummary> RunSearch(const RunConfig& config, const SearchOptions& options);

struct ResumeOptions {
  std::optional<std::int64_t> run_id;              // default: the newest unfinished run
  std::optional<Seconds> extra_time;               // extends the time budget
  std::optional<std::int64_t> extra_evaluations;   // extends the evaluation budget
  bool retry = false;  // continue a run that stopped with an error (a fixed Kestrel)
};

// Continues a run with its saved config and the budget it has left (time
// and evaluations already spent are counted); nodes it left in flight are
// evaluated first. The run keeps its id. A run that stopped with an error
// (status `failed`) is refused, saying why it stopped, unless `retry`: it
// would only meet the same failure again.
Result<RunSummary> ResumeSearch(const ResumeOptions& resume, const SearchOptions& options);

}  // namespace kestrel
