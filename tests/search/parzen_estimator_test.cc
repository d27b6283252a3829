// ParzenEstimator (search/knobs/parzen_estimator.h): the knob values the
// fastest configurations share, and draws from them.

#include <doctest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "search/knobs/knob_space.h"
#include "search/knobs/parzen_estimator.h"

using namespace kestrel;

namespace {

// Three knobs of 4, 4 and 2 values; a key from value positions.
const std::vector<std::size_t> kValues = {4, 4, 2};

std::string Key(std::size_t a, std::size_t b, std::size_t c) {
  std::string key(6, '\0');
  KnobSpace::SetIndex(key, 0, a);
  KnobSpace::SetIndex(key, 1, b);
  KnobSpace::SetIndex(key, 2, c);
  return key;
}

// How often each value of `knob` was drawn.
std::map<std::size_t, int> Shares(const std::vector<ParzenEstimator::Draw>& draws, std::size_t knob) {
  std::map<std::size_t, int> shares;
  for (const auto& draw : draws) ++shares[KnobSpace::IndexAt(draw.key, knob)];
  return shares;
}

// Every configuration once; fast (10x) where A is 2 and B is 1, else by A.
void AddSpace(ParzenEstimator& estimator, bool reversed) {
  std::vector<std::pair<std::string, float>> all;
  for (std::size_t a = 0; a < 4; ++a) {
    for (std::size_t b = 0; b < 4; ++b) {
      for (std::size_t c = 0; c < 2; ++c) all.emplace_back(Key(a, b, c), a == 2 && b == 1 ? 10.0f : 1.0f + 0.1f * a);
    }
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::size_t at = reversed ? all.size() - 1 - i : i;
    estimator.Add(static_cast<NodeId>(at + 1), all[at].first, all[at].second);
  }
}

}  // namespace

TEST_CASE("with nothing observed, draws are uniform and every score is even") {
  ParzenEstimator estimator(kValues);
  std::mt19937_64 rng(1);
  const auto draws = estimator.Sample(4000, rng);
  REQUIRE(draws.size() == 4000);
  for (const auto& draw : draws) CHECK(draw.score == doctest::Approx(0.0));
  const auto a = Shares(draws, 0);
  REQUIRE(a.size() == 4);
  for (const auto& [value, count] : a) CHECK(count == doctest::Approx(1000).epsilon(0.1));
}

TEST_CASE("draws favour the values the fastest configurations share, and score them above the rest") {
  ParzenEstimator estimator(kValues);
  AddSpace(estimator, false);
  REQUIRE(estimator.Observations() == 32);
  // The good are the fastest 7 of 32 (one in five, rounded up): both (2, 1, *)
  // and five of A = 3. So A = 2 and 3 are likely, B = 1 too.
  std::mt19937_64 rng(7);
  const auto draws = estimator.Sample(4000, rng);
  const auto a = Shares(draws, 0);
  const auto b = Shares(draws, 1);
  CHECK(a.at(3) > 2 * a.at(0));
  CHECK(a.at(2) > a.at(0));
  CHECK(b.at(1) > b.at(0));
  CHECK(estimator.Score(Key(2, 1, 0)) > estimator.Score(Key(0, 0, 0)));
  CHECK(estimator.Score(Key(3, 1, 0)) > estimator.Score(Key(1, 2, 0)));
  // A draw's score is Score of its key.
  for (std::size_t i = 0; i < 20; ++i) CHECK(draws[i].score == doctest::Approx(estimator.Score(draws[i].key)));
}

TEST_CASE("the same observations in another order give the same draws (exact resume)") {
  ParzenEstimator forward(kValues), backward(kValues);
  AddSpace(forward, false);
  AddSpace(backward, true);  // ties among the good broken by node id, not arrival
  std::mt19937_64 rng1(3), rng2(3);
  const auto a = forward.Sample(200, rng1);
  const auto b = backward.Sample(200, rng2);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].key == b[i].key);
    CHECK(a[i].score == doctest::Approx(b[i].score));
  }
}

TEST_CASE("a failed configuration is never good, and the good are at most kMostGood") {
  ParzenEstimator estimator(kValues);
  // Failures everywhere at A = 0; one measured configuration at A = 1.
  for (NodeId n = 1; n <= 20; ++n) estimator.Add(n, Key(0, 0, 0), 0.0f);
  estimator.Add(21, Key(1, 0, 0), 0.5f);
  CHECK(estimator.Score(Key(1, 0, 0)) > estimator.Score(Key(0, 0, 0)));

  // 1000 observations: the 25 fastest at A = 3, the next 175 at A = 1, the
  // rest at A = 0. One in five would be 200 good; the cap keeps 25, all A = 3.
  ParzenEstimator capped(kValues);
  NodeId node = 1;
  for (int i = 0; i < 25; ++i) capped.Add(node++, Key(3, 0, 0), 5.0f);
  for (int i = 0; i < 175; ++i) capped.Add(node++, Key(1, 0, 0), 4.0f);
  for (int i = 0; i < 800; ++i) capped.Add(node++, Key(0, 0, 0), 1.0f);
  std::mt19937_64 rng(5);
  auto a = Shares(capped.Sample(2000, rng), 0);
  // l(A = 3) = (25 + 1) / (25 + 4): 90% of draws.
  CHECK(a.at(3) > 1700);
  CHECK(a[1] < 150);
}

TEST_CASE("a key of the wrong length is ignored") {
  ParzenEstimator estimator(kValues);
  estimator.Add(1, "xy", 3.0f);
  CHECK(estimator.Observations() == 0);
}
