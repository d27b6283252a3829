#include "search/mutators/direction_stats.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "search/mutators/prompt.h"

namespace kestrel {

std::string DirectionCategory(std::string_view mutation) {
  if (mutation.starts_with("knob ")) return "knob";
  // The knob advisor's techniques (search/knobs/knob_advisor.h).
  for (const char* technique : {"model (", "restart: ", "multi: ", "cross with "}) {
    if (mutation.starts_with(technique)) {
      return "knob " + std::string(mutation.substr(0, mutation.find_first_of(" :")));
    }
  }
  if (mutation.starts_with("combine ")) return "combine";
  if (const std::size_t rec = mutation.find(":rec "); rec != std::string_view::npos) {
    const std::string_view rank = mutation.substr(rec + 5, mutation.find('/', rec) - rec - 5);
    return "analysis rec " + std::string(rank);
  }
  if (mutation.find(":fix ") != std::string_view::npos) return "fix";
  if (mutation.starts_with("llm:")) {
    const std::string_view last = mutation.substr(mutation.rfind(':') + 1);
    const auto& directions = MutationDirections();
    if (std::find(directions.begin(), directions.end(), last) != directions.end()) return std::string(last);
    return "llm";
  }
  return std::string(mutation.substr(0, mutation.find_first_of(" :")));
}

std::vector<DirectionStats> ComputeDirectionStats(const std::vector<NodeRecord>& nodes,
                                                  const std::vector<EdgeRecord>& edges,
                                                  std::optional<std::int64_t> run) {
  std::unordered_map<std::int64_t, const NodeRecord*> by_id;
  for (const NodeRecord& node : nodes) by_id[node.id] = &node;
  std::map<std::string, DirectionStats> stats;
  for (const EdgeRecord& edge : edges) {
    if (edge.kind != EdgeKind::kDerive && edge.kind != EdgeKind::kFix) continue;
    if (run && edge.run_id != *run) continue;
    const auto child = by_id.find(edge.child);
    const auto parent = by_id.find(edge.parent);
    if (child == by_id.end() || parent == by_id.end()) continue;
    const std::string category = DirectionCategory(edge.mutation);
    DirectionStats& entry = stats[category];
    entry.category = category;
    ++entry.tries;
    const NodeRecord& made = *child->second;
    if (made.status == NodeStatus::kProposed || made.status == NodeStatus::kBuilt) {
      ++entry.pending;
    } else if (made.status != NodeStatus::kMeasured) {
      ++entry.failures;
    } else if (made.speedup && parent->second->speedup && *parent->second->speedup > 0) {
      const double gain = *made.speedup / *parent->second->speedup - 1.0;
      if (gain > 0) ++entry.successes;
      entry.mean_gain += (gain - entry.mean_gain) / static_cast<double>(++entry.gains);
    }
  }
  std::vector<DirectionStats> list;
  for (auto& [category, entry] : stats) list.push_back(entry);
  std::stable_sort(list.begin(), list.end(),
                   [](const DirectionStats& a, const DirectionStats& b) { return a.tries > b.tries; });
  return list;
}

}  // namespace kestrel
