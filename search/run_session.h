#pragma once
// RunSearch: everything `kestrel run` does between parsing its flags and
// printing the summary: find the task, open the store, build the evaluator
// and the mutators, create the run, and drive the Engine.

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

namespace kestrel {

struct SearchOptions {
  std::filesystem::path db_path = "kestrel.db";
  std::vector<std::filesystem::path> task_dirs;  // searched besides the built-in tasks
  bool fresh = false;                            // start a separate graph
  std::ostream* progress = nullptr;              // nullptr: quiet
  ProgressMode progress_mode = ProgressMode::kEachResult;
  double log_interval_s = 10.0;                  // kInterval: seconds between status lines
  std::filesystem::path runner_path;             // empty: next to the executable
};

// The built-in tasks folder followed by `extra`.
std::vector<std::filesystem::path> TaskDirs(const std::vector<std::filesystem::path>& extra);

// One mutator per config entry, in order; an unavailable kind is InvalidArgument.
// An llm entry reads its API key from the environment (api_key_env) now: a
// missing key is InvalidArgument naming the variable. `task` and `host` go
// into the LLM prompts; the llm mutators share one spend account (budget.usd).
// `spent_usd`: what earlier sessions of the run spent (kestrel resume).
Result<std::vector<std::unique_ptr<Mutator>>> MakeMutators(const RunConfig& config, const Task& task,
                                                           const HostInfo& host, double spent_usd = 0.0);

// The host's calibration for `threads` threads: the newest in the store,
// else measured now by the evaluator (about two seconds, said on `progress`)
// and stored. Then handed to the evaluator (SetCalibration).
Result<Calibration> EnsureCalibration(Store& store, std::int64_t host_id, Evaluator& evaluator, int threads,
                                      std::ostream* progress);

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
