// greedy and random: the two simplest strategies. Neither lists the
// expandable nodes on a selection: greedy walks the graph's ranking from the
// best, random keeps an ExpandableSet, so both cost the same at 1e3 and 1e6
// nodes.

#include "search/strategies/expandable_set.h"
#include "search/strategies/strategies.h"

namespace kestrel::strategies {
namespace {

// The fastest expandable node (ties: lower id).
class Greedy final : public Strategy {
 public:
  std::optional<NodeId> Select(const SearchGraph& graph, std::mt19937_64& /*rng*/) override {
    std::optional<NodeId> chosen;
    graph.VisitRanked([&](NodeId id) {
      if (IsExhausted(id)) return true;
      chosen = id;
      return false;
    });
    return chosen;
  }
};

// A uniformly drawn expandable node.
class Random final : public Strategy {
 public:
  std::optional<NodeId> Select(const SearchGraph& graph, std::mt19937_64& rng) override {
    expandable_.Catch(graph, [this](NodeId id) { return IsExhausted(id); });
    if (expandable_.size() == 0) return std::nullopt;
    std::uniform_int_distribution<std::size_t> pick(0, expandable_.size() - 1);
    return expandable_.At(graph, pick(rng));
  }


 protected:
  void Exhausted(NodeId id) override { expandable_.Drop(id); }
  void Reindex() override { expandable_.Reset(); }

 private:
  ExpandableSet expandable_;
};

}  // namespace

std::unique_ptr<Strategy> MakeGreedy() { return std::make_unique<Greedy>(); }
std::unique_ptr<Strategy> MakeRandom() { return std::make_unique<Random>(); }

}  // namespace kestrel::strategies
