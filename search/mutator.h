#pragma once
// Mutator: proposes a variant of a parent node (ARCHITECTURE.md). Knob moves
// today; LLM rewrites and fixes later. A mutator may decline (nullopt): for
// example when every knob neighbour of the parent is already in the graph.
//
// Thread-safety: Propose may be called concurrently for different parents;
// `is_known` is safe to call from any thread.

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "core/candidate.h"
#include "graph/search_graph.h"

namespace kestrel {

struct Proposal {
  Candidate candidate;
  std::string mutation;            // "knob UNROLL 2->4"
  std::string edge_kind = "derive";  // derive | fix
};

struct ParentView {
  NodeId id = 0;
  Candidate candidate;  // with its source text
};

// True when a candidate identity is already a node of the graph.
using IsKnown = std::function<bool(const std::string& identity)>;

class Mutator {
 public:
  virtual ~Mutator() = default;
  virtual std::string_view Kind() const = 0;
  virtual std::optional<Proposal> Propose(const ParentView& parent, std::mt19937_64& rng,
                                          const IsKnown& is_known) = 0;
};

// Moves one knob of the parent to another declared value, preferring the
// nearest values, and never to a candidate the graph already holds; declines
// when no such move exists (or the source declares no knobs).
std::unique_ptr<Mutator> MakeKnobMutator();

}  // namespace kestrel
