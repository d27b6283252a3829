#pragma once
// The engine's insides, shared by its files (private to search/):
//   engine.cc          the flow graph and the end of a run
//   engine_select.cc   loading the graph, seeds, selection, budgets, saved state
//   engine_mutate.cc   the mutate stage and the context LLM prompts get
//   engine_record.cc   the record stage: every node change, through GraphState
//   engine_human.cc    what people said: bans, pins, steers, notes, added nodes
//   graph_state.cc     the nodes: store transaction first, then the graph
//
// Everything below `mutex_` is guarded by it.

#include <oneapi/tbb/flow_graph.h>

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <set>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "search/engine/engine.h"
#include "search/engine/graph_state.h"
#include "search/engine/progress.h"

namespace kestrel {
namespace engine {

using Clock = std::chrono::steady_clock;

// Selected work: expand a parent, evaluate a node already in the graph (a new
// seed, or a node left in flight by an earlier run), or repair a failed node
// its mutator made (kFix; `failure` is its result).
struct WorkItem {
  enum class Kind { kExpand, kEvaluate, kFix } kind = Kind::kExpand;
  NodeId node = 0;
  std::uint64_t rng_seed = 0;
  std::shared_ptr<const Measurement> failure;  // kFix only
  int mutator = -1;  // kFix: the mutator that fixes; kExpand: the one holding a version made for the parent (-1: none)
};

struct Job {
  NodeId node = 0;
  Candidate candidate;
  BuildResult build;
};

// The messages that reach the record stage (Event).
//
// What a mutator call brought besides its proposal or decline.
struct MutatorReport {
  int mutator = -1;  // the mutator that proposed (index into mutators_); -1: none
  std::vector<LlmCallRecord> calls;
  std::vector<std::string> stops;  // mutators that stopped for the rest of the run
  bool budget_spent = false;       // the usd budget is spent: the run stops
  std::vector<HumanActionRecord> reviews;  // a reviewer's verdicts (MutationResult::reviews)
};
// From mutate: a node already in the graph to evaluate (a new seed, a node
// left in flight by an earlier run).
struct EvaluateNode {
  NodeId node = 0;
};
// From mutate: a proposal under `parent`; `expansion`: it ends a selection
// (a fix does not).
struct Proposed {
  NodeId parent = 0;
  bool expansion = true;
  Proposal proposal;
  MutatorReport report;
};
// From mutate: no proposal. `exhausted`: nothing more to try for the parent;
// `error`: a mutator failed; `fatal`: a broken invariant (the run stops).
struct Declined {
  NodeId parent = 0;
  bool expansion = true;
  bool exhausted = true;
  std::vector<std::string> declines;
  std::string error;
  std::string fatal;
  MutatorReport report;
};
// From build: it built.
struct Built {
  Job job;
};
// From build (a build that failed) or measure: the result, and when it beat
// the incumbent the re-measurements of its confirmation round (the node and
// the incumbent, interleaved). `fatal`: a broken invariant met in the stage.
struct Measured {
  Job job;
  Measurement measurement;
  std::vector<std::pair<NodeId, Measurement>> confirmations;
  // The node's profile when it challenged the best (engine_profile.cc); the
  // record stage stores it.
  std::optional<Profile> profile;
  // The `hidden_shape` run event of its check (engine_hidden.cc); "": none.
  std::string hidden_event;
  // A broken invariant met in a stage other than record (its message): the
  // run stops with it (StopKind::kError).
  std::string fatal;
  // Not measured: the time budget was spent while it waited for a measure
  // slot, or its job (or its build's) was withdrawn from a cluster's queue
  // at a stop (Measurement::withdrawn, BuildResult::withdrawn). It stays
  // `built` (or `proposed`), and the next run of the task evaluates it first.
  bool deferred = false;
};
using Event = std::variant<EvaluateNode, Proposed, Declined, Built, Measured>;

// The random stream of selection k of a run: a generator of its own, so that a
// resumed run continues the stream from the selection count it saved.
std::uint64_t SelectionSeed(std::uint64_t run_seed, std::uint64_t selection);

std::string FirstLine(const std::string& text);

// A device slot held for a scope: measurements and profiles share the
// measure_slots the run config allows.
using DeviceSlots = std::counting_semaphore<256>;
class DeviceSlot {
 public:
  explicit DeviceSlot(DeviceSlots& slots) : slots_(slots) { slots_.acquire(); }
  ~DeviceSlot() { slots_.release(); }
  DeviceSlot(const DeviceSlot&) = delete;
  DeviceSlot& operator=(const DeviceSlot&) = delete;

 private:
  DeviceSlots& slots_;
};

// A run event's detail: text from outside (an LLM's reply quoted in an
// error, a mutator's note) may be invalid UTF-8; it is replaced, not thrown.
std::string EventJson(const nlohmann::json& detail);

}  // namespace engine

class Engine::Impl {
 public:
  Impl(Store& store, const Task& task, Evaluator& evaluator, const RunConfig& config,
       std::vector<std::unique_ptr<Mutator>> mutators, std::unique_ptr<Strategy> strategy, EngineOptions options);

