#pragma once
// Strategy: decides which node of the graph to expand next (ARCHITECTURE.md;
// formulas and parameters in docs/STRATEGIES.md). Only measured nodes are
// expanded. A node whose mutators all declined is exhausted for the rest of
// the run. Chosen by `strategy.name` in the run config:
//
//   graph-ucb  (default) score(n) = a * s(n)/s* + (1 - a) * v(n)/s*
//                                   + c * sqrt(ln(1 + E) / (1 + e(n)))
//              s(n) the node's speedup, v(n) the best speedup in its subtree
//              (itself and its descendants along derive/fix edges), s* the
//              best speedup of the expandable nodes, E their total
//              expansions, e(n) the node's expansions; c = `exploration`,
//              1 - a = `subtree_weight`. Revisits productive lineages (a
//              parent whose children beat it keeps a high score) and still
//              explores the rarely expanded.
//   beam       generations: the top `beam_width` (W) expandable nodes by
//              speedup, fixed when the generation starts, are each expanded
//              `keep_factor` (k) times, in turns, best first; then the beam
//              is recomputed from the graph as it is then.
//   greedy     the fastest node not yet exhausted.
//   islands    `islands` (N) populations: roots are dealt to islands in
//              turn, a child joins the island its parent was selected for.
//              Select serves the islands in turn and picks by graph-ucb
//              within the island; every `migration_interval` selections the
//              best node of each island also joins the next island.
//   random     a uniformly random measured node (the baseline).
//   model      graph-ucb's choice of parent; the knob mutator's proposals
//              come from a KnobAdvisor in mode kModel: the unseen
//              configuration an XGBoost cost model, fitted to every
//              measured one, predicts fastest (search/knobs/knob_advisor.h).
//   portfolio  the same, with an AUC bandit choosing the knob move
//              (model, one-step, multi-knob, cross, restart) by which
//              produced the latest improvements.
//
// A strategy serves one graph: it may cache what it derived from it (subtree
// bests, island membership) between calls. SaveState returns everything a
// fresh strategy needs to continue exactly (RestoreState), so that with the
// same graph and the same random stream it makes the same choices.
//
// The parts of the state that grow with the graph (the exhausted set, each
// node's island) are also kept as a journal: one entry per change, which the
// engine stores beside a state saved without them (SaveState(kWithoutJournal)),
// so that saving the state with every result costs what changed, not the
// graph's size. A resumed strategy gets RestoreState(state), then Replay of
// every stored journal, oldest first.
//
// Thread-safety: none; the engine calls it under the graph's mutex.

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/error.h"
#include "graph/search_graph.h"
#include "search/run_config.h"

namespace kestrel {

class KnobAdvisor;

class Strategy {
 public:
  virtual ~Strategy();
  // The node to expand next, or nullopt when no node can be expanded now.
  virtual std::optional<NodeId> Select(const SearchGraph& graph, std::mt19937_64& rng) = 0;
  // The knob search that this strategy steers (model, portfolio), which the
  // engine tells every result and the knob mutator asks for proposals; null
  // for the others.
  virtual std::shared_ptr<KnobAdvisor> Advisor() const { return nullptr; }
  // Journals ["exhausted", id] when the node was not exhausted.
  void MarkExhausted(NodeId id);
  // The node may be chosen again (a person lifted the ban that exhausted
  // it); journals ["revived", id] when it was exhausted.
  void Revive(NodeId id);
  bool IsExhausted(NodeId id) const { return exhausted_.count(id) > 0; }

  enum class StateParts { kAll, kWithoutJournal };
  // The state a resumed run restores: {"exhausted": [ids]} plus what the
  // strategy keeps (beam generation, island membership, counters);
  // kWithoutJournal leaves out the journaled parts ("exhausted", islands'
  // "home").
  nlohmann::json SaveState(StateParts parts = StateParts::kAll) const;
  // Replaces this strategy's state with a SaveState document. A journaled
  // part that is present replaces what the strategy had and is journaled
  // anew (a state saved whole, as before the journal, goes on from the next
  // save as a journal). A malformed document, or one saved by another kind
  // of strategy (an unknown field), is InvalidArgument and leaves the
  // strategy unchanged.
  virtual Status RestoreState(const nlohmann::json& state);

  // The journal's entries not yet stored, oldest first (a JSON array; empty
  // when nothing changed), and the engine's word that they are stored.
  const nlohmann::json& PendingJournal() const { return *pending_; }
  void JournalStored();
  // The journaled parts as they are now, as entries (every exhausted node,
  // and islands' homes and guests): replayed on a fresh strategy they give
  // the same parts, so a journal's rows can be replaced by this one.
  nlohmann::json JournalSnapshot() const;
  // Applies stored entries in order, after RestoreState and before the next
  // Select. A malformed entry, or one of another strategy's kind, is
  // InvalidArgument and changes nothing.
  Status Replay(const nlohmann::json& entries);

 protected:
  Strategy();
  // Adds the strategy's own fields to a state SaveState made.
  virtual void SaveOwn(nlohmann::json& /*state*/, StateParts /*parts*/) const {}
  // Appends the entries of the strategy's own journaled parts.
  virtual void SnapshotOwn(nlohmann::json& /*entries*/) const {}
  // Told of each node MarkExhausted or Replay adds (a strategy that indexes
  // the expandable nodes drops it). The default does nothing.
  virtual void Exhausted(NodeId /*id*/) {}
  // Told that an exhausted node became expandable again, or that a restored
  // state replaced the exhausted set: a strategy that indexes the
  // expandable nodes rebuilds its index. The default does nothing.
  virtual void Reindex() {}
  // Appends an entry of this strategy's own kind to the journal.
  void Journal(nlohmann::json entry);
  // An entry whose kind the base does not know: checks it (apply false) or
  // applies a checked one (apply true). The default refuses every entry.
  virtual Status ReplayEntry(const nlohmann::json& entry, bool apply);
  // Measured nodes that are not exhausted, in insertion order.
  std::vector<NodeId> Expandable(const SearchGraph& graph) const;
  // Checks `state` (an object whose fields are "exhausted" and `own_fields`)
  // and restores the exhausted set; subclasses call it last, after reading
  // their own fields, so that a refusal changes nothing.
  // Without an "exhausted" field the set is emptied (Replay refills it).
  Status RestoreExhausted(const nlohmann::json& state, const std::vector<std::string>& own_fields);

 private:
  std::unordered_set<NodeId> exhausted_;
  std::unique_ptr<nlohmann::json> pending_;  // the journal's entries not yet stored (an array)
};

// The names MakeStrategy knows, as the docs list them.
const std::vector<std::string>& StrategyNames();

// InvalidArgument for an unknown name (the message lists the known ones).
Result<std::unique_ptr<Strategy>> MakeStrategy(const StrategyConfig& config);

}  // namespace kestrel
