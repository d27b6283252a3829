// The engine's record stage: every node change, in the order results arrive.
// Each change goes through GraphState, which stores it in one transaction
// with the run's resumable state and only then changes the graph; a change
// the store refuses stops the run ("error: ...") and changes nothing.

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "search/engine/engine_impl.h"

namespace kestrel {

using engine::ChangeNotes;

Engine::Impl::Job Engine::Impl::JobFor(NodeId node) { return {node, state_.CandidateOf(node), {}}; }

void Engine::Impl::Fatal(const Error& error) {
  StopLocked(StopReason::Error(error.message()));
}

Engine::Impl::Route Engine::Impl::Record(Event& event, Job& out) {
  std::lock_guard lock(mutex_);
  return std::visit([&](auto& message) { return RecordLocked(message, out); }, event);
}

// A work item from mutate is either started now (sent to build) or done.
Engine::Impl::Route Engine::Impl::RecordLocked(engine::EvaluateNode& message, Job& out) {
  --unstarted_;
  out = JobFor(message.node);
  ++started_;
  return Route::kBuild;
}

ChangeNotes Engine::Impl::MutateNotes(engine::MutatorReport& report) {
  if (report.budget_spent) StopLocked(StopKind::kUsd);
  ChangeNotes notes;
  for (const std::string& stop : report.stops) {
    notes.events.emplace_back("mutator_stopped", engine::EventJson({{"reason", stop}}));
    progress_.Event("kestrel: " + stop + "; the search goes on without it");
  }
  notes.calls = std::move(report.calls);
  notes.actions = std::move(report.reviews);
  return notes;
}

Engine::Impl::Route Engine::Impl::RecordLocked(engine::Declined& message, Job&) {
  --unstarted_;
  if (!message.fatal.empty()) StopLocked(StopReason::Error(message.fatal));
  if (message.exhausted) strategy_->MarkExhausted(message.parent);
  ChangeNotes notes = MutateNotes(message.report);
  for (const std::string& note : message.declines) {
    notes.events.emplace_back("mutator_declined", engine::EventJson({{"parent", message.parent}, {"reason", note}}));
  }
  if (!message.error.empty()) {
    notes.events.emplace_back("mutator_error",
                              engine::EventJson({{"parent", message.parent}, {"error", message.error}}));
  }
  notes.run_state = SaveStateLocked();
  if (auto done = state_.Decline(message.parent, message.expansion, std::move(notes)); !done) Fatal(done.error());
  return Route::kDone;
}

Engine::Impl::Route Engine::Impl::RecordLocked(engine::Proposed& message, Job& out) {
  --unstarted_;
  Proposal& proposal = message.proposal;
  auto existing = state_.FindByIdentity(proposal.candidate.Identity());
  if (!existing) {
    Fatal(existing.error());
    return Route::kDone;
  }
  if (*existing) {
    RecordDuplicate(message, **existing);
    return Route::kDone;
  }
  duplicate_streak_.erase(message.parent);
  ChangeNotes notes = MutateNotes(message.report);
  const int mutator = message.report.mutator;
  int depth = 0;
  if (proposal.edge_kind == EdgeKind::kFix) {
    const auto parent_depth = fix_depth_.find(message.parent);
    depth = (parent_depth == fix_depth_.end() ? 0 : parent_depth->second) + 1;
  }
  // The state saved with the node names it as in flight, made by its
  // mutator: a run killed before its result still sends a failure of it
  // back for a fix.
  if (mutator >= 0) {
    notes.run_state_of = [this, mutator, depth](NodeId id) { return SaveStateLocked(MadeBy{id, mutator, depth}); };
  } else {
    notes.run_state = SaveStateLocked();
  }
  auto id = state_.AddChild(
      message.parent, NewNodeRecord(proposal.candidate, options_.graph_id, options_.run_id, proposal.mutation),
      proposal.edge_kind, message.expansion, std::move(notes));
  if (!id) {
    Fatal(id.error());
    return Route::kDone;
  }
  if (mutator >= 0) made_by_[*id] = mutator;
  if (depth > 0) fix_depth_[*id] = depth;
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
void Engine::Impl::RecordDuplicate(engine::Proposed& message, NodeId existing) {
  const Proposal& proposal = message.proposal;
  ++summary_.duplicates;
  if (proposal.edge_kind != EdgeKind::kFix && ++duplicate_streak_[message.parent] >= kDuplicateStreakLimit) {
    strategy_->MarkExhausted(message.parent);
    duplicate_streak_.erase(message.parent);
  }
  ChangeNotes notes = MutateNotes(message.report);
  notes.run_state = SaveStateLocked();
  if (auto done = state_.AddDuplicate(message.parent, existing, proposal.mutation, message.expansion, std::move(notes));
      !done) {
    Fatal(done.error());
  }
}

Engine::Impl::Route Engine::Impl::RecordLocked(engine::Built& message, Job& out) {
  const std::string& code_hash = message.job.build.code_hash;
  if (auto done = state_.SetBuilt(message.job.node, code_hash); !done) {
    Fatal(done.error());
    return Route::kDone;
  }
  if (!code_hash.empty()) {
    auto twin = state_.FindSameCode(message.job.node, code_hash);
    if (!twin) {
      Fatal(twin.error());
      return Route::kDone;
    }
    if (*twin) {
      RecordSameCodeLocked(message.job, **twin);
      return Route::kDone;
    }
  }
  out = std::move(message.job);
  return Route::kMeasure;
}

// Same code, no second timing: a node whose build is the same code as a
// node already measured on this host (equal code hashes) is not measured. It
// carries the twin's result (GraphState::SetSameCode), frees its slot at
// once and gives its evaluation back to the budget: it is not an evaluation,
// counts for no plateau and is never judged against the incumbent (the twin
// was). A node whose twin is still being measured is measured all the same.
void Engine::Impl::RecordSameCodeLocked(const Job& job, NodeId twin) {
  const std::optional<double> speedup = graph_.Node(twin).speedup;
  --started_;
  ObserveLocked(job.node, speedup, true);  // before the state is saved, as for a result
  ReportToMakerLocked(job.node, Outcome::kMeasured, speedup);  // the twin was timed on this host
  ChangeNotes notes;
  notes.run_state = SaveStateLocked();
  auto copy = state_.SetSameCode(job.node, twin, job.build.seconds, std::move(notes));
  if (!copy) {
    ++started_;
    Fatal(copy.error());
    return;
  }
  ++summary_.same_code;
  Progress(job, *copy, fmt::format(" = node {}, same code", twin));
}

Engine::Impl::Route Engine::Impl::RecordLocked(engine::Measured& message, Job&) {
  if (message.deferred) return Route::kDone;  // left `built`, as the build stage leaves one out of time
  if (!message.fatal.empty()) StopLocked(StopReason::Error(message.fatal));
  const Job& job = message.job;
  // The measure stage claimed the node for its profile (engine_profile.cc).
  if (message.profile) ReleaseProfileLocked(job.node, StoreProfileLocked(job.node, *message.profile).has_value());
  const Measurement& measurement = message.measurement;
  const bool measured = measurement.outcome == Outcome::kMeasured;
  // The engine's side first (the verdict, the counts, a fix to queue), so
  // that the state saved with the result is the state after it; undone when
  // the store refuses the result.
  const NodeId incumbent_before = incumbent_;
  const std::int64_t since_best_before = since_best_;
  engine::ConfirmationRound round;
  ChangeNotes notes;
  if (!message.hidden_event.empty()) notes.events.emplace_back("hidden_shape", message.hidden_event);
  const bool new_best = measured && JudgeLocked(message, round, notes.events);
  since_best_ = new_best ? 0 : since_best_ + 1;
  const std::size_t fixes_before = fixes_.size();
  const auto failures_before = recent_failures_;
  MaybeQueueFix(job, measurement);
  // Before the state is saved: the portfolio's bandit and the maker's
  // direction bandit learn from this result.
  ObserveLocked(job.node, measured ? std::optional<double>(measurement.speedup) : std::nullopt, true);
  ReportToMakerLocked(job.node, measurement.outcome,
                      measured ? std::optional<double>(measurement.speedup) : std::nullopt);
  notes.run_state = SaveStateLocked();
  if (auto done = state_.SetResult(job.node, measurement, round, std::move(notes)); !done) {
    incumbent_ = incumbent_before;
    since_best_ = since_best_before;
    fixes_.resize(fixes_before);
    recent_failures_ = failures_before;
    Fatal(done.error());
    return Route::kDone;
  }
  made_by_.erase(job.node);  // only nodes in flight are kept (and saved): its fix, if any, is queued
  ++summary_.evaluations;
  ++summary_.outcomes[std::string(ToString(measurement.outcome))];
  if (new_best) {
    const double speedup = *graph_.Node(job.node).speedup;
    progress_.Event(fmt::format("kestrel: new best {:.2f}x: node {} ({})", speedup, job.node,
                                state_.LabelOf(job.node)));
    (void)store_.AddRunEvent(options_.run_id, "new_best",
                             nlohmann::json{{"node", job.node}, {"speedup", speedup}}.dump());
  }
  if (options_.budget->Check(BudgetUse::SinceBest(since_best_)) == StopKind::kPlateau) StopLocked(StopKind::kPlateau);
  // budget.roofline: a confirmed best profiled at that fraction of the roofline.
  if (new_best && message.profile && message.profile->roofline &&
      options_.budget->RooflineReached(message.profile->roofline->fraction)) {
    StopLocked(StopKind::kRoofline);
  }
  Progress(job, measurement);
  return Route::kDone;
}

void Engine::Impl::ReportToMakerLocked(NodeId node, Outcome outcome, std::optional<double> speedup) {
  const auto made_by = made_by_.find(node);
  if (made_by == made_by_.end()) return;
  ChildResult result{node, 0, state_.MutationOf(node), outcome, speedup, std::nullopt};
  if (const auto parent = graph_.FirstParent(node)) {
    result.parent = *parent;
    result.parent_speedup = graph_.Node(*parent).speedup;
  }
  mutators_[static_cast<std::size_t>(made_by->second)]->OnResult(result);
}

void Engine::Impl::MaybeQueueFix(const Job& job, const Measurement& measurement) {
  const Outcome outcome = measurement.outcome;
  if (outcome == Outcome::kMeasured) return;
  recent_failures_.push_back(fmt::format("{}: {} ({})", state_.MutationOf(job.node), ToString(outcome),
                                         engine::FirstLine(measurement.reason).substr(0, 160)));
  if (recent_failures_.size() > 5) recent_failures_.pop_front();
  if (outcome != Outcome::kBuildFailed && outcome != Outcome::kWrong && outcome != Outcome::kCrashed) return;
  const auto made_by = made_by_.find(job.node);
  if (made_by == made_by_.end() || !mutators_[static_cast<std::size_t>(made_by->second)]->CanFix()) return;
  const auto depth = fix_depth_.find(job.node);
  if ((depth == fix_depth_.end() ? 0 : depth->second) >= config_.max_fix_rounds) return;
  fixes_.push_back({WorkItem::Kind::kFix, job.node, 0, std::make_shared<const Measurement>(measurement), made_by->second});
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

void Engine::Impl::Progress(const Job& job, const Measurement& measurement, const std::string& note) {
  const ProgressSnapshot snapshot = SnapshotLocked();
  const std::string result = measurement.outcome == Outcome::kMeasured
                                 ? fmt::format("{:.2f}x{}", measurement.speedup, note)
                                 : std::string(ToString(measurement.outcome)) + " (" +
                                       engine::FirstLine(measurement.reason) + ")";
  std::string left;
  if (snapshot.time_left_s) left = fmt::format("  {:.0f}s left", std::max(0.0, *snapshot.time_left_s));
  progress_.Result(fmt::format("[{:>5}] node {:<6} {:<40} best {:.2f}x  {}{}", summary_.evaluations, job.node,
                               result.substr(0, 40), snapshot.best_speedup, state_.LabelOf(job.node), left),
                   snapshot);
}

}  // namespace kestrel