  Result<RunSummary> Run();
  const SearchGraph& graph() const { return state_.graph(); }

 private:
  using Clock = engine::Clock;
  using WorkItem = engine::WorkItem;
  using Job = engine::Job;
  using Event = engine::Event;

  // engine_select.cc
  Status LoadGraph();
  Status AddSeeds();
  Status RestoreState();
  // Tells the strategy's knob advisor a node's final result (`live`: it
  // arrived in this run). Locked.
  void ObserveLocked(NodeId node, std::optional<double> speedup, bool live);
  // The run's resumable state as JSON (selections, plateau count, strategy, fixes).
  // A node in flight that a mutator made: a failure of it is sent back to
  // that mutator for a fix, at most max_fix_rounds deep.
  struct MadeBy {
    NodeId node;
    int mutator;
    int depth;
  };
  // The run's resumable state; `also`: a node being added, in flight.
  std::string SaveStateLocked(const std::optional<MadeBy>& also = std::nullopt) const;
  // Source body: the next work item, or stop. Runs serially.
  WorkItem Next(tbb::flow_control& control);
  WorkItem NextItem(tbb::flow_control& control);
  // A stop that ends selection at once: one already made, a signal, time or usd.
  std::optional<StopReason> StopReasonLocked() const;
  // The watcher thread's body: budgets, signals and the status line.
  void Watch(std::stop_token stop);
  void StopLocked(const StopReason& reason);

  // engine_mutate.cc
  Event Mutate(const WorkItem& item);
  // Fills the context fields of `parent` (lineage, inspirations...). Locked.
  void FillContextLocked(ParentView& parent);
  // Of FillContextLocked: the parent's baseline speedup and stored analysis. Locked.
  void FillStoredLocked(ParentView& parent);
  // Tells the mutator that made `node` its result (the direction bandit
  // learns from it), before the run's state is saved. Locked.
  void ReportToMakerLocked(NodeId node, Outcome outcome, std::optional<double> speedup);

  // engine_human.cc. A person's actions, re-read at selection when the
  // graph's newest action id changed; each view is "as of action human_.seen".
  void RefreshHumanLocked();
  // Loads the view as of action `upto`: bans, pins, the run's standing
  // instructions; adopts nodes people added since the last view. Locked.
  Status LoadHumanLocked(std::int64_t upto);
  // The node or one of its ancestors (along derive, fix, human edges) is banned.
  bool BannedLocked(NodeId node) const;
  // The pinned node to expand now: measured, not banned, not exhausted; the
  // one with the fewest expansions, then the lowest id. nullopt: none.
  std::optional<NodeId> PinnedChoiceLocked() const;
  // A parent a mutator holds versions for (Mutator::Waiting) that no
  // selection in flight has claimed, and that mutator's index: the lowest
  // parent id that can still be expanded, of the first such mutator.
  std::optional<std::pair<NodeId, int>> WaitingChoiceLocked() const;
  // The guidance every LLM prompt of the parent carries. Locked.
  void FillHumanLocked(ParentView& parent);
  // engine.cc: the stages' bodies. No exception escapes them: a failure
  // travels as an outcome (or stops the run). RecordStage also releases the
  // work item's slot when it is done.
  Event BuildStage(const Job& job);
  Event MeasureStage(const Job& job);

  // engine_record.cc. Record makes every node change (through state_).
  enum class Route { kBuild, kMeasure, kDone };
  Route RecordStage(const Event& event, Job& out);  // engine.cc
  Route Record(Event& event, Job& out);
  Route RecordLocked(engine::EvaluateNode& message, Job& out);
  Route RecordLocked(engine::Proposed& message, Job& out);
  Route RecordLocked(engine::Declined& message, Job& out);
  Route RecordLocked(engine::Built& message, Job& out);
  Route RecordLocked(engine::Measured& message, Job& out);
  void RecordDuplicate(engine::Proposed& message, NodeId existing);
  // A built node whose code is `twin`'s: not measured, the twin's result copied.
  void RecordSameCodeLocked(const Job& job, NodeId twin);
  // The k best measured nodes that were timed (same-code copies aside).
  std::vector<NodeId> BestTimedLocked(std::size_t k) const;
  // The notes a change of a mutate message carries: its LLM calls, the
  // mutators that stopped, and the run's state after the change.
  engine::ChangeNotes MutateNotes(engine::MutatorReport& report);

  // engine_profile.cc
  // Measure stage: the profile of a result that beats the best (nullopt: it
  // does not, it has one, or profiling failed). The record stage stores it.
  std::optional<Profile> ProfileChallenger(const Job& job, const Measurement& measurement);
  // Mutate stage: the parent's profile on this host into `parent`, taken
  // first (in a device slot) when it has none and the evaluator can.
  void ProfileParent(ParentView& parent);
  // After the final confirmation: the top of best without a profile here.
  void ProfileTop();
  // Waits while another stage profiles `node`; true when the caller is to
  // profile it (it has none on this host), false when it has one.
  // `wait` false: returns false at once while another stage profiles it.
  bool ClaimProfileLocked(NodeId node, std::unique_lock<std::mutex>& lock, bool wait = true);
  // The node's newest measured result on this host, from the store.
  std::optional<Measurement> LatestMeasuredLocked(NodeId node);
  void ReleaseProfileLocked(NodeId node, bool stored);
  std::optional<Profile> TakeProfile(const Job& job, const Measurement& measurement);
  std::optional<ProfileRecord> StoreProfileLocked(NodeId node, const Profile& profile);
  std::optional<ProfileRecord> StoredProfileLocked(NodeId node);

