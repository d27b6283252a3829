// The engine's side of a person in the loop (docs/ARCHITECTURE.md, "A person
// in the loop"): the human_actions a running search honours without a
// restart. Selection re-reads them when the graph's newest action id changed
// (one index lookup), and every effect is a function of the graph and the
// actions up to that id, which the run's saved state records ("human_seen").

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "search/engine/engine_impl.h"

namespace kestrel {

void Engine::Impl::RefreshHumanLocked() {
  auto latest = store_.LatestHumanAction(options_.graph_id);
  if (!latest) return StopLocked(StopReason::Error("reading people's actions: " + latest.error().message()));
  if (*latest == human_.seen) return;
  if (auto loaded = LoadHumanLocked(*latest); !loaded) {
    StopLocked(StopReason::Error("reading people's actions: " + loaded.error().message()));
  }
}

Status Engine::Impl::LoadHumanLocked(std::int64_t upto) {
  auto added = store_.HumanActions(options_.graph_id, human_.seen, upto);
  if (!added) return Fail(added.error());
  for (const HumanActionRecord& action : *added) {
    if (action.kind != HumanActionKind::kAdd || action.node_id == 0) continue;
    // A person's candidate stored while the run went on: evaluated like a seed.
    auto adopted = state_.Adopt(action.node_id);
    if (!adopted) return Fail(adopted.error());
    if (*adopted && !IsFinal(graph_.Node(action.node_id).status)) pending_.push_back(action.node_id);
  }
  auto banned = store_.BannedNodes(options_.graph_id, upto);
  if (!banned) return Fail(banned.error());
  auto pinned = store_.PinnedNodes(options_.graph_id, upto);
  if (!pinned) return Fail(pinned.error());
  auto instructions = store_.StandingInstructions(options_.run_id, upto);
  if (!instructions) return Fail(instructions.error());
  human_.seen = upto;
  human_.banned = std::set<NodeId>(banned->begin(), banned->end());
  human_.pinned = std::move(*pinned);
  human_.instructions.clear();
  for (const HumanActionRecord& steer : *instructions) human_.instructions.push_back(steer.text);
  // A lifted ban: the nodes it exhausted may be chosen again. The strategy
  // forgets only those (its own exhaustions stay).
  std::vector<NodeId> lifted;
  for (NodeId node : ban_exhausted_) {
    if (!BannedLocked(node)) lifted.push_back(node);
  }
  for (NodeId node : lifted) {
    strategy_->Revive(node);
    ban_exhausted_.erase(node);
  }
  return {};
}

bool Engine::Impl::BannedLocked(NodeId node) const {
  if (human_.banned.empty() || !graph_.Contains(node)) return false;
  const std::vector<NodeId> lineage = graph_.Lineage(node);
  return std::any_of(lineage.begin(), lineage.end(), [&](NodeId id) { return human_.banned.contains(id); });
}

std::optional<NodeId> Engine::Impl::PinnedChoiceLocked() const {
  std::optional<NodeId> chosen;
  for (NodeId node : human_.pinned) {  // in id order
    if (!graph_.Contains(node) || strategy_->IsExhausted(node) || BannedLocked(node)) continue;
    const GraphNode& pinned = graph_.Node(node);
    if (pinned.status != NodeStatus::kMeasured || !pinned.speedup) continue;
    if (!chosen || pinned.expansions < graph_.Node(*chosen).expansions) chosen = node;
  }
  return chosen;
}

void Engine::Impl::FillHumanLocked(ParentView& parent) {
  parent.human.instructions = human_.instructions;
  for (NodeId id : graph_.Lineage(parent.id)) {
    auto actions = store_.NodeActions(id);
    if (!actions) continue;  // guidance is advice: a failed read leaves it out
    for (const HumanActionRecord& action : *actions) {
      if (action.id > human_.seen) continue;
      if (action.kind == HumanActionKind::kNote) {
        parent.human.notes.push_back(fmt::format("node {} ({}): {}", id, state_.MutationOf(id), action.text));
      } else if (action.kind == HumanActionKind::kReviewReject && id == parent.id) {
        parent.human.rejections.push_back(action.text);
      }
    }
  }
}

}  // namespace kestrel
