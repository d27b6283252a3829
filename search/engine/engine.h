#pragma once
// Engine: owns the TBB flow graph of one run, its budgets and its stop
// signals; the only place that knows the order of the stages.
//
//   select ─▶ limiter ─▶ mutate ─▶ record ─▶ build ─▶ record ─▶ measure ─▶ record
//     ▲                  (≤ 4)    (serial)  (≤ compile_jobs)    (≤ measure_slots)
//     └───────────── limiter.decrement ◀── record (a result, a duplicate, a decline)
//
// `record` is serial and is the only writer of the Store and the SearchGraph;
// each node state change (proposed, built, outcome) is one transaction, and
// after each released item the run's state (selection count, strategy state,
// queued fixes) is saved with it, so `kestrel resume` continues the same
// random stream and strategy. Selection k draws from its own generator,
// seeded from (config seed, run id, k). The
// limiter caps the candidates in flight, so selection always sees a graph at
// most a few results stale. Failures travel as values; no exception escapes
// a stage.
//
// Fix loop: a node a fixing mutator (the LLM's) made that ends build_failed,
// wrong or crashed, with fewer than max_fix_rounds `fix` edges above it, is
// queued for that mutator's Fix; select hands it out before new expansions and
// the repair becomes a node under a `fix` edge. LLM calls travel with their
// mutate event and are stored by record, with the node they produced.
//
// Budgets (search/engine/budget.h): time, evaluations, usd (LLM spend, calls
// in flight reserved by the mutators) and plateau. Any stop but the
// evaluation budget cancels the LLM calls in flight (Mutator::Cancel).
//
// A proposal of a node already in the graph (its parent, an ancestor, a node
// in flight) is a duplicate: an edge and a run event, never a self-edge. A
// broken KESTREL_CHECK during Run throws (ThrowingChecks) and stops the run
// with stop reason "error: internal error at ...", its state saved.

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/task.h"
#include "evaluators/evaluator.h"
#include "graph/search_graph.h"
#include "search/engine/budget.h"
#include "search/engine/stop_reason.h"
#include "search/mutators/mutator.h"
#include "search/engine/progress.h"
#include "search/run_config.h"
#include "search/strategies/strategy.h"
#include "store/store.h"

namespace kestrel {

struct EngineOptions {
  std::int64_t run_id = 0;
  std::int64_t graph_id = 0;
  std::int64_t host_id = 0;
  std::ostream* progress = nullptr;  // nullptr: quiet
  ProgressMode progress_mode = ProgressMode::kEachResult;
  double log_interval_s = 10.0;  // kInterval: seconds between status lines
  // The run's budget, with what earlier sessions spent (kestrel resume);
  // required, and shared with its LLM mutators (MakeMutators).
  std::shared_ptr<Budget> budget;
  // The run's saved state (RunRecord::state_json) to continue from; "" or
  // "{}": a new run.
  std::string saved_state;
  // A resumed run whose plateau budget was spent, extended by the person
  // (--time, --max-evals): its count of results without a new best starts
  // again, else the plateau would stop it at once.
  bool new_plateau = false;
  // A finished run resumed with no extension: the session stops at once,
  // for the reason the run stopped.
  std::optional<StopReason> stopped;
  // The strategy journal's rows after which a save writes one snapshot row
  // in their place (engine::GraphState::Journal); lowered by tests.
  std::int64_t journal_compact_rows = 4096;
};

struct RunSummary {
  std::int64_t run_id = 0;
  std::int64_t evaluations = 0;  // results recorded by this run
  std::int64_t duplicates = 0;   // proposals that were already in the graph
  // Built nodes that were the same code as a node measured on this host:
  // not timed (the evaluations the same_code edge saved), not in `evaluations`.
  std::int64_t same_code = 0;
  std::int64_t profiles = 0;  // profiles this run took and stored (engine_profile.cc)
  // Hidden-shape checks this session ran, and how many a result failed (engine_hidden.cc).
  std::int64_t hidden_checks = 0;
  std::int64_t hidden_failures = 0;
  std::map<std::string, std::int64_t> outcomes;
  std::optional<NodeId> best_node;  // best measured node of the graph
  double best_speedup = 0.0;
  StopReason stop_reason;
  bool interrupted = false;  // stopped by a signal
  double seconds = 0.0;
  // Of `seconds`, the search's (until its last result); the rest is the
  // final confirmation and the top's profiles, which follow any budget stop.
  double search_seconds = 0.0;
};

class Engine {
 public:
  // Loads the task's graph from `store` (graph_id of `options`). All
  // references must outlive the engine.
  Engine(Store& store, const Task& task, Evaluator& evaluator, const RunConfig& config,
         std::vector<std::unique_ptr<Mutator>> mutators, std::unique_ptr<Strategy> strategy,
         EngineOptions options);
  ~Engine();

  // Adds the task's seeds (when new), re-queues nodes left in flight by an
  // earlier run, then searches until a budget, a stop request or exhaustion.
  // Records the run's end in the store.
  Result<RunSummary> Run();

  // The engine's graph (for tests and reports after Run).
  const SearchGraph& graph() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kestrel