  // engine_confirm.cc
  // Measure stage: when the result beat the incumbent, re-measures it and the
  // incumbent `confirm.rounds` times each, interleaved, into the message.
  void Confirm(engine::Measured& message);
  // engine_hidden.cc. Measure stage: a measured result that would challenge
  // the incumbent (or is the first) is checked on hidden shapes first; a
  // failure replaces its measurement (`wrong`, "hidden shape: ..."), so that
  // it is never confirmed. The check's run event travels in the message.
  void CheckHiddenShapes(engine::Measured& message);
  // Final confirmation: the nodes of `jobs` not checked by this session are
  // checked; the ones that fail are recorded `wrong` (a measurement of
  // purpose 'hidden_shape') and dropped from `jobs`.
  void CheckHiddenShapesOfTop(std::vector<Job>& jobs);
  // One check of a built node, with its run event's detail; counted in the summary.
  std::pair<HiddenShapeCheck, std::string> RunHiddenCheck(const Job& job);
  // Record stage: the verdict of a confirmation round, into `round` and
  // `events` (stored with the result); true when the node is the new best. Locked.
  bool JudgeLocked(const engine::Measured& message, engine::ConfirmationRound& round,
                   std::vector<std::pair<std::string, std::string>>& events);
  // After the flow graph: the top candidates re-measured together.
  void FinalConfirmation();
  std::optional<Job> IncumbentJobLocked(NodeId challenger, double speedup);
  // Queues a fix of a failed node when its mutator can fix and rounds remain.
  void MaybeQueueFix(const Job& job, const Measurement& measurement);
  void Fatal(const Error& error);
  Job JobFor(NodeId node);
  ProgressSnapshot SnapshotLocked() const;
  void Progress(const Job& job, const Measurement& measurement, const std::string& note = "");

  Store& store_;
  const Task& task_;
  Evaluator& evaluator_;
  const RunConfig& config_;
  std::vector<std::unique_ptr<Mutator>> mutators_;
  std::unique_ptr<Strategy> strategy_;
  std::shared_ptr<KnobAdvisor> advisor_;  // the strategy's, or null
  EngineOptions options_;
  std::uint64_t run_seed_;
  ProgressReporter progress_;

  engine::DeviceSlots device_slots_;  // a measurement or a profile holds one

  std::mutex mutex_;  // guards everything below
  std::condition_variable changed_;
  engine::GraphState state_;  // the nodes; every change goes through it
  const SearchGraph& graph_;  // state_.graph(), for reading
  std::deque<NodeId> pending_;
  std::deque<WorkItem> fixes_;                  // fix items waiting for select
  std::unordered_map<NodeId, int> made_by_;     // mutator index of the nodes in flight a mutator made
  std::unordered_map<NodeId, int> fix_depth_;   // fix edges on the way to a node made by this run
  std::deque<std::string> recent_failures_;     // newest last, a few
  std::set<NodeId> profiled_;   // nodes known to have a profile on this host
  std::set<NodeId> profiling_;  // nodes a stage is profiling now
  std::set<NodeId> hidden_checked_;  // nodes this session checked on hidden shapes
  // Expansions in a row of a parent that were duplicates; at the limit the
  // parent is exhausted (a model that only repeats known kernels for it).
  static constexpr int kDuplicateStreakLimit = 3;
  std::unordered_map<NodeId, int> duplicate_streak_;
  std::uint64_t selections_ = 0;  // selections made by the run, earlier sessions included
  int in_flight_ = 0;             // work items between select and their release
  int unstarted_ = 0;             // of those, the ones not yet sent to build
  std::int64_t started_ = 0;      // candidates sent to build by this session
  std::int64_t since_best_ = 0;
  // The run's evaluations (all sessions') when its last final confirmation
  // ended; saved, so that a resumed run confirms what a killed one did not.
  std::int64_t confirmed_through_ = 0;
  std::int64_t RunEvaluationsLocked() const { return options_.budget->before().evaluations + summary_.evaluations; }
  NodeId incumbent_ = 0;          // the best node, confirmed; 0: none measured yet
  std::optional<StopReason> stop_reason_;
  // What people said, as of action `seen` (engine_human.cc).
  struct HumanView {
    std::int64_t seen = 0;
    std::set<NodeId> banned;
    std::vector<NodeId> pinned;
    std::vector<std::string> instructions;
  } human_;
  std::map<std::pair<int, NodeId>, std::size_t> waiting_claimed_;  // (mutator, parent): selections in flight for its versions
  std::set<NodeId> ban_exhausted_;  // nodes the strategy was told are exhausted because of a ban
  RunSummary summary_;
  Clock::time_point start_;
};

}  // namespace kestrel
