// islands (search/strategies/strategy.h, docs/STRATEGIES.md): N populations searched in
// turn, which exchange their best node every few selections.
//
//   home:      a root is dealt to island (roots seen so far) mod N; any other
//              node joins the island its parent was selected for (the oldest
//              selection of that parent not yet answered by a child), or
//              its parent's home when none is waiting.
//   members:   island i = the nodes whose home is i, plus guests that
//              migrated to i (a node may belong to several islands).
//   Select:    the next island in turn that has an expandable member; in it,
//              the member with the highest graph-ucb score (PickByUcb's over
//              that island's members only, kept by a UcbIndex with one group
//              per island, so nothing is rescanned).
//   migration: after every `migration_interval`-th selection, the fastest
//              expandable member of each island i (ties: lower id) becomes a
//              guest of island (i + 1) mod N (all bests are taken before any
//              moves).
//   saved:     homes and guests grow with the graph, so they go to the
//              strategy's journal (["home", node, island], ["guest", node,
//              island]) as they are made; the state saved with each result
//              holds the counters and the unanswered selections.

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "search/strategies/strategies.h"
#include "search/strategies/ucb_index.h"

namespace kestrel::strategies {
namespace {

constexpr std::int64_t kMaxCount = std::numeric_limits<std::int64_t>::max();

// Reads [[id, [island, ...]], ...], each island in [0, count).
Result<std::map<NodeId, std::vector<int>>> ReadIslandLists(const nlohmann::json& state, const std::string& field,
                                                           int count) {
  auto value = StateField(state, field);
  if (!value) return Fail(value.error());
  if (!(*value)->is_array()) return Fail(StateError(field, "an array of [node, [islands]] pairs"));
  std::map<NodeId, std::vector<int>> lists;
  for (const auto& pair : **value) {
    if (!pair.is_array() || pair.size() != 2 || !pair[1].is_array()) {
      return Fail(StateError(field, "[node, [islands]] pairs, got " + pair.dump()));
    }
    auto id = StateInteger(pair[0], field + "[].node", std::numeric_limits<NodeId>::min(), kMaxCount);
    if (!id) return Fail(id.error());
    std::vector<int>& islands = lists[*id];
    for (const auto& island : pair[1]) {
      auto index = StateInteger(island, field + "[].island", 0, count - 1);
      if (!index) return Fail(index.error());
      islands.push_back(static_cast<int>(*index));
    }
  }
  return lists;
}

nlohmann::json WriteIslandLists(const std::unordered_map<NodeId, std::vector<int>>& lists) {
  const std::map<NodeId, std::vector<int>> sorted(lists.begin(), lists.end());
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [id, islands] : sorted) {
    if (!islands.empty()) out.push_back({id, islands});
  }
  return out;
}

class Islands final : public Strategy {
 public:
  explicit Islands(const StrategyConfig& config)
      : count_(config.islands),
        interval_(config.migration_interval),
        index_({config.exploration, config.subtree_weight}, config.islands,
               [this](NodeId id, std::vector<int>& islands) { IslandsOf(id, islands); }, true) {}
  // The index asks this strategy for membership: not to be copied.
  Islands(const Islands&) = delete;
  Islands& operator=(const Islands&) = delete;

  std::optional<NodeId> Select(const SearchGraph& graph, std::mt19937_64& rng) override {
    Assign(graph);
    const std::function<bool(NodeId)> exhausted = [this](NodeId id) { return IsExhausted(id); };
    for (int step = 0; step < count_; ++step) {
      const int island = static_cast<int>((next_ + step) % count_);
      const auto chosen = index_.Select(graph, exhausted, rng, island);
      if (!chosen) continue;
      next_ = (island + 1) % count_;
      waiting_[*chosen].push_back(island);
      if (++selections_ % interval_ == 0) Migrate(graph);
      return chosen;
    }
    return std::nullopt;
  }

  void SaveOwn(nlohmann::json& state, StateParts parts) const override {
    std::unordered_map<NodeId, std::vector<int>> waiting;
    for (const auto& [id, queue] : waiting_) waiting[id].assign(queue.begin(), queue.end());
    state["islands"] = count_;
    if (parts == StateParts::kAll) {
      const std::map<NodeId, int> home(home_.begin(), home_.end());
      nlohmann::json homes = nlohmann::json::array();
      for (const auto& [id, island] : home) homes.push_back({id, island});
      state["home"] = homes;
      state["guests"] = WriteIslandLists(guests_);
    }
    state["waiting"] = WriteIslandLists(waiting);
    state["next"] = next_;
    state["selections"] = selections_;
    state["roots"] = roots_;
  }

  void SnapshotOwn(nlohmann::json& entries) const override {
    std::vector<std::pair<NodeId, int>> homes(home_.begin(), home_.end());
    std::sort(homes.begin(), homes.end());
    std::vector<std::int64_t> flat;
    flat.reserve(2 * homes.size());
    for (const auto& [id, island] : homes) flat.insert(flat.end(), {id, island});
    if (!flat.empty()) entries.push_back({"homes", flat});
    flat.clear();
    for (const auto& [id, islands] : std::map<NodeId, std::vector<int>>(guests_.begin(), guests_.end())) {
      for (int island : islands) flat.insert(flat.end(), {id, island});
    }
    if (!flat.empty()) entries.push_back({"guests", flat});
  }

