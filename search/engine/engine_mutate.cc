// The engine's mutate stage: asks the mutators for a variant of the parent
// (or a repair of a failed node), with the context LLM prompts need.

#include <algorithm>

#include <fmt/format.h>

#include "core/check.h"
#include "search/engine/engine_impl.h"

namespace kestrel {

Engine::Impl::Event Engine::Impl::Mutate(const WorkItem& item) {
  if (item.kind == WorkItem::Kind::kEvaluate) return engine::EvaluateNode{item.node};
  const bool expansion = item.kind == WorkItem::Kind::kExpand;
  engine::Declined declined;
  declined.parent = item.node;
  declined.expansion = expansion;
  engine::MutatorReport report;
  // A selection made for a mutator's waiting versions holds its claim until
  // the expansion has taken one (however it ends).
  struct ClaimRelease {
    Impl& engine;
    const WorkItem& item;
    ~ClaimRelease() {
      if (item.kind != WorkItem::Kind::kExpand || item.mutator < 0) return;
      std::lock_guard lock(engine.mutex_);
      const auto claimed = engine.waiting_claimed_.find({item.mutator, item.node});
      if (claimed != engine.waiting_claimed_.end() && --claimed->second == 0) engine.waiting_claimed_.erase(claimed);
    }
  } const claim{*this, item};
  try {
    ParentView parent{item.node, {}};
    parent.advisor = advisor_;
    const bool wants_context = std::any_of(mutators_.begin(), mutators_.end(),
                                           [](const auto& mutator) { return mutator->WantsContext(); });
    {
      std::lock_guard lock(mutex_);
      parent.candidate = state_.CandidateOf(item.node);
      parent.candidate.toolchain = evaluator_.Toolchain();
      parent.candidate.flags = evaluator_.Flags();
      if (wants_context && expansion) FillContextLocked(parent);
      if (wants_context) FillHumanLocked(parent);
    }
    // What the LLM is told about the parent's performance (engine_profile.cc).
    if (wants_context && expansion) ProfileParent(parent);
    const IsKnown is_known = [this](const std::string& identity) {
      std::lock_guard lock(mutex_);
      auto known = state_.FindByIdentity(identity);
      KESTREL_CHECK(known.has_value(), ("looking up a candidate: " + (known ? std::string() : known.error().message())).c_str());
      return known->has_value();
    };
    // Takes a mutator's answer: true when it proposed.
    const auto take = [&](MutationResult& result, int index) {
      for (auto& call : result.calls) report.calls.push_back(std::move(call));
      for (auto& review : result.reviews) report.reviews.push_back(std::move(review));
      if (!result.stop_reason.empty()) report.stops.push_back(result.stop_reason);
      report.budget_spent = report.budget_spent || result.budget_spent;
      if (result.proposal) {
        report.mutator = index;
        return true;
      }
      if (!result.note.empty()) declined.declines.push_back(result.note);
      declined.exhausted = declined.exhausted && result.exhausted;
      return false;
    };
    const auto proposed = [&](MutationResult& result) -> Event {
      return engine::Proposed{item.node, expansion, std::move(*result.proposal), std::move(report)};
    };
    if (item.kind == WorkItem::Kind::kFix) {
      const int index = item.mutator;
      MutationResult result = mutators_[static_cast<std::size_t>(index)]->Fix(parent, *item.failure, is_known);
      if (result.proposal) result.proposal->edge_kind = EdgeKind::kFix;
      if (take(result, index)) return proposed(result);
      declined.exhausted = false;  // a failed node is never expanded anyway
      declined.report = std::move(report);
      return declined;
    }
    std::mt19937_64 rng(item.rng_seed);
    // The mutator holding a version made for this parent builds it first.
    if (item.mutator >= 0) {
      const auto index = static_cast<std::size_t>(item.mutator);
      MutationResult result = mutators_[index]->Expand(parent, rng, is_known);
      if (take(result, item.mutator)) return proposed(result);
    }
    // Mutators in a random order drawn by weight: the first that does not decline wins.
    std::vector<double> weights;
    for (const auto& mutator : config_.mutators) weights.push_back(mutator.weight);
    std::vector<std::size_t> order;
    while (std::any_of(weights.begin(), weights.end(), [](double weight) { return weight > 0; })) {
      std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());
      order.push_back(pick(rng));
      weights[order.back()] = 0;
    }
    for (std::size_t index : order) {
      if (static_cast<int>(index) == item.mutator) continue;  // it declined above: not asked twice
      MutationResult result = mutators_[index]->Expand(parent, rng, is_known);
      if (take(result, static_cast<int>(index))) return proposed(result);
    }
  } catch (const InvariantError& error) {
    declined.exhausted = false;
    declined.fatal = error.what();
  } catch (const std::exception& error) {
    declined.error = std::string("mutator failed: ") + error.what();
  }
  declined.report = std::move(report);
  return declined;
}

void Engine::Impl::FillContextLocked(ParentView& parent) {
  const auto result_of = [this](NodeId id) {
    const GraphNode& node = graph_.Node(id);
    if (node.status == NodeStatus::kMeasured && node.speedup) return fmt::format("{:.2f}x", *node.speedup);
    return std::string(ToString(node.status));
  };
  parent.measurement = result_of(parent.id) + " speedup over the reference";
  for (NodeId id : graph_.Lineage(parent.id)) {
    parent.lineage.push_back({state_.MutationOf(id), result_of(id)});
  }
  const std::vector<NodeId> best = graph_.Best(4);
  for (std::size_t rank = 0; rank < best.size(); ++rank) {
    const NodeId id = best[rank];
    if (id == parent.id || parent.inspirations.size() >= 2 || !graph_.Node(id).speedup) continue;
    if (const std::string& source = state_.SourceOf(id); source != parent.candidate.source) {
      parent.inspirations.push_back(
          {static_cast<int>(rank) + 1, *graph_.Node(id).speedup, state_.MutationOf(id), source});
    }
  }
  for (NodeId id : graph_.Best(4)) {
    if (id == parent.id || graph_.Node(id).status != NodeStatus::kMeasured) continue;
    if (state_.SourceOf(id) == parent.candidate.source) continue;
    parent.partners.push_back({id, state_.CandidateOf(id), result_of(id) + " speedup over the reference"});
  }
  parent.recent_failures.assign(recent_failures_.begin(), recent_failures_.end());
  for (NodeId child : graph_.Children(parent.id)) parent.child_mutations.push_back(state_.MutationOf(child));
  FillStoredLocked(parent);
}

// What the store holds about the parent beyond the graph: the expert
// baseline's speedup from its latest measurement, and its analysis when an
// earlier session paid for one (a call that got a reply: one that failed
// without one is made again).
void Engine::Impl::FillStoredLocked(ParentView& parent) {
  if (task_.baseline) {
    auto measurements = store_.GetMeasurements(parent.id);
    if (measurements && !measurements->empty()) parent.baseline_speedup = measurements->back().measurement.baseline_speedup;
  }
  auto analyses = store_.LlmCallsForNode(parent.id, "analysis");
  if (!analyses) return;
  for (auto call = analyses->rbegin(); call != analyses->rend(); ++call) {
    if (!call->response.empty()) {
      parent.stored_analysis = call->response;
      break;
    }
  }
}

}  // namespace kestrel
