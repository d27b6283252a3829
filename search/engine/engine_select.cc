// The engine's select side: the graph it starts from, the seeds, the choice of
// the next work item, the budgets, and the state a resumed run continues from.

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "core/json_text.h"
#include "search/engine/engine_impl.h"
#include "search/engine/graph_loader.h"
#include "core/stop.h"
#include "search/knobs/knob_advisor.h"

namespace kestrel {
namespace engine {

std::uint64_t SelectionSeed(std::uint64_t run_seed, std::uint64_t selection) {
  // SplitMix64 of (run seed, selection): independent streams per selection.
  std::uint64_t z = run_seed + 0x9e3779b97f4a7c15ULL * (selection + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string EventJson(const nlohmann::json& detail) {
  return JsonText(detail);
}

}  // namespace engine

using engine::Clock;

Status Engine::Impl::LoadGraph() {
  std::function<void(const engine::GraphState::StoredResult&)> observe;
  // Final nodes without knobs, in id order: the advisor's source ranker
  // reads the latest of them (SourceRanker::kWindow) once the graph is in.
  std::vector<std::pair<NodeId, std::optional<double>>> without_knobs;
  if (advisor_) {
    observe = [this, &without_knobs](const engine::GraphState::StoredResult& node) {
      if (node.knobs_json == "{}") {
        without_knobs.emplace_back(node.node, node.speedup);
      } else if (node.source != nullptr) {
        advisor_->ObserveStored(node.node, *node.source, node.knobs_json, node.speedup);
      }
    };
  }
  auto unfinished = state_.Load(observe);
  if (!unfinished) return Fail(unfinished.error());
  const std::size_t window = std::min(without_knobs.size(), SourceRanker::kWindow);
  for (auto it = without_knobs.end() - static_cast<std::ptrdiff_t>(window); it != without_knobs.end(); ++it) {
    advisor_->Observe(it->first, state_.SharedSourceOf(it->first), {}, it->second, state_.MutationOf(it->first), false);
  }
  pending_.assign(unfinished->begin(), unfinished->end());
  // The best of earlier runs is the incumbent until a result beats it.
  if (const auto best = BestTimedLocked(1); !best.empty()) incumbent_ = best[0];
  return {};
}

std::vector<NodeId> Engine::Impl::BestTimedLocked(std::size_t k) const {
  std::vector<NodeId> best;
  if (k == 0) return best;
  graph_.VisitRanked([&](NodeId node) {
    if (!state_.IsSameCodeCopy(node)) best.push_back(node);
    return best.size() < k;
  });
  return best;
}

void Engine::Impl::ObserveLocked(NodeId node, std::optional<double> speedup, bool live) {
  if (!advisor_) return;
  const KnobValues& knobs = state_.KnobsOf(node);
  advisor_->Observe(node, state_.SharedSourceOf(node), knobs, speedup, state_.MutationOf(node), live);
}

Status Engine::Impl::AddSeeds() {
  for (const SourceFile& seed : task_.seeds) {
    auto knobs = ParseKnobs(seed.text);
    if (!knobs) return Fail(knobs.error().WithContext(task_.name + "/" + seed.name));
    const Candidate candidate{seed.text, DefaultKnobs(*knobs), evaluator_.Toolchain(), evaluator_.Flags()};
    auto known = state_.FindByIdentity(candidate.Identity());
    if (!known) return Fail(known.error());
    if (*known) continue;
    auto id = state_.AddSeed(NewNodeRecord(candidate, options_.graph_id, options_.run_id, "seed:" + seed.name));
    if (!id) return Fail(id.error());
    pending_.push_back(*id);
  }
  return {};
}

// The state is saved with every node change (GraphState), in its
// transaction, so a run killed at any moment resumes with the selection
// count, plateau count, strategy state and queued fixes that agree with the
// graph it stored.
std::string Engine::Impl::SaveStateLocked(const std::optional<MadeBy>& also) const {
  nlohmann::json fixes = nlohmann::json::array();
  for (const WorkItem& fix : fixes_) {
    const auto depth = fix_depth_.find(fix.node);
    fixes.push_back({{"node", fix.node}, {"mutator", fix.mutator}, {"depth", depth == fix_depth_.end() ? 0 : depth->second}});
  }
  // The nodes in flight that a mutator made (a fix is asked of it if one
  // fails), with their fix depth: node, mutator, depth; by node.
  std::vector<std::array<std::int64_t, 3>> made;
  for (const auto& [node, mutator] : made_by_) {
    const auto depth = fix_depth_.find(node);
    made.push_back({node, mutator, depth == fix_depth_.end() ? 0 : depth->second});
  }
  if (also) made.push_back({also->node, also->mutator, also->depth});
  std::sort(made.begin(), made.end());
  nlohmann::json streaks = nlohmann::json::array();
  for (const auto& [node, count] : duplicate_streak_) streaks.push_back({node, count});
  // What each mutator learned (the LLM mutator's direction bandit), by index.
  nlohmann::json learned = nlohmann::json::array();
  for (const auto& mutator : mutators_) {
    const std::string saved = mutator->SaveState();
    learned.push_back(saved.empty() ? nlohmann::json() : nlohmann::json::parse(saved));
  }
  return nlohmann::json{{"version", 1},
                        {"selections", selections_},
                        {"recent_failures", recent_failures_},
                        {"in_flight", made},
                        {"since_best", since_best_},
                        {"confirmed_through", confirmed_through_},
                        {"incumbent", incumbent_},
                        {"strategy", strategy_->SaveState(Strategy::StateParts::kWithoutJournal)},
                        {"fixes", fixes},
                        {"duplicate_streaks", streaks},
                        {"mutators", learned},
                        {"human_seen", human_.seen},
                        {"ban_exhausted", ban_exhausted_}}
      .dump();
}

Status Engine::Impl::RestoreState() {
  if (options_.saved_state.empty() || options_.saved_state == "{}") return {};
  const std::string where = "run " + std::to_string(options_.run_id) + "'s saved state";
  try {
    const nlohmann::json state = nlohmann::json::parse(options_.saved_state);
    if (state.at("version").get<int>() != 1) return Fail(Error::Corruption(where + ": unknown version"));
    selections_ = state.at("selections").get<std::uint64_t>();
    since_best_ = state.at("since_best").get<std::int64_t>();
    // A state from before the field: its last session's evaluations were
    // confirmed as it ended (what was assumed then).
    confirmed_through_ = state.value("confirmed_through", options_.budget->before().evaluations);
    if (options_.new_plateau) since_best_ = 0;
    if (const NodeId incumbent = state.value("incumbent", NodeId{0}); incumbent != 0 && graph_.Contains(incumbent) &&
                                                                       graph_.Node(incumbent).speedup) {
      incumbent_ = incumbent;
    }
    if (auto restored = strategy_->RestoreState(state.at("strategy")); !restored) {
      return Fail(restored.error().WithContext(where));
    }
    // The strategy's journal, stored with the states saved before this one.
    auto journal = store_.StrategyJournal(options_.run_id);
    if (!journal) return Fail(journal.error());
    for (const std::string& row : *journal) {
      if (auto replayed = strategy_->Replay(nlohmann::json::parse(row)); !replayed) {
        return Fail(Error::Corruption(where + ": the strategy's journal: " + replayed.error().message()));
      }
    }
    state_.SetJournalRows(static_cast<std::int64_t>(journal->size()));
    // What the LLM prompts list as failures to avoid: the run's latest, not
    // only this session's (older saved states have none).
    for (const nlohmann::json& failure : state.value("recent_failures", nlohmann::json::array())) {
      recent_failures_.push_back(failure.get<std::string>());
    }
    for (const nlohmann::json& made : state.value("in_flight", nlohmann::json::array())) {
      const NodeId node = made.at(0).get<NodeId>();
      const int mutator = made.at(1).get<int>();
      if (!graph_.Contains(node) || IsFinal(graph_.Node(node).status) || mutator < 0 ||
          static_cast<std::size_t>(mutator) >= mutators_.size()) {
        continue;
      }
      made_by_[node] = mutator;
      if (const int depth = made.at(2).get<int>(); depth > 0) fix_depth_[node] = depth;
    }
    for (const nlohmann::json& streak : state.value("duplicate_streaks", nlohmann::json::array())) {
      duplicate_streak_[streak.at(0).get<NodeId>()] = streak.at(1).get<int>();
    }
    // A mutator's state is restored when the resumed config has a mutator
    // of the same kind at its index (older saved states have none).
    const nlohmann::json learned = state.value("mutators", nlohmann::json::array());
    for (std::size_t index = 0; index < learned.size() && index < mutators_.size(); ++index) {
      if (learned[index].is_null()) continue;
      if (auto restored = mutators_[index]->RestoreState(learned[index].dump()); !restored) {
        return Fail(restored.error().WithContext(where));
      }
    }
    // The people's actions its selections saw (older saved states: none).
    for (const nlohmann::json& node : state.value("ban_exhausted", nlohmann::json::array())) {
      ban_exhausted_.insert(node.get<NodeId>());
    }
    if (const std::int64_t seen = state.value("human_seen", std::int64_t{0}); seen > 0) {
      if (auto loaded = LoadHumanLocked(seen); !loaded) return Fail(loaded.error().WithContext(where));
    }
    for (const nlohmann::json& fix : state.at("fixes")) {
      const NodeId node = fix.at("node").get<NodeId>();
      const int mutator = fix.at("mutator").get<int>();
      // A fix by a mutator the resumed config no longer has is dropped.
      if (!graph_.Contains(node) || mutator < 0 || static_cast<std::size_t>(mutator) >= mutators_.size()) continue;
      auto measurements = store_.GetMeasurements(node);
      if (!measurements) return Fail(measurements.error());
      if (measurements->empty()) continue;
      made_by_[node] = mutator;
      fix_depth_[node] = fix.at("depth").get<int>();
      fixes_.push_back({WorkItem::Kind::kFix, node, 0,
                        std::make_shared<const Measurement>(measurements->back().measurement), mutator});
    }
  } catch (const nlohmann::json::exception& error) {
    return Fail(Error::Corruption(where + ": " + error.what()));
  }
  return {};
}

std::optional<StopReason> Engine::Impl::StopReasonLocked() const {
  if (stop_reason_) return stop_reason_;
  if (StopRequested()) return StopKind::kSignal;
  const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  if (const auto spent = options_.budget->Check(BudgetUse::Active(seconds))) return *spent;
  // Checked after each result too; here for a resumed run already past it.
  if (options_.budget->Check(BudgetUse::SinceBest(since_best_)) == StopKind::kPlateau) return StopKind::kPlateau;
  return std::nullopt;
}

// Stops selecting. Work in flight is cut short for every reason but the
// evaluation budget (whose in-flight candidates are part of the budget):
// LLM calls end now and their mutate events decline.
void Engine::Impl::StopLocked(const StopReason& reason) {
  if (!stop_reason_) stop_reason_ = reason;
  if (stop_reason_->kind != StopKind::kEvaluations) {
    for (auto& mutator : mutators_) mutator->Cancel();
  }
}

Engine::Impl::WorkItem Engine::Impl::Next(tbb::flow_control& control) {
  try {
    return NextItem(control);
  } catch (const InvariantError& error) {
    // A broken invariant while selecting (the strategy, the graph): the run
    // stops with its state saved, like any other stop.
    std::lock_guard lock(mutex_);
    StopLocked(StopReason::Error(error.what()));
    control.stop();
    return {};
  }
}

Engine::Impl::WorkItem Engine::Impl::NextItem(tbb::flow_control& control) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (auto reason = StopReasonLocked()) {
      StopLocked(*reason);
      control.stop();
      return {};
    }
    // Select only when a slot is free: TBB's input node asks for the next item
    // ahead of the limiter, and a selection made then would not see the
    // result that frees the slot.
    if (in_flight_ >= config_.parallel.InFlight()) {
      changed_.wait_for(lock, std::chrono::milliseconds(100));
      continue;
    }
    const bool budget_left =
        options_.budget->Check(BudgetUse::Started(started_ + unstarted_)) != StopKind::kEvaluations;
    RefreshHumanLocked();
    if (budget_left && !pending_.empty()) {
      const NodeId node = pending_.front();
      pending_.pop_front();
      ++in_flight_;
      ++unstarted_;
      return {WorkItem::Kind::kEvaluate, node, 0, nullptr, -1};
    }
    // A fix repairs a node made under its parent: none in a banned subtree.
    std::erase_if(fixes_, [this](const WorkItem& fix) { return BannedLocked(fix.node); });
    if (budget_left && !fixes_.empty()) {
      WorkItem fix = std::move(fixes_.front());
      fixes_.pop_front();
      ++in_flight_;
      ++unstarted_;
      return fix;
    }
    if (budget_left) {
      std::mt19937_64 draw(engine::SelectionSeed(run_seed_, selections_));
      // A pinned node comes before the strategy's choice, and so does a parent
      // a mutator holds paid-for versions for; a choice in a banned subtree
      // is exhausted for the strategy and the selection made again with the
      // same stream (so it depends only on the actions seen).
      std::optional<NodeId> parent = PinnedChoiceLocked();
      int holder = -1;
      if (!parent) {
        if (const auto waiting = WaitingChoiceLocked()) {
          parent = waiting->first;
          holder = waiting->second;
          ++waiting_claimed_[{holder, *parent}];
        }
      }
      while (!parent) {
        parent = strategy_->Select(graph_, draw);
        if (!parent || !BannedLocked(*parent)) break;
        strategy_->MarkExhausted(*parent);
        ban_exhausted_.insert(*parent);
        parent.reset();
        draw.seed(engine::SelectionSeed(run_seed_, selections_));
      }
      if (parent) {
        ++selections_;
        state_.NoteSelection(*parent);
        ++in_flight_;
        ++unstarted_;
        return {WorkItem::Kind::kExpand, *parent, draw(), nullptr, holder};
      }
    }
    if (in_flight_ == 0) {
      StopLocked(budget_left ? StopKind::kExhausted : StopKind::kEvaluations);
      control.stop();
      return {};
    }
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

std::optional<std::pair<NodeId, int>> Engine::Impl::WaitingChoiceLocked() const {
  for (std::size_t index = 0; index < mutators_.size(); ++index) {
    const int mutator = static_cast<int>(index);
    for (const auto& [node, count] : mutators_[index]->Waiting()) {  // in id order
      const auto claimed = waiting_claimed_.find({mutator, node});
      if (claimed != waiting_claimed_.end() && claimed->second >= count) continue;
      if (!graph_.Contains(node) || strategy_->IsExhausted(node) || BannedLocked(node)) continue;
      if (graph_.Node(node).status != NodeStatus::kMeasured) continue;
      return std::make_pair(node, mutator);
    }
  }
  return std::nullopt;
}

// Select does not run while every slot is busy, so budgets and signals are
// also watched here: a stop cancels work in flight at once (an LLM call
// waiting for a reply), and the status line keeps moving.
void Engine::Impl::Watch(std::stop_token stop) {
  std::unique_lock lock(mutex_);
  while (!stop.stop_requested()) {
    if (auto reason = StopReasonLocked()) StopLocked(*reason);
    progress_.Tick(SnapshotLocked());
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

}  // namespace kestrel
