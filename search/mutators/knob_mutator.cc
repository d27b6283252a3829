#include <algorithm>
#include <cstdlib>
#include <vector>

#include "search/knobs/knob_advisor.h"
#include "search/mutators/mutator.h"

namespace kestrel {
namespace {

struct Move {
  std::string knob;
  std::string from;
  std::string to;
  int distance = 0;  // |index(to) - index(from)| in the declared order
  double key = 0;    // random tie-breaker, smaller first
};

class KnobMutator final : public Mutator {
 public:
  std::string_view Kind() const override { return "knob"; }

  std::optional<Proposal> Propose(const ParentView& parent, std::mt19937_64& rng,
                                  const IsKnown& is_known) override {
    if (parent.advisor) return Advised(parent, rng, is_known);
    auto knobs = ParseKnobs(parent.candidate.source);
    if (!knobs || knobs->empty()) return std::nullopt;
    const KnobValues current = parent.candidate.knobs;
    std::vector<Move> moves;
    std::uniform_real_distribution<double> jitter(0.0, 1.0);
    for (const auto& knob : *knobs) {
      const auto it = current.find(knob.name);
      const std::string from = it == current.end() ? knob.values.front() : it->second;
      const auto from_index = std::find(knob.values.begin(), knob.values.end(), from) - knob.values.begin();
      for (std::size_t i = 0; i < knob.values.size(); ++i) {
        if (knob.values[i] == from) continue;
        const int distance = static_cast<int>(std::abs(static_cast<long>(i) - static_cast<long>(from_index)));
        moves.push_back({knob.name, from, knob.values[i], distance, jitter(rng)});
      }
    }
    // Nearest moves first, random among equals: a local search that still
    // reaches every value of every knob.
    std::sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
      return a.distance != b.distance ? a.distance < b.distance : a.key < b.key;
    });
    for (const auto& move : moves) {
      Proposal proposal;
      proposal.candidate = parent.candidate;
      // Knobs the parent lacked (a source edited by hand) get their defaults.
      for (const auto& knob : *knobs) proposal.candidate.knobs.try_emplace(knob.name, knob.values.front());
      proposal.candidate.knobs[move.knob] = move.to;
      if (is_known(proposal.candidate.Identity())) continue;
      proposal.mutation = "knob " + move.knob + " " + move.from + "->" + move.to;
      return proposal;
    }
    return std::nullopt;
  }

 private:
  static std::optional<Proposal> Advised(const ParentView& parent, std::mt19937_64& rng, const IsKnown& is_known) {
    Candidate candidate = parent.candidate;
    const auto known = [&](const KnobValues& values) {
      candidate.knobs = values;
      return is_known(candidate.Identity());
    };
    auto advice = parent.advisor->Propose(parent.candidate.source, parent.candidate.knobs, rng, known);
    if (!advice) return std::nullopt;
    Proposal proposal;
    proposal.candidate = parent.candidate;
    proposal.candidate.knobs = std::move(advice->knobs);
    proposal.mutation = std::move(advice->mutation);
    return proposal;
  }
};

}  // namespace

std::unique_ptr<Mutator> MakeKnobMutator() { return std::make_unique<KnobMutator>(); }

}  // namespace kestrel
