#include "search/mutators/direction_stats.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <map>
#include <unordered_map>

#include "search/mutators/prompt.h"

namespace kestrel {

std::string DirectionCategory(std::string_view mutation) {
  mutation = WithoutVersion(mutation);  // a reply's versions count under their direction
  if (mutation.starts_with("knob ")) return "knob";
  // The knob advisor's techniques (search/knobs/knob_advisor.h).
  for (const char* technique : {"model (", "polish (", "screen: ", "restart: ", "marginals (", "multi: ", "cross with "}) {
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

std::optional<double> PredictedSpeedup(std::string_view mutation) {
  const std::size_t mark = mutation.find("x predicted");
  if (mark == std::string_view::npos) return std::nullopt;
  std::size_t begin = mark;
  while (begin > 0 && (std::isdigit(static_cast<unsigned char>(mutation[begin - 1])) || mutation[begin - 1] == '.')) --begin;
  if (begin == mark) return std::nullopt;
  try {
    const double value = std::stod(std::string(mutation.substr(begin, mark - begin)));
    return value > 0 ? std::optional<double>(value) : std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
}

namespace {

// Ranks from 1, ties at their mean rank.
std::vector<double> Ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = (static_cast<double>(i + j) / 2.0) + 1.0;
    i = j + 1;
  }
  return ranks;
}

// Spearman's correlation: Pearson's over the ranks; nullopt when either side is constant.
std::optional<double> Spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const std::vector<double> rx = Ranks(x), ry = Ranks(y);
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += rx[i] / n, my += ry[i] / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx <= 0 || syy <= 0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace

std::vector<DirectionStats> ComputeDirectionStats(const std::vector<NodeRecord>& nodes,
                                                  const std::vector<EdgeRecord>& edges,
                                                  std::optional<std::int64_t> run) {
  std::unordered_map<std::int64_t, const NodeRecord*> by_id;
  for (const NodeRecord& node : nodes) by_id[node.id] = &node;
  std::map<std::string, DirectionStats> stats;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> predictions;  // predicted, measured
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
    } else {
      if (made.speedup && parent->second->speedup && *parent->second->speedup > 0) {
        const double gain = *made.speedup / *parent->second->speedup - 1.0;
        if (gain > 0) ++entry.successes;
        entry.mean_gain += (gain - entry.mean_gain) / static_cast<double>(++entry.gains);
      }
      if (const auto predicted = PredictedSpeedup(edge.mutation); predicted && made.speedup) {
        auto& [expected, got] = predictions[category];
        expected.push_back(*predicted);
        got.push_back(*made.speedup);
      }
    }
  }
  for (auto& [category, pairs] : predictions) {
    DirectionStats& entry = stats[category];
    const auto& [expected, got] = pairs;
    entry.predicted = static_cast<std::int64_t>(expected.size());
    if (expected.size() >= 3) entry.rank_correlation = Spearman(expected, got);
    std::vector<double> errors;
    for (std::size_t i = 0; i < expected.size(); ++i) errors.push_back(std::abs(got[i] / expected[i] - 1.0));
    std::nth_element(errors.begin(), errors.begin() + static_cast<std::ptrdiff_t>(errors.size() / 2), errors.end());
    entry.median_error = errors[errors.size() / 2];
  }
  std::vector<DirectionStats> list;
  for (auto& [category, entry] : stats) list.push_back(entry);
  std::stable_sort(list.begin(), list.end(),
                   [](const DirectionStats& a, const DirectionStats& b) { return a.tries > b.tries; });
  return list;
}

}  // namespace kestrel
