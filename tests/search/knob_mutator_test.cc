// The knob mutator (search/mutators/mutator.h): one knob moved to another declared
// value, nearest first, never to a known candidate; declines when no move is left.

#include <doctest.h>

#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/candidate.h"
#include "search/mutators/mutator.h"

using namespace kestrel;

namespace {

constexpr char kSource[] =
    "// kestrel:knob A 1 2 3 4\n"
    "// kestrel:knob B 1 2 3\n"
    "void f() {}\n";

constexpr char kSmallSource[] =
    "// kestrel:knob TILE 8 16 32\n"
    "// kestrel:knob VEC 0 1\n"
    "void g() {}\n";

Candidate MakeParent(const std::string& source, KnobValues knobs) {
  return Candidate{source, std::move(knobs), "g++ 12", {"-O2"}};
}

// Index of `value` in the declared values of `knob` of kSource.
int IndexOf(const std::string& knob, const std::string& value) {
  const std::vector<std::string> a{"1", "2", "3", "4"}, b{"1", "2", "3"};
  const auto& values = knob == "A" ? a : b;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] == value) return static_cast<int>(i);
  }
  FAIL("undeclared value " << knob << "=" << value);
  return -1;
}

// The knobs in which `a` and `b` differ.
std::vector<std::string> Differing(const KnobValues& a, const KnobValues& b) {
  std::vector<std::string> names;
  for (const auto& [name, value] : a) {
    const auto it = b.find(name);
    if (it == b.end() || it->second != value) names.push_back(name);
  }
  for (const auto& [name, value] : b) {
    if (!a.count(name)) names.push_back(name);
  }
  return names;
}

struct KnownSet {
  std::set<std::string> identities;
  IsKnown Query() const {
    return [this](const std::string& identity) { return identities.count(identity) > 0; };
  }
};

}  // namespace

