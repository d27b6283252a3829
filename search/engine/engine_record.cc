// The engine's record stage: the only writer of the store and the graph. Each
// node state change is one transaction; the run's resumable state is saved
// after each released work item.

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "search/engine/engine_impl.h"
#include "search/engine/graph_loader.h"

namespace kestrel {

Engine::Impl::Job Engine::Impl::JobFor(NodeId node) {
  const engine::CandidateRef& ref = candidates_.at(node);
  return {node, {*ref.source, ref.knobs, ref.toolchain, ref.flags}, {}};
}

void Engine::Impl::Fatal(const Error& error) {
  StopLocked(StopReason::Error(error.message()));
}

Engine::Impl::Route Engine::Impl::Record(Event& event, Job& out) {
  std::lock_guard lock(mutex_);
  // A work item from mutate is either started now (sent to build) or done.
  const bool from_mutate = event.kind == Event::Kind::kEvaluate || event.kind == Event::Kind::kDeclined ||
                           event.kind == Event::Kind::kProposed;
  if (from_mutate) --unstarted_;
  if (!event.fatal.empty()) StopLocked(StopReason::Error(event.fatal));
  if (event.budget_spent) StopLocked(StopKind::kUsd);
  switch (event.kind) {
    case Event::Kind::kEvaluate:
      out = JobFor(event.parent);
      ++started_;
      return Route::kBuild;
    case Event::Kind::kDeclined:
      StoreCalls(event, std::nullopt);
      if (event.exhausted) strategy_->MarkExhausted(event.parent);
      for (const std::string& note : event.declines) {
        (void)store_.AddRunEvent(options_.run_id, "mutator_declined",
                                 engine::EventJson({{"parent", event.parent}, {"reason", note}}));
      }
      if (!event.note.empty()) {
        (void)store_.AddRunEvent(options_.run_id, "mutator_error",
                                 engine::EventJson({{"parent", event.parent}, {"error", event.note}}));
      }
      return Route::kDone;
    case Event::Kind::kProposed:
      return RecordProposal(event, out);
    case Event::Kind::kBuilt:
      if (auto status = store_.SetNodeStatus(event.job.node, NodeStatus::kBuilt, "", ""); !status) {
        Fatal(status.error());
      }
      graph_.SetResult(event.job.node, NodeStatus::kBuilt, std::nullopt);
      if (const auto reason = StopReasonLocked(); reason && reason->kind == StopKind::kTime) {
        // Out of time: not measured now; it stays `built`, and the next run of
        // the task (or kestrel resume) measures it first.
        return Route::kDone;
      }
      out = std::move(event.job);
      return Route::kMeasure;
    case Event::Kind::kMeasured:
      RecordResult(event);
      return Route::kDone;
  }
  return Route::kDone;
}

Engine::Impl::Route Engine::Impl::RecordProposal(Event& event, Job& out) {
    Proposal& proposal = *event.proposal;
    const std::string identity = proposal.candidate.Identity();
    if (auto existing = graph_.FindByIdentity(identity)) {
      RecordDuplicate(event, *existing);
      return Route::kDone;
    }
    duplicate_streak_.erase(event.parent);
    NodeRecord record;
    record.graph_id = options_.graph_id;
    record.run_id = options_.run_id;
    record.identity = identity;
    record.source = proposal.candidate.source;
    record.knobs = proposal.candidate.knobs;
    record.toolchain = proposal.candidate.toolchain;
    record.flags = proposal.candidate.flags;
    record.mutation = proposal.mutation;
    EdgeRecord edge{event.parent, 0, proposal.edge_kind, options_.run_id, proposal.mutation, 0};
    auto id = store_.AddNode(record, edge);
    if (!id) {
      Fatal(id.error());
      return Route::kDone;
    }
    const auto& parent_ref = candidates_.at(event.parent);
    auto source = *parent_ref.source == proposal.candidate.source
                      ? parent_ref.source
                      : std::make_shared<const std::string>(proposal.candidate.source);
    candidates_[*id] = {source, record.knobs, record.toolchain, record.flags};
    record.id = *id;
    graph_.AddNode(ToGraphNode(record));
    graph_.AddDerivation(event.parent, *id, proposal.edge_kind);
    StoreCalls(event, *id);
    if (event.mutator >= 0) made_by_[*id] = event.mutator;
    if (proposal.edge_kind == "fix") {
      const auto parent_depth = fix_depth_.find(event.parent);
      fix_depth_[*id] = (parent_depth == fix_depth_.end() ? 0 : parent_depth->second) + 1;
    }
    out = Job{*id, std::move(proposal.candidate), {}};
    ++started_;
    return Route::kBuild;
}

// No work twice: a proposal of a node already in the graph (the parent
// itself, an ancestor, a descendant, a candidate in flight) becomes a
// "duplicate" edge to it, never a self-edge, and derive/fix edges only ever
// point at new nodes, so every lineage still ends at a seed. A parent whose
// expansions keep repeating known nodes is exhausted, so a run whose every
// reply is a duplicate ends ("exhausted") instead of asking forever.
void Engine::Impl::RecordDuplicate(Event& event, NodeId existing) {
  const Proposal& proposal = *event.proposal;
  EdgeRecord edge{event.parent, existing, "duplicate", options_.run_id, proposal.mutation, 0};
  if (auto status = store_.RecordDuplicate(edge); !status) Fatal(status.error());
  if (existing != event.parent) graph_.AddDerivation(event.parent, existing, "duplicate");
  StoreCalls(event, existing);
  ++summary_.duplicates;
  if (proposal.edge_kind != "fix" && ++duplicate_streak_[event.parent] >= kDuplicateStreakLimit) {
    strategy_->MarkExhausted(event.parent);
    duplicate_streak_.erase(event.parent);
  }
}

void Engine::Impl::RecordResult(const Event& event) {
  const Job& job = event.job;
  const Measurement& measurement = event.measurement;
  auto id = store_.RecordMeasurement(job.node, options_.run_id, options_.host_id, measurement);
  if (!id) return Fatal(id.error());
  const bool measured = measurement.outcome == Outcome::kMeasured;
  graph_.SetResult(job.node, StatusOf(measurement.outcome),
                   measured ? std::optional<double>(measurement.speedup) : std::nullopt);
  ++summary_.evaluations;
  ++summary_.outcomes[std::string(ToString(measurement.outcome))];
  if (measured && JudgeLocked(event)) {
    since_best_ = 0;
    const double speedup = *graph_.Node(job.node).speedup;
    progress_.Event(fmt::format("kestrel: new best {:.2f}x: node {} ({})", speedup, job.node,
                                graph_.Node(job.node).label));
    (void)store_.AddRunEvent(options_.run_id, "new_best",
                             nlohmann::json{{"node", job.node}, {"speedup", speedup}}.dump());
  } else {
    ++since_best_;
  }
  if (options_.budget->Check(BudgetUse::SinceBest(since_best_)) == StopKind::kPlateau) StopLocked(StopKind::kPlateau);
  MaybeQueueFix(job, measurement);
  Progress(job, measurement);
}

void Engine::Impl::MaybeQueueFix(const Job& job, const Measurement& measurement) {
  const Outcome outcome = measurement.outcome;
  if (outcome == Outcome::kMeasured) return;
  recent_failures_.push_back(fmt::format("{}: {} ({})", graph_.Node(job.node).mutation, ToString(outcome),
                                         engine::FirstLine(measurement.reason).substr(0, 160)));
  if (recent_failures_.size() > 5) recent_failures_.pop_front();
  if (outcome != Outcome::kBuildFailed && outcome != Outcome::kWrong && outcome != Outcome::kCrashed) return;
  const auto made_by = made_by_.find(job.node);
  if (made_by == made_by_.end() || !mutators_[static_cast<std::size_t>(made_by->second)]->CanFix()) return;
  const auto depth = fix_depth_.find(job.node);
  if ((depth == fix_depth_.end() ? 0 : depth->second) >= config_.max_fix_rounds) return;
  fixes_.push_back({WorkItem::Kind::kFix, job.node, 0, std::make_shared<const Measurement>(measurement), made_by->second});
}

void Engine::Impl::StoreCalls(Event& event, std::optional<NodeId> node) {
  for (const std::string& stop : event.stops) {
    (void)store_.AddRunEvent(options_.run_id, "mutator_stopped", engine::EventJson({{"reason", stop}}));
    progress_.Event("kestrel: " + stop + "; the search goes on without it");
  }
  for (LlmCallRecord& call : event.calls) {
    call.run_id = options_.run_id;
    call.node_id = node;
    if (auto id = store_.AddLlmCall(call); !id) Fatal(id.error());
  }
  event.calls.clear();
  event.stops.clear();
}

void Engine::Impl::SaveState() {
  if (auto saved = store_.SaveRunState(options_.run_id, SaveStateLocked()); !saved) Fatal(saved.error());
}

ProgressSnapshot Engine::Impl::SnapshotLocked() const {
  ProgressSnapshot snapshot;
  snapshot.evaluations = summary_.evaluations;
  snapshot.spent_evaluations = options_.budget->before().evaluations;
  snapshot.outcomes = summary_.outcomes;
  if (incumbent_ != 0) {
    snapshot.best_node = incumbent_;
    snapshot.best_speedup = graph_.Node(incumbent_).speedup.value_or(0.0);
  }
  snapshot.elapsed_s = std::chrono::duration<double>(Clock::now() - start_).count();
  const BudgetLeft left = options_.budget->Left(snapshot.elapsed_s, summary_.evaluations);
  snapshot.time_left_s = left.seconds;
  snapshot.evaluations_left = left.evaluations;
  snapshot.usd_spent = left.usd_spent;
  snapshot.usd_budget = left.usd_budget;
  return snapshot;
}

void Engine::Impl::Progress(const Job& job, const Measurement& measurement) {
  const ProgressSnapshot snapshot = SnapshotLocked();
  const std::string result = measurement.outcome == Outcome::kMeasured
                                 ? fmt::format("{:.2f}x", measurement.speedup)
                                 : std::string(ToString(measurement.outcome)) + " (" +
                                       engine::FirstLine(measurement.reason) + ")";
  std::string left;
  if (snapshot.time_left_s) left = fmt::format("  {:.0f}s left", std::max(0.0, *snapshot.time_left_s));
  progress_.Result(fmt::format("[{:>5}] node {:<6} {:<40} best {:.2f}x  {}{}", summary_.evaluations, job.node,
                               result.substr(0, 40), snapshot.best_speedup, graph_.Node(job.node).label, left),
                   snapshot);
}

}  // namespace kestrel
