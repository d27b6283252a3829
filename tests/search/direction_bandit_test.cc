// DirectionBandit (search/mutators/direction_bandit.h): a direction that
// pays is chosen more, the choice is reproducible from the seed, and its
// state round-trips.

#include "search/mutators/direction_bandit.h"

#include <doctest.h>

#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "search/mutators/prompt.h"

namespace kestrel {
namespace {

// `rounds` choices from a seeded generator, each credited by `reward`;
// returns how often each arm was chosen.
std::map<std::string, int> Play(DirectionBandit& bandit, std::uint64_t seed, int rounds,
                                const std::function<double(const std::string&)>& reward) {
  std::mt19937_64 rng(seed);
  std::map<std::string, int> chosen;
  for (int round = 0; round < rounds; ++round) {
    const std::string& arm = bandit.arms()[bandit.Choose(rng)];
    ++chosen[arm];
    bandit.Credit(arm, reward(arm));
  }
  return chosen;
}

TEST_CASE("a direction that always pays is chosen more than the others, over a seeded run") {
  for (const char* paying : {"vectorize", "tile for cache", "use threads where allowed"}) {
    CAPTURE(paying);
    DirectionBandit bandit(MutationDirections());
    // The paying direction's children are 30% faster than their parents;
    // the others' fail to build half the time and gain nothing otherwise.
    int draw = 0;
    const auto chosen = Play(bandit, 7, 200, [&](const std::string& arm) {
      if (arm == paying) return DirectionReward(Outcome::kMeasured, 1.3, 1.0);
      return ++draw % 2 ? DirectionReward(Outcome::kBuildFailed, std::nullopt, 1.0)
                        : DirectionReward(Outcome::kMeasured, 1.0, 1.0);
    });
    for (const std::string& arm : MutationDirections()) {
      CAPTURE(arm);
      CHECK(chosen.at(arm) >= 1);  // each is tried
      if (arm != paying) CHECK(chosen.at(paying) > 4 * chosen.at(arm));
    }
    CHECK(chosen.at(paying) > 100);
  }
}

TEST_CASE("without rewards that differ, the choice spreads over the directions") {
  DirectionBandit bandit(MutationDirections());
  const auto chosen = Play(bandit, 3, 140, [](const std::string&) { return 0.0; });
  for (const std::string& arm : MutationDirections()) CHECK(chosen.at(arm) >= 10);
}

TEST_CASE("the same seed and the same rewards give the same choices; untried arms are drawn from the seed") {
  const auto sequence = [](std::uint64_t seed) {
    DirectionBandit bandit(MutationDirections());
    std::mt19937_64 rng(seed);
    std::vector<std::size_t> arms;
    for (int round = 0; round < 30; ++round) {
      arms.push_back(bandit.Choose(rng));
      bandit.Credit(bandit.arms()[arms.back()], arms.back() == 2 ? 0.5 : -0.2);
    }
    return arms;
  };
  CHECK(sequence(11) == sequence(11));
  CHECK(sequence(11) != sequence(12));
}

TEST_CASE("its state round-trips through Save and Restore; a malformed one is refused and changes nothing") {
  DirectionBandit bandit({"a", "b", "c"});
  bandit.Credit("a", 0.5);
  bandit.Credit("a", 2.0);  // clamped to 1
  bandit.Credit("b", -1.0);
  bandit.Credit("z", 1.0);  // unknown: ignored
  DirectionBandit restored({"a", "b", "c"});
  REQUIRE(restored.Restore(bandit.Save()));
  CHECK(restored.Tries(0) == 2);
  CHECK(restored.Mean(0) == doctest::Approx(0.75));
  CHECK(restored.Tries(1) == 1);
  CHECK(restored.Tries(2) == 0);
  CHECK(restored.Save() == bandit.Save());
  for (const char* bad : {R"([1, 2])", R"({"a": [1]})", R"({"a": ["x", 1]})", R"({"a": [-1, 0]})"}) {
    CAPTURE(bad);
    auto refused = restored.Restore(nlohmann::json::parse(bad));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code() == ErrorCode::kCorruption);
    CHECK(restored.Tries(0) == 2);
  }
  // A direction no longer in the list is dropped.
  DirectionBandit fewer({"b"});
  REQUIRE(fewer.Restore(bandit.Save()));
  CHECK(fewer.Tries(0) == 1);
}

TEST_CASE("a child's reward is its gain over its parent, clamped; a failure is -1") {
  CHECK(DirectionReward(Outcome::kMeasured, 1.5, 1.0) == doctest::Approx(0.5));
  CHECK(DirectionReward(Outcome::kMeasured, 0.9, 1.8) == doctest::Approx(-0.5));
  CHECK(DirectionReward(Outcome::kMeasured, 9.0, 1.0) == doctest::Approx(1.0));
  CHECK(DirectionReward(Outcome::kWrong, std::nullopt, 1.0) == -1.0);
  CHECK(DirectionReward(Outcome::kBuildFailed, std::nullopt, std::nullopt) == -1.0);
  CHECK(DirectionReward(Outcome::kMeasured, 1.2, std::nullopt) == 0.0);
}

}  // namespace
}  // namespace kestrel