TEST_SUITE("knob_mutator") {
  TEST_CASE("its kind is knob") { CHECK(MakeKnobMutator()->Kind() == "knob"); }

  TEST_CASE("each proposal moves exactly one knob to a declared value, nearest first") {
    auto mutator = MakeKnobMutator();
    const ParentView parent{7, MakeParent(kSource, {{"A", "1"}, {"B", "1"}})};
    KnownSet known;
    known.identities.insert(parent.candidate.Identity());
    std::mt19937_64 rng(42);
    std::vector<int> distances;
    std::set<std::string> moves;
    while (auto proposal = mutator->Propose(parent, rng, known.Query())) {
      const KnobValues& knobs = proposal->candidate.knobs;
      const auto changed = Differing(parent.candidate.knobs, knobs);
      REQUIRE(changed.size() == 1);
      const std::string& knob = changed[0];
      const int distance = std::abs(IndexOf(knob, knobs.at(knob)) - IndexOf(knob, parent.candidate.knobs.at(knob)));
      distances.push_back(distance);
      moves.insert(knob + "=" + knobs.at(knob));
      CHECK(proposal->candidate.source == parent.candidate.source);
      CHECK(proposal->candidate.toolchain == parent.candidate.toolchain);
      CHECK(proposal->candidate.flags == parent.candidate.flags);
      CHECK(proposal->mutation == "knob " + knob + " " + parent.candidate.knobs.at(knob) + "->" + knobs.at(knob));
      CHECK(proposal->edge_kind == EdgeKind::kDerive);
      CHECK(known.identities.insert(proposal->candidate.Identity()).second);
      REQUIRE(distances.size() <= 5);
    }
    // Every single-knob neighbour once: A->2,3,4 and B->2,3, in order of distance.
    CHECK(moves == std::set<std::string>{"A=2", "A=3", "A=4", "B=2", "B=3"});
    CHECK(distances == std::vector<int>{1, 1, 2, 2, 3});
  }

  TEST_CASE("from a middle value both directions are at distance one") {
    auto mutator = MakeKnobMutator();
    const ParentView parent{1, MakeParent(kSource, {{"A", "3"}, {"B", "2"}})};
    KnownSet known;
    known.identities.insert(parent.candidate.Identity());
    std::mt19937_64 rng(5);
    std::set<std::string> first_four;
    for (int i = 0; i < 4; ++i) {
      auto proposal = mutator->Propose(parent, rng, known.Query());
      REQUIRE(proposal.has_value());
      known.identities.insert(proposal->candidate.Identity());
      const auto changed = Differing(parent.candidate.knobs, proposal->candidate.knobs);
      REQUIRE(changed.size() == 1);
      first_four.insert(changed[0] + "=" + proposal->candidate.knobs.at(changed[0]));
    }
    CHECK(first_four == std::set<std::string>{"A=2", "A=4", "B=1", "B=3"});
  }

  TEST_CASE("never proposes a known identity") {
    auto mutator = MakeKnobMutator();
    const ParentView parent{1, MakeParent(kSource, {{"A", "2"}, {"B", "2"}})};
    KnownSet known;
    // The nearest neighbours are known already: only farther moves remain.
    for (const KnobValues& knobs : std::vector<KnobValues>{{{"A", "1"}, {"B", "2"}},
                                                          {{"A", "3"}, {"B", "2"}},
                                                          {{"A", "2"}, {"B", "1"}},
                                                          {{"A", "2"}, {"B", "3"}}}) {
      known.identities.insert(MakeParent(kSource, knobs).Identity());
    }
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      std::mt19937_64 rng(seed);
      auto proposal = mutator->Propose(parent, rng, known.Query());
      REQUIRE(proposal.has_value());
      CHECK(known.identities.count(proposal->candidate.Identity()) == 0);
      CHECK(proposal->candidate.knobs == KnobValues{{"A", "4"}, {"B", "2"}});
    }
  }

  TEST_CASE("declines when every neighbour is known") {
    auto mutator = MakeKnobMutator();
    const ParentView parent{1, MakeParent(kSmallSource, {{"TILE", "16"}, {"VEC", "0"}})};
    KnownSet known;
    for (const char* tile : {"8", "16", "32"}) {
      known.identities.insert(MakeParent(kSmallSource, {{"TILE", tile}, {"VEC", "0"}}).Identity());
    }
    known.identities.insert(MakeParent(kSmallSource, {{"TILE", "16"}, {"VEC", "1"}}).Identity());
    std::mt19937_64 rng(1);
    CHECK_FALSE(mutator->Propose(parent, rng, known.Query()).has_value());
  }

  TEST_CASE("declines for a source without knobs") {
    auto mutator = MakeKnobMutator();
    const ParentView parent{1, MakeParent("void f() {}\n", {})};
    KnownSet known;
    std::mt19937_64 rng(1);
    CHECK_FALSE(mutator->Propose(parent, rng, known.Query()).has_value());
  }

  TEST_CASE("a parent without knob values gets the defaults for the others") {
    auto mutator = MakeKnobMutator();
    const ParentView parent{1, MakeParent(kSmallSource, {})};
    KnownSet known;
    std::mt19937_64 rng(3);
    auto proposal = mutator->Propose(parent, rng, known.Query());
    REQUIRE(proposal.has_value());
    const KnobValues& knobs = proposal->candidate.knobs;
    REQUIRE(knobs.size() == 2);
    // One knob moved one step from its default, the other at its default.
    const bool tile_moved = knobs == KnobValues{{"TILE", "16"}, {"VEC", "0"}};
    const bool vec_moved = knobs == KnobValues{{"TILE", "8"}, {"VEC", "1"}};
    CHECK((tile_moved || vec_moved));
  }

  TEST_CASE("is deterministic for a given rng seed and varies between seeds") {
    auto mutator = MakeKnobMutator();
    const ParentView parent{1, MakeParent(kSource, {{"A", "1"}, {"B", "1"}})};
    KnownSet known;
    std::set<std::string> first_moves;
    for (std::uint64_t seed = 0; seed < 32; ++seed) {
      std::mt19937_64 rng_a(seed), rng_b(seed);
      auto a = mutator->Propose(parent, rng_a, known.Query());
      auto b = mutator->Propose(parent, rng_b, known.Query());
      REQUIRE(a.has_value());
      REQUIRE(b.has_value());
      CHECK(a->candidate.Identity() == b->candidate.Identity());
      CHECK(a->mutation == b->mutation);
      first_moves.insert(a->mutation);
    }
    // Ties at distance one are broken at random: both nearest moves occur.
    CHECK(first_moves == std::set<std::string>{"knob A 1->2", "knob B 1->2"});
  }

  TEST_CASE("repeated proposals over a growing graph reach every configuration of a 3x2 space") {
    auto mutator = MakeKnobMutator();
    std::vector<Candidate> graph{MakeParent(kSmallSource, {{"TILE", "8"}, {"VEC", "0"}})};
    KnownSet known;
    known.identities.insert(graph[0].Identity());
    std::mt19937_64 rng(11);
    bool grew = true;
    int proposals = 0;
    while (grew) {
      grew = false;
      for (std::size_t i = 0; i < graph.size(); ++i) {
        const ParentView parent{static_cast<NodeId>(i + 1), graph[i]};
        if (auto proposal = mutator->Propose(parent, rng, known.Query())) {
          REQUIRE(known.identities.insert(proposal->candidate.Identity()).second);
          graph.push_back(proposal->candidate);
          grew = true;
          ++proposals;
        }
      }
      REQUIRE(proposals <= 5);
    }
    std::set<KnobValues> configurations;
    for (const Candidate& candidate : graph) configurations.insert(candidate.knobs);
    CHECK(graph.size() == 6);
    CHECK(configurations.size() == 6);
    for (const char* tile : {"8", "16", "32"}) {
      for (const char* vec : {"0", "1"}) {
        CHECK(configurations.count(KnobValues{{"TILE", tile}, {"VEC", vec}}) == 1);
      }
    }
  }
}
