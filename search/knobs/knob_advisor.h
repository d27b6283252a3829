#pragma once
// KnobAdvisor: the knob search that learns from measurements (issue 17;
// docs/STRATEGIES.md, "model" and "portfolio"). It keeps, per knob source,
// every configuration measured or failed so far, fits a CostModel to them,
// and proposes the next configuration to build:
//
//   step     one knob one step from the parent (the knob mutator's move)
//   multi    several knobs of the parent, each to any other value
//   cross    each knob from the parent or from one of the best measured
//            configurations (uniform crossover of two parents)
//   restart  the farthest (in knobs that differ) of 16 uniform draws from
//            everything measured: an unexplored region
//   marginals  the unseen draw, of 24, likeliest to be good by the knob
//            values the fastest configurations share (a ParzenEstimator:
//            Hyperopt's and Optuna's TPE); it reads each knob on its own,
//            where the model's trees see few rows of each interaction
//   model    the unseen configuration the cost model predicts fastest
//            (every configuration of a space of up to 20000; else a pool
//            of steps, multi-knob moves and crosses of the best ten, and
//            uniform draws); when nothing unseen is predicted above the
//            best measured, `polish`: the best's coordinate neighbourhood
//            (one knob to any value; else the second or third best's),
//            ranked by the model
//   screen   the steps of the origin (the measured configuration with the
//            lowest node id: the seed), when they are at most 5% of the
//            space: a one-at-a-time screen of each knob's effect
//
// Mode kModel screens first, then proposes `model` (`marginals` one time in
// twenty, a `step` two in ten, and restarts while fewer than 3 configurations
// are measured); kPortfolio lets an AucBandit choose among model, step,
// multi, cross and restart by which produced the latest improvements. A
// technique that finds nothing unseen falls back to the others. The
// technique is the first word of the proposal's mutation ("knob" for a step,
// "polish" for the model's), so lineage shows where a winner came from and a
// resumed run credits the same technique.
//
// Sources without knobs (an LLM's rewrites) go to its SourceRanker, a cost
// model over code features: PredictSources ranks the variants of one LLM
// reply before any is built.
//
// Exact resume: the observations are kept by node id and the model is fitted
// to them in id order (deterministically), so a resumed run that observes
// the stored graph fits the same model; the bandit's window is saved (Save).
//
// Thread-safety: every method takes the advisor's mutex, but PredictSources,
// which takes only the SourceRanker's (thread-safe, and fitting outside the
// lock its Observe takes).

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/candidate.h"
#include "core/error.h"
#include "graph/search_graph.h"
#include "search/knobs/auc_bandit.h"
#include "search/knobs/source_ranker.h"

namespace kestrel {

class KnobAdvisor {
 public:
  enum class Mode { kModel, kPortfolio };
  explicit KnobAdvisor(Mode mode);
  ~KnobAdvisor();

  // A node's final result: `speedup` when measured, nullopt when it failed.
  // `mutation` says how it was made. `live`: the result arrived in this run
  // (the portfolio learns from it); false for the stored graph of a resumed
  // or repeated run. A source without knobs is ignored.
  void Observe(NodeId node, const std::string& source, const KnobValues& knobs, std::optional<double> speedup,
               const std::string& mutation, bool live);
  // The same for a shared source (the engine's): its space is found by the
  // string's address after the first time, not by hashing its text.
  void Observe(NodeId node, const std::shared_ptr<const std::string>& source, const KnobValues& knobs,
               std::optional<double> speedup, const std::string& mutation, bool live);

  // A stored node of a loaded graph (live false), its knobs as the store
  // keeps them (KnobSpace::KeyOfStored): no knob values are built. A
  // source without knobs is ignored here: the engine hands the ranker the
  // latest of those (SourceRanker::kWindow) with Observe.
  void ObserveStored(NodeId node, const std::shared_ptr<const std::string>& source, std::string_view knobs_json,
                     std::optional<double> speedup);

  struct Advice {
    KnobValues knobs;
    std::string mutation;  // "model (3.10x predicted): TILE 64->128"
  };
  // The next configuration of `source`'s knobs to build under a parent with
  // `parent` knobs; never one observed, proposed before, or `is_known`.
  // nullopt when none is left (or the source declares no knobs).
  std::optional<Advice> Propose(const std::string& source, const KnobValues& parent, std::mt19937_64& rng,
                                const std::function<bool(const KnobValues&)>& is_known);

  // Predicted log speedups of sources not built yet (their knobs, if any,
  // at their defaults), in their order; nullopt while the ranker has too few
  // measured sources without knobs.
  std::optional<std::vector<float>> PredictSources(const std::vector<std::string_view>& sources);

  // The technique a mutation names: its first word ("knob" -> "step").
  static std::string TechniqueOf(const std::string& mutation);

  // What a resumed run restores: {"bandit": [...]}.
  nlohmann::json Save() const;
  Status Restore(const nlohmann::json& saved);

 private:
  struct Space;
  Space* SpaceOf(const std::string& source);  // nullptr: no knobs
  Space* SpaceOf(const std::shared_ptr<const std::string>& source);  // by address after the first time
  void ObserveLocked(Space* space, NodeId node, const KnobValues& knobs, std::optional<double> speedup,
                     const std::string& mutation, bool live);
  // The unseen configurations `technique` would propose, best first (several,
  // since the graph may know some of them). Locked.
  std::vector<Advice> Try(const std::string& technique, Space& space, const KnobValues& parent, std::mt19937_64& rng);
  // The unseen coordinate neighbourhood of the best measured configuration
  // (else of the second or third best), ranked by the model. Locked.
  std::vector<Advice> Polish(Space& space, const KnobValues& parent);

  mutable std::mutex mutex_;
  Mode mode_;
  AucBandit bandit_;
  SourceRanker ranker_;  // sources without knobs
  std::unordered_map<std::size_t, std::unique_ptr<Space>> spaces_;  // by std::hash of the source
  // Shared sources seen before (held, so that an address is never reused), and their space.
  std::unordered_map<const std::string*, std::pair<std::shared_ptr<const std::string>, Space*>> by_address_;
};

}  // namespace kestrel
