// The confirmation rule (search/engine/confirmation_rule.h) as pure
// functions: each verdict, the noise at the boundary, a failed
// re-measurement, ties, and the end-of-run choice of the best.

#include <doctest.h>

#include "search/engine/confirmation_rule.h"

using namespace kestrel;

namespace {

constexpr std::int64_t kChallenger = 7;
constexpr std::int64_t kIncumbent = 3;

Measurement Measured(double speedup) {
  Measurement measurement;
  measurement.outcome = Outcome::kMeasured;
  measurement.speedup = speedup;
  return measurement;
}

Measurement Failed(Outcome outcome) {
  Measurement measurement;
  measurement.outcome = outcome;
  return measurement;
}

}  // namespace

TEST_SUITE("confirmation_rule") {
  TEST_CASE("median and noise") {
    CHECK(Median({}) == 0.0);
    CHECK(Median({3.0}) == 3.0);
    CHECK(Median({4.0, 1.0, 2.0}) == 2.0);
    CHECK(Median({4.0, 1.0, 2.0, 3.0}) == doctest::Approx(2.5));
    CHECK(Noise({2.0}) == 0.0);
    CHECK(Noise({1.0, 2.0, 3.0}) == doctest::Approx(1.0));  // (3 - 1) / 2
    CHECK(Noise({0.0, 0.0}) == 0.0);                          // no division by a zero median
  }

  TEST_CASE("a challenger clearly faster through its round is confirmed") {
    const Remeasurements round = {{kChallenger, Measured(3.0)}, {kIncumbent, Measured(2.0)},
                                  {kChallenger, Measured(3.1)}, {kIncumbent, Measured(2.0)}};
    const ConfirmationRecord record = JudgeRound(kChallenger, 3.05, kIncumbent, 2.0, round);
    CHECK(record.verdict == ConfirmationVerdict::kConfirmed);
    CHECK(record.node_id == kChallenger);
    CHECK(record.against_id == kIncumbent);
    CHECK(record.node_median == doctest::Approx(3.05));
    CHECK(record.against_median == doctest::Approx(2.0));
    CHECK(record.noise == doctest::Approx(0.1 / 3.05));
    CHECK(record.samples == 3);
  }

  TEST_CASE("one lucky first timing is within the noise") {
    const Remeasurements round = {{kChallenger, Measured(2.0)}, {kIncumbent, Measured(2.0)},
                                  {kChallenger, Measured(2.1)}, {kIncumbent, Measured(1.9)}};
    const ConfirmationRecord record = JudgeRound(kChallenger, 3.0, kIncumbent, 2.0, round);
    CHECK(record.verdict == ConfirmationVerdict::kWithinNoise);
    CHECK(record.node_median == doctest::Approx(2.1));
  }

  TEST_CASE("the noise at the boundary: the challenger must beat median * (1 + noise) strictly") {
    // Challenger {2.2, 2.2, 2.2}: median 2.2, no noise of its own; incumbent
    // {2.0, 1.6, 2.0}: median 2.0, noise (2.0 - 1.6) / 2.0 = 0.2, bound 2.4.
    const Remeasurements incumbent_round = {{kIncumbent, Measured(1.6)}, {kIncumbent, Measured(2.0)}};
    SUBCASE("below the bound") {
      Remeasurements round = incumbent_round;
      round.push_back({kChallenger, Measured(2.2)});
      round.push_back({kChallenger, Measured(2.2)});
      const ConfirmationRecord record = JudgeRound(kChallenger, 2.2, kIncumbent, 2.0, round);
      CHECK(record.noise == doctest::Approx(0.2));
      CHECK(record.verdict == ConfirmationVerdict::kWithinNoise);
    }
    SUBCASE("exactly at the bound is not enough") {
      // Numbers exact in binary: incumbent {2.0, 1.0, 2.0}: median 2.0, noise
      // 0.5, bound 3.0; challenger {3.0, 3.0, 3.0}.
      const Remeasurements round = {{kIncumbent, Measured(1.0)}, {kIncumbent, Measured(2.0)},
                                    {kChallenger, Measured(3.0)}, {kChallenger, Measured(3.0)}};
      const ConfirmationRecord record = JudgeRound(kChallenger, 3.0, kIncumbent, 2.0, round);
      CHECK(record.noise == 0.5);
      CHECK(record.against_median * (1.0 + record.noise) == 3.0);
      CHECK(record.verdict == ConfirmationVerdict::kWithinNoise);
    }
    SUBCASE("just above the bound") {
      const Remeasurements round = {{kIncumbent, Measured(1.0)}, {kIncumbent, Measured(2.0)},
                                    {kChallenger, Measured(3.0)}, {kChallenger, Measured(3.01)}};
      const ConfirmationRecord record = JudgeRound(kChallenger, 3.01, kIncumbent, 2.0, round);
      CHECK(record.noise == 0.5);  // the incumbent's: larger than the challenger's
      CHECK(record.verdict == ConfirmationVerdict::kConfirmed);
    }
    SUBCASE("the challenger's own noise counts too") {
      const Remeasurements round = {{kIncumbent, Measured(2.0)}, {kIncumbent, Measured(2.0)},
                                    {kChallenger, Measured(1.5)}, {kChallenger, Measured(3.0)}};
      const ConfirmationRecord record = JudgeRound(kChallenger, 3.0, kIncumbent, 2.0, round);
      CHECK(record.noise == doctest::Approx(0.5));  // (3.0 - 1.5) / 3.0
      CHECK(record.verdict == ConfirmationVerdict::kWithinNoise);
    }
  }

  TEST_CASE("a failed re-measurement makes the challenger unstable, however fast") {
    for (const Outcome outcome : {Outcome::kWrong, Outcome::kCrashed, Outcome::kTimedOut, Outcome::kRejected}) {
      CAPTURE(ToString(outcome));
      const Remeasurements round = {{kChallenger, Measured(10.0)}, {kIncumbent, Measured(2.0)},
                                    {kChallenger, Failed(outcome)}, {kIncumbent, Measured(2.0)}};
      const ConfirmationRecord record = JudgeRound(kChallenger, 10.0, kIncumbent, 2.0, round);
      CHECK(record.verdict == ConfirmationVerdict::kUnstable);
      CHECK(record.samples == 2);  // the failure is not a sample
    }
  }

  TEST_CASE("a failure of the incumbent does not make the challenger unstable") {
    const Remeasurements round = {{kChallenger, Measured(3.0)}, {kIncumbent, Failed(Outcome::kCrashed)},
                                  {kChallenger, Measured(3.0)}, {kIncumbent, Measured(2.0)}};
    CHECK(JudgeRound(kChallenger, 3.0, kIncumbent, 2.0, round).verdict == ConfirmationVerdict::kConfirmed);
  }

  TEST_CASE("a tie is not a new best") {
    const Remeasurements round = {{kChallenger, Measured(2.0)}, {kIncumbent, Measured(2.0)}};
    const ConfirmationRecord record = JudgeRound(kChallenger, 2.0, kIncumbent, 2.0, round);
    CHECK(record.noise == 0.0);
    CHECK(record.verdict == ConfirmationVerdict::kWithinNoise);
  }

  TEST_CASE("the end of a run: final, or unstable after a failure; nothing measured: no verdict") {
    const Remeasurements round = {{1, Measured(2.0)}, {2, Measured(3.0)}, {1, Measured(2.2)}, {2, Failed(Outcome::kWrong)}};
    const auto stable = JudgeFinal(1, 2.4, round);
    REQUIRE(stable);
    CHECK(stable->verdict == ConfirmationVerdict::kFinal);
    CHECK(stable->node_id == 1);
    CHECK(stable->against_id == 0);
    CHECK(stable->node_median == doctest::Approx(2.2));
    CHECK(stable->noise == doctest::Approx(0.4 / 2.2));
    CHECK(stable->samples == 3);
    const auto flaky = JudgeFinal(2, 3.5, round);
    REQUIRE(flaky);
    CHECK(flaky->verdict == ConfirmationVerdict::kUnstable);
    CHECK_FALSE(JudgeFinal(3, std::nullopt, {{3, Failed(Outcome::kCrashed)}}));
  }

  TEST_CASE("the best after the final rounds: the highest stable median, a tie to the lower id") {
    CHECK(ChooseBest({{1, 2.0}, {2, 3.0}, {3, 2.5}}, {}) == 2);
    CHECK(ChooseBest({{1, 2.0}, {2, 3.0}, {3, 2.5}}, {2}) == 3);
    CHECK(ChooseBest({{4, 2.5}, {9, 2.5}}, {}) == 4);
    CHECK(ChooseBest({{1, 2.0}}, {1}) == 0);
    CHECK(ChooseBest({{1, 0.0}}, {}) == 0);
    CHECK(ChooseBest({}, {}) == 0);
  }

  TEST_CASE("verdicts are their stored words, and parse back") {
    for (const auto& [verdict, word] :
         {std::pair{ConfirmationVerdict::kConfirmed, "confirmed"}, {ConfirmationVerdict::kWithinNoise, "within_noise"},
          {ConfirmationVerdict::kUnstable, "unstable"}, {ConfirmationVerdict::kFinal, "final"}}) {
      CHECK(ToString(verdict) == word);
      CHECK(ParseConfirmationVerdict(word) == verdict);
    }
    CHECK_FALSE(ParseConfirmationVerdict(""));
    CHECK_FALSE(ParseConfirmationVerdict("not_confirmed"));
  }
}