  Status RestoreState(const nlohmann::json& state) override {
    if (!state.is_object()) return Strategy::RestoreState(state);  // refuses it
    auto islands = StateField(state, "islands");
    if (!islands) return Fail(islands.error());
    if (auto saved = StateInteger(**islands, "islands", count_, count_); !saved) {
      return Fail(saved.error().WithContext("saved with another number of islands than the config's"));
    }
    // Without "home" and "guests" (a state saved without its journal),
    // Replay gives them.
    std::vector<std::pair<NodeId, int>> home;
    if (state.contains("home")) {
      const nlohmann::json& homes = state.at("home");
      if (!homes.is_array()) return Fail(StateError("home", "an array of [node, island] pairs"));
      for (const auto& pair : homes) {
        auto entry = ReadHome(pair, "home[]");
        if (!entry) return Fail(entry.error());
        home.push_back(*entry);
      }
    }
    std::map<NodeId, std::vector<int>> guests;
    if (state.contains("guests")) {
      auto read = ReadIslandLists(state, "guests", count_);
      if (!read) return Fail(read.error());
      guests = std::move(*read);
    }
    auto waiting = ReadIslandLists(state, "waiting", count_);
    if (!waiting) return Fail(waiting.error());
    std::int64_t counters[3] = {};
    const char* const names[3] = {"next", "selections", "roots"};
    for (int i = 0; i < 3; ++i) {
      auto field = StateField(state, names[i]);
      if (!field) return Fail(field.error());
      auto value = StateInteger(**field, names[i], 0, i == 0 ? count_ - 1 : kMaxCount);
      if (!value) return Fail(value.error());
      counters[i] = *value;
    }
    const std::vector<std::string> own = {"islands", "home", "guests", "waiting", "next", "selections", "roots"};
    if (auto status = RestoreExhausted(state, own); !status) return status;
    // A state saved whole goes on as a journal.
    home_.clear();
    for (const auto& [id, island] : home) Home(id, island);
    guests_.clear();
    for (const auto& [id, islands] : guests) {
      for (int island : islands) Visit(id, island);
    }
    waiting_.clear();
    for (const auto& [id, queue] : *waiting) waiting_[id].assign(queue.begin(), queue.end());
    next_ = counters[0];
    selections_ = counters[1];
    roots_ = counters[2];
    Reindex();
    return {};
  }

 protected:
  void Exhausted(NodeId id) override { index_.Drop(id); }
  void Reindex() override {
    index_.Reset();  // derived from the graph, the homes and the guests; rebuilt by the next Select
    assigned_ = 0;
  }

  // ["home", node, island]: where Assign homed a node; ["guest", node,
  // island]: an island it migrated to; a snapshot's ["homes", [node,
  // island, node, island, ...]] and ["guests", [...]]: every one (flat, so
  // that a million homes parse and replay in a fraction of a second).
  Status ReplayEntry(const nlohmann::json& entry, bool apply) override {
    const std::string* kind = entry.is_array() && (entry.size() == 2 || entry.size() == 3) && entry[0].is_string()
                                  ? entry[0].get_ptr<const std::string*>()
                                  : nullptr;
    const bool one = kind != nullptr && entry.size() == 3 && (*kind == "home" || *kind == "guest");
    const bool all = kind != nullptr && entry.size() == 2 && (*kind == "homes" || *kind == "guests");
    if (!one && !all) return Strategy::ReplayEntry(entry, apply);
    const bool homes = *kind == "home" || *kind == "homes";
    const auto place = [&](const nlohmann::json& node, const nlohmann::json& island) -> Status {
      const auto id = IntegerIn(node, std::numeric_limits<NodeId>::min(), kMaxCount);
      const auto index = IntegerIn(island, 0, count_ - 1);
      if (!id || !index) {
        return Fail(JournalError(entry, one ? "[\"" + *kind + "\", node id, island in [0, " +
                                                  std::to_string(count_ - 1) + "]]"
                                            : "[\"" + *kind + "\", [node id, island, ...]], each island in [0, " +
                                                  std::to_string(count_ - 1) + "]"));
      }
      if (!apply) return {};
      if (homes) {
        home_[*id] = static_cast<int>(*index);
      } else {
        std::vector<int>& visits = guests_[*id];
        if (std::find(visits.begin(), visits.end(), *index) == visits.end()) visits.push_back(static_cast<int>(*index));
      }
      return {};
    };
    if (one) return place(entry[1], entry[2]);  // Replay reindexes when done
    const nlohmann::json& pairs = entry[1];
    if (!pairs.is_array() || pairs.size() % 2 != 0) {
      return Fail(JournalError(entry, "[\"" + *kind + "\", [node id, island, ...]]"));
    }
    if (apply && homes) home_.reserve(home_.size() + pairs.size() / 2);
    for (std::size_t i = 0; i < pairs.size(); i += 2) {
      if (auto done = place(pairs[i], pairs[i + 1]); !done) return done;
    }
    return {};
  }

