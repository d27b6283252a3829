#pragma once
// Mutator: proposes a variant of a parent node (ARCHITECTURE.md): knob moves
// (knob_mutator.cc), LLM rewrites and fixes (llm_mutator.h). A mutator may
// decline (nullopt): for example when every knob neighbour of the parent is
// already in the graph.
//
// The engine calls Expand (and Fix for a failed node the mutator made); their
// defaults wrap Propose, so a simple mutator implements Propose only.
//
// Thread-safety: Propose, Expand and Fix may be called concurrently for
// different parents; `is_known` is safe to call from any thread.

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include <vector>

#include "core/candidate.h"
#include "core/measurement.h"
#include "graph/search_graph.h"
#include "store/human_records.h"
#include "store/records.h"

namespace kestrel {

class KnobAdvisor;

struct Proposal {
  Candidate candidate;
  std::string mutation;            // "knob UNROLL 2->4"
  EdgeKind edge_kind = EdgeKind::kDerive;  // derive | fix
};

// One step of a lineage, seed first: how a node was made and what it gave.
struct LineageEntry {
  std::string mutation;  // "seed:seed.cpp", "knob UNROLL 2->4", "llm:model:vectorize"
  std::string result;    // "1.80x", "build_failed (reason)", "not measured"
};

// A strong measured node whose source differs from the parent's: the other
// half of a combine.
struct CombinePartner {
  NodeId id = 0;
  Candidate candidate;
  std::string measurement;  // one line
};

// A strong node of the graph shown to the LLM: its rank among the graph's
// measured nodes (1: the best), its speedup over the reference, how it was
// made and its source.
struct Inspiration {
  int rank = 0;
  double speedup = 0.0;
  std::string mutation;
  std::string source;
};

// What the person running the search said (human_actions), as of the
// action the selection saw: standing instructions of the run (`kestrel
// steer`), notes on the parent and its lineage (`kestrel note`), and the
// parent's proposals a reviewer rejected with the reason.
struct HumanGuidance {
  std::vector<std::string> instructions{};
  std::vector<std::string> notes{};       // "node 4 (llm:m:unroll): keep the tail loop"
  std::vector<std::string> rejections{};  // the reasons, oldest first
  bool empty() const { return instructions.empty() && notes.empty() && rejections.empty(); }
};

struct ParentView {
  NodeId id = 0;
  Candidate candidate;  // with its source text
  // Filled only for mutators whose WantsContext() is true:
  std::string measurement{};                   // the parent's latest result, one line
  std::vector<LineageEntry> lineage{};         // seed first, the parent last
  std::vector<Inspiration> inspirations{};     // other strong nodes, best first
  std::vector<std::string> recent_failures{};  // short reasons of recent failures
  std::vector<CombinePartner> partners{};       // strongest first
  // The parent's profile digest on this host (core/profile.h,
  // ProfileDigest); "" when it has none (the evaluator cannot profile).
  std::string profile_digest{};
  // The parent's position on the roofline when it has a profile: the
  // fraction reached and the bound ("compute" / "memory"; "" unknown).
  double roofline_fraction = 0.0;
  std::string bound{};
  // The task's expert baseline's speedup over the reference as measured with
  // the parent; 0 when the task has none.
  double baseline_speedup = 0.0;
  // The reply of the parent's stored analysis call (an earlier session paid
  // for it: a resumed run reuses it); nullopt when none was stored.
  std::optional<std::string> stored_analysis{};
  // How the parent's existing children were made (their mutations), so that
  // siblings follow different recommendations.
  std::vector<std::string> child_mutations{};
  // The strategy's knob search (model, portfolio): the knob mutator asks it
  // for the variant instead of making a one-step move. Null otherwise.
  std::shared_ptr<KnobAdvisor> advisor{};
  // For LLM-like mutators: what people said (every prompt carries it).
  HumanGuidance human{};
};

// What the engine records for one mutator call: the proposal (or a decline),
// and every LLM call made, which the record stage stores in the same step as
// the node (node_id and run_id are filled in there).
struct MutationResult {
  std::optional<Proposal> proposal;
  std::vector<LlmCallRecord> calls;
  std::string note;         // why it declined, when worth a run event
  bool exhausted = true;    // declined: nothing more to try for this parent
  std::string stop_reason;  // non-empty: this mutator stopped for the rest of the run (why)
  bool budget_spent = false;  // declined because the run's usd budget is spent: the run stops
  // A reviewer's verdicts (review_accept / review_edit on the node made,
  // node_id 0 until it is known; review_reject on the parent), stored with the change.
  std::vector<HumanActionRecord> reviews;
  std::string plan;  // a plan call's plan, as the reviewer left it
};

// What became of a node a mutator made: its outcome and speedup, and the
// parent's speedup (nullopt when either was not measured).
struct ChildResult {
  NodeId node = 0;
  NodeId parent = 0;
  std::string mutation;
  Outcome outcome = Outcome::kMeasured;
  std::optional<double> speedup;
  std::optional<double> parent_speedup;
};

// True when a candidate identity is already a node of the graph.
using IsKnown = std::function<bool(const std::string& identity)>;

class Mutator {
 public:
  virtual ~Mutator() = default;
  virtual std::string_view Kind() const = 0;
  virtual std::optional<Proposal> Propose(const ParentView& parent, std::mt19937_64& rng,
                                          const IsKnown& is_known) = 0;
  // Whether Expand wants ParentView's context fields (they cost a graph walk).
  virtual bool WantsContext() const { return false; }
  // A variant of `parent`; the default wraps Propose.
  virtual MutationResult Expand(const ParentView& parent, std::mt19937_64& rng, const IsKnown& is_known) {
    MutationResult result;
    result.proposal = Propose(parent, rng, is_known);
    return result;
  }
  // The engine is stopping: calls in flight end now (they decline). Thread-safe;
  // later calls decline at once. The default does nothing.
  virtual void Cancel() {}
  // Whether Fix can repair failed nodes this mutator made.
  virtual bool CanFix() const { return false; }
  // A repair of `failed`, which ended with `measurement`; proposals use the
  // "fix" edge kind. The default declines.
  virtual MutationResult Fix(const ParentView& failed, const Measurement& measurement, const IsKnown& is_known) {
    (void)failed, (void)measurement, (void)is_known;
    return {};
  }
  // Parents with candidates this mutator made already and holds for their
  // next expansions (an LLM reply's other versions), and how many each: the
  // engine expands them before the strategy's choice, so that what was paid
  // for is built. Thread-safe. Default: none.
  virtual std::vector<std::pair<NodeId, std::size_t>> Waiting() const { return {}; }
  // The result of a node this mutator made. Called by the engine's record
  // stage (serially), before the run's state is saved with it. Default: ignored.
  virtual void OnResult(const ChildResult& result) { (void)result; }
  // What the mutator learned, saved with the run's state (JSON text; "":
  // nothing) so that a resumed run continues from it. Thread-safe.
  virtual std::string SaveState() const { return {}; }
  // Restores SaveState's text; a malformed one is refused (Corruption) and
  // changes nothing.
  virtual Status RestoreState(const std::string& saved) {
    (void)saved;
    return {};
  }
};

// Moves one knob of the parent to another declared value, preferring the
// nearest values, and never to a candidate the graph already holds; declines
// when no such move exists (or the source declares no knobs). With the
// parent's advisor, proposes what the advisor advises instead.
std::unique_ptr<Mutator> MakeKnobMutator();

}  // namespace kestrel
