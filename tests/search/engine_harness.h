#pragma once
// The engine tests' harness: a real SQLite file holding the fake task, its
// graph and the fake host, and one Engine run per call, as RunSearch would
// drive it but with the in-process FakeEvaluator.

#include <doctest.h>

#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_evaluator.h"
#include "search/engine/engine.h"
#include "search/run_session.h"
#include "core/stop.h"
#include "store/store.h"
#include "testing.h"

namespace kestrel::testing {


template <class T>
T Must(Result<T> result) {
  REQUIRE_MESSAGE(result.has_value(), testing::ErrorOf(result));
  return std::move(*result);
}

// A store file with the fake task, its graph and the fake host.
class Harness {
 public:
  explicit Harness(Task task = MakeFakeTask()) : task_(std::move(task)) {
    store_ = Must(Store::Open(dir_ / "kestrel.db"));
    task_id_ = Must(store_->UpsertTask(task_));
    graph_id_ = Must(store_->GraphForTask(task_id_, false));
  }

  // One run of the engine with `config` (task and mutators filled in).
  Result<RunSummary> Run(FakeEvaluator& evaluator, RunConfig config, std::ostream* progress = nullptr) {
    config.task = task_.name;
    const std::int64_t host_id = Must(store_->UpsertHost(evaluator.Host()));
    RunRecord run;
    run.task_id = task_id_;
    run.graph_id = graph_id_;
    run.host_id = host_id;
    run.config_json = ToJson(config).dump();
    last_run_ = Must(store_->CreateRun(run));
    auto strategy = Must(MakeStrategy(config.strategy));
    auto budget = std::make_shared<Budget>(config.budget);
    auto mutators = Must(MakeMutators(config, task_, evaluator.Host(), budget));
    EngineOptions options;
    options.run_id = last_run_;
    options.graph_id = graph_id_;
    options.host_id = host_id;
    options.progress = progress;
    options.budget = budget;
    options.journal_compact_rows = journal_compact_rows;
    Engine engine(*store_, task_, evaluator, config, std::move(mutators), std::move(strategy), options);
    return engine.Run();
  }

  // Continues the last run as `kestrel resume` does: its evaluations counted,
  // its saved state restored (unless `with_state` is false).
  Result<RunSummary> Resume(FakeEvaluator& evaluator, RunConfig config, bool with_state = true) {
    config.task = task_.name;
    const RunRecord run = Must(store_->GetRun(last_run_));
    REQUIRE(store_->FinishRun(last_run_, RunStatus::kRunning, "").has_value());
    auto strategy = Must(MakeStrategy(config.strategy));
    // Active time is not counted: these tests give no time budget.
    auto budget = std::make_shared<Budget>(config.budget, BudgetSpent{run.evaluations, 0.0, run.llm_usd});
    auto mutators = Must(MakeMutators(config, task_, evaluator.Host(), budget));
    EngineOptions options;
    options.run_id = last_run_;
    options.graph_id = graph_id_;
    options.host_id = run.host_id;
    options.budget = budget;
    options.saved_state = with_state ? run.state_json : "";
    options.journal_compact_rows = journal_compact_rows;
    Engine engine(*store_, task_, evaluator, config, std::move(mutators), std::move(strategy), options);
    return engine.Run();
  }

  std::vector<NodeRecord> Nodes() { return Must(store_->LoadNodes(graph_id_)); }
  RunRecord LastRun() { return Must(store_->GetRun(last_run_)); }
  // Measurements with `purpose` ("search": evaluations; "confirm":
  // re-measurements) recorded by run `run_id`, over every node of the graph.
  int MeasurementsOfRun(std::int64_t run_id, const std::string& purpose = "search") {
    int count = 0;
    for (const NodeRecord& node : Nodes()) {
      for (const auto& record : Must(store_->GetMeasurements(node.id))) {
        count += record.run_id == run_id && record.purpose == purpose;
      }
    }
    return count;
  }

  Store& store() { return *store_; }
  // EngineOptions::journal_compact_rows of the runs it makes.
  std::int64_t journal_compact_rows = 4096;
  std::filesystem::path db_path() const { return dir_ / "kestrel.db"; }
  const Task& task() const { return task_; }
  std::int64_t graph_id() const { return graph_id_; }
  std::int64_t last_run() const { return last_run_; }

 private:
  TempDir dir_;
  Task task_;
  std::unique_ptr<Store> store_;
  std::int64_t task_id_ = 0;
  std::int64_t graph_id_ = 0;
  std::int64_t last_run_ = 0;
};

// Confirmation is off: these tests count the evaluator's Measure calls as
// evaluations; engine_confirm_test turns it on.
inline RunConfig Config() {
  RunConfig config;
  config.seed = 7;
  config.confirm.rounds = 0;
  config.parallel.compile_jobs = 2;
  config.parallel.measure_slots = 1;
  return config;
}

inline void CheckUniqueIdentities(const std::vector<NodeRecord>& nodes) {
  std::set<std::string> identities;
  for (const NodeRecord& node : nodes) CHECK(identities.insert(node.identity).second);
}

inline void CheckAllFinal(const std::vector<NodeRecord>& nodes) {
  for (const NodeRecord& node : nodes) {
    CAPTURE(node.id);
    CHECK(IsFinal(node.status));
  }
}

inline void CheckEachEvaluatedOnce(const FakeEvaluator& evaluator) {
  for (const auto& [identity, count] : evaluator.EvaluationsByIdentity()) {
    CAPTURE(identity);
    CHECK(count == 1);
  }
}

struct StopGuard {
  StopGuard() { ResetStop(); }
  ~StopGuard() { ResetStop(); }
};

}  // namespace kestrel::testing