 private:
  // A [node, island] pair, the island in [0, N).
  Result<std::pair<NodeId, int>> ReadHome(const nlohmann::json& pair, const std::string& what) const {
    if (!pair.is_array() || pair.size() != 2) return Fail(StateError(what, "a [node, island] pair, got " + pair.dump()));
    auto id = StateInteger(pair[0], what + ".node", std::numeric_limits<NodeId>::min(), kMaxCount);
    if (!id) return Fail(id.error());
    auto island = StateInteger(pair[1], what + ".island", 0, count_ - 1);
    if (!island) return Fail(island.error());
    return std::pair<NodeId, int>(*id, static_cast<int>(*island));
  }

  // A node's islands: its home, then those it migrated to (each once, should
  // a restored state list one twice).
  void IslandsOf(NodeId id, std::vector<int>& islands) const {
    islands.push_back(home_.at(id));
    const auto guest = guests_.find(id);
    if (guest == guests_.end()) return;
    for (int island : guest->second) {
      if (std::find(islands.begin(), islands.end(), island) == islands.end()) islands.push_back(island);
    }
  }

  // Gives each node added since the last call its home island, ancestors
  // first.
  void Assign(const SearchGraph& graph) {
    if (assigned_ == 0) home_.reserve(graph.NodeCount() + graph.NodeCount() / 8);
    for (; assigned_ < graph.NodeCount(); ++assigned_) {
      const NodeId id = graph.NodeAt(assigned_).id;
      if (home_.contains(id)) continue;
      // A parent comes before its child in insertion order, so it is
      // usually homed already: one step, not the whole lineage.
      if (const auto parent = graph.FirstParent(id); parent && home_.contains(*parent)) {
        Home(id, TakeWaiting(*parent));
        continue;
      }
      const std::vector<NodeId> lineage = graph.Lineage(id);
      for (std::size_t i = 0; i < lineage.size(); ++i) {
        if (home_.contains(lineage[i])) continue;
        Home(lineage[i], i == 0 ? static_cast<int>(roots_++ % count_) : TakeWaiting(lineage[i - 1]));
      }
    }
  }

  void Home(NodeId id, int island) {
    home_[id] = island;
    Journal({"home", id, island});
  }

  // `id` joins `island` as a guest: false when it had already.
  bool Visit(NodeId id, int island) {
    std::vector<int>& visits = guests_[id];
    if (std::find(visits.begin(), visits.end(), island) != visits.end()) return false;
    visits.push_back(island);
    Journal({"guest", id, island});
    return true;
  }

  // The island of the oldest unanswered selection of `parent`, else its home.
  int TakeWaiting(NodeId parent) {
    const auto it = waiting_.find(parent);
    if (it == waiting_.end()) return home_.at(parent);
    const int island = it->second.front();
    it->second.pop_front();
    if (it->second.empty()) waiting_.erase(it);
    return island;
  }

  // The fastest expandable member of each island joins the next island.
  void Migrate(const SearchGraph& graph) {
    const std::function<bool(NodeId)> exhausted = [this](NodeId id) { return IsExhausted(id); };
    std::vector<std::optional<NodeId>> best(static_cast<std::size_t>(count_));
    for (int island = 0; island < count_; ++island) {
      best[static_cast<std::size_t>(island)] = index_.Fastest(graph, exhausted, island);
    }
    for (int island = 0; island < count_; ++island) {
      if (!best[static_cast<std::size_t>(island)]) continue;
      const NodeId id = *best[static_cast<std::size_t>(island)];
      const int target = (island + 1) % count_;
      if (home_.at(id) == target) continue;
      if (Visit(id, target)) index_.Join(id, target);
    }
  }

  int count_;
  int interval_;
  // Each island's members (home and guests) scored as graph-ucb scores the
  // graph; derived from the graph and home_/guests_ (not saved).
  UcbIndex index_;
  // Journaled (Strategy's journal): saved whole only by SaveState(kAll).
  std::unordered_map<NodeId, int> home_;
  std::unordered_map<NodeId, std::vector<int>> guests_;     // islands a node migrated to
  std::unordered_map<NodeId, std::deque<int>> waiting_;     // per parent: islands of unanswered selections
  std::int64_t next_ = 0;        // the island whose turn is next
  std::int64_t selections_ = 0;  // selections made
  std::int64_t roots_ = 0;       // roots dealt
  std::size_t assigned_ = 0;     // nodes homed, a prefix of the insertion order (a cache: not saved)
};

}  // namespace

std::unique_ptr<Strategy> MakeIslands(const StrategyConfig& config) { return std::make_unique<Islands>(config); }

}  // namespace kestrel::strategies
