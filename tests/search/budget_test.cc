// The run's budget (search/engine/budget.h): each budget stops with its
// reason, what earlier sessions spent counts, resume extends, and the usd
// reservations of LLM calls in flight. Pure: no clock, no store.

#include <doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "search/engine/budget.h"
#include "search/mutators/analyst.h"
#include "search/mutators/llm_mutator.h"
#include "search/mutators/paid_call.h"

using namespace kestrel;

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// An LLM that answers every call at once with a kernel, at a fixed cost.
class CountingClient final : public LlmClient {
 public:
  explicit CountingClient(double cost) : cost_(cost) {}
  LlmResponse Complete(const LlmRequest&) override {
    ++calls;
    LlmResponse response;
    response.text = "```cpp\nvoid k(float* x) {\n  x[0] = 1;\n}\n```\n";
    response.finish_reason = "stop";
    response.cost_usd = cost_;
    return response;
  }
  const std::string& provider() const override { return provider_; }
  const std::string& model() const override { return model_; }
  std::atomic<int> calls{0};

 private:
  double cost_;
  std::string provider_ = "openai", model_ = "m";
};

// Calls whose estimate is 0.2 USD: no input price, 200000 output tokens at $1/Mtok.
MutatorConfig PricedAtFifthOfADollar() {
  MutatorConfig config;
  config.kind = "llm";
  config.provider = "openai";
  config.model = "m";
  config.max_tokens = 200'000;
  config.price_input_per_mtok = 0.0;
  config.price_output_per_mtok = 1.0;
  config.combine_share = 0;
  return config;
}

LlmRequest Ask() {
  LlmRequest request;
  request.messages = {{"user", "Rewrite k."}};
  request.max_tokens = 200'000;
  return request;
}

BudgetConfig UsdOnly(double usd) {
  BudgetConfig limits;
  limits.usd = usd;
  return limits;
}

}  // namespace

TEST_SUITE("budget") {
  TEST_CASE("each budget stops with its reason, and only when its use is given") {
    SUBCASE("time") {
      const Budget budget(BudgetConfig{Seconds(10), std::nullopt, std::nullopt, std::nullopt});
      CHECK_FALSE(budget.Check(BudgetUse::Active(9.9)));
      CHECK(budget.Check(BudgetUse::Active(10.0)) == StopKind::kTime);
      CHECK_FALSE(budget.Check(BudgetUse::Started(1000)));
    }
    SUBCASE("evaluations: the started ones, in flight included") {
      const Budget budget(BudgetConfig{std::nullopt, 5, std::nullopt, std::nullopt});
      CHECK_FALSE(budget.Check(BudgetUse::Started(4)));
      CHECK(budget.Check(BudgetUse::Started(5)) == StopKind::kEvaluations);
      CHECK_FALSE(budget.Check(BudgetUse::Active(1e9)));
    }
    SUBCASE("usd: settled spend, checked with the clock") {
      Budget budget(BudgetConfig{std::nullopt, std::nullopt, 1.0, std::nullopt});
      REQUIRE(budget.Reserve(0.6));
      budget.Settle(0.6, 0.99);
      CHECK_FALSE(budget.Check(BudgetUse::Active(0.0)));
      REQUIRE(budget.Reserve(0.01));
      budget.Settle(0.01, 0.01);
      CHECK(budget.Check(BudgetUse::Active(0.0)) == StopKind::kUsd);
      CHECK_FALSE(budget.Check(BudgetUse::Started(0)));
    }
    SUBCASE("plateau") {
      const Budget budget(BudgetConfig{std::nullopt, std::nullopt, std::nullopt, 3});
      CHECK_FALSE(budget.Check(BudgetUse::SinceBest(2)));
      CHECK(budget.Check(BudgetUse::SinceBest(3)) == StopKind::kPlateau);
    }
    SUBCASE("none: nothing stops") {
      const Budget budget(BudgetConfig{});
      CHECK_FALSE(budget.Check({1e9, 1'000'000, 1'000'000}));
    }
    SUBCASE("time comes first when several are spent") {
      const Budget budget(BudgetConfig{Seconds(1), 1, std::nullopt, 1});
      CHECK(budget.Check({2.0, 2, 2}) == StopKind::kTime);
      CHECK(budget.Check({std::nullopt, 2, 2}) == StopKind::kEvaluations);
    }
  }

  TEST_CASE("what earlier sessions spent counts against the budget and in what is left") {
    Budget budget(BudgetConfig{Seconds(100), 10, 2.0, std::nullopt}, BudgetSpent{7, 60.0, 1.5});
    CHECK_FALSE(budget.Check(BudgetUse::Active(39.0)));
    CHECK(budget.Check(BudgetUse::Active(40.0)) == StopKind::kTime);
    CHECK_FALSE(budget.Check(BudgetUse::Started(2)));
    CHECK(budget.Check(BudgetUse::Started(3)) == StopKind::kEvaluations);
    CHECK(budget.usd_spent() == doctest::Approx(1.5));
    CHECK_FALSE(budget.Reserve(0.6));  // 1.5 + 0.6 > 2.0
    CHECK(budget.Reserve(0.5));

    const BudgetLeft left = budget.Left(10.0, 1);
    CHECK(*left.seconds == doctest::Approx(30.0));
    CHECK(*left.evaluations == 2);
    CHECK(left.usd_spent == doctest::Approx(1.5));
    CHECK(*left.usd_budget == doctest::Approx(2.0));
    CHECK(budget.before().evaluations == 7);
  }

  TEST_CASE("the roofline budget is reached at its fraction of the roofline, and never without one") {
    BudgetConfig limits;
    CHECK_FALSE(Budget(limits).RooflineReached(1.4));
    limits.roofline = 0.9;
    const Budget budget(limits);
    CHECK_FALSE(budget.RooflineReached(0.89));
    CHECK(budget.RooflineReached(0.9));
    CHECK(budget.RooflineReached(1.2));
  }

  TEST_CASE("what is left is empty for a budget the run does not have") {
    const BudgetLeft left = Budget(BudgetConfig{}).Left(5.0, 3);
    CHECK_FALSE(left.seconds);
    CHECK_FALSE(left.evaluations);
    CHECK_FALSE(left.usd_budget);
  }

  TEST_CASE("Extend adds to a budget, and one the run did not have starts from what it spent") {
    SUBCASE("extending existing budgets") {
      Budget budget(BudgetConfig{Seconds(100), 10, std::nullopt, std::nullopt}, BudgetSpent{10, 100.0, 0.0});
      CHECK(budget.Check(BudgetUse::Active(0.0)) == StopKind::kTime);
      budget.Extend(Seconds(30), 4);
      CHECK_FALSE(budget.Check(BudgetUse::Active(29.0)));
      CHECK(budget.Check(BudgetUse::Active(30.0)) == StopKind::kTime);
      CHECK_FALSE(budget.Check(BudgetUse::Started(3)));
      CHECK(budget.Check(BudgetUse::Started(4)) == StopKind::kEvaluations);
    }
    SUBCASE("a run stopped by its plateau, extended by time and evaluations") {
      Budget budget(BudgetConfig{std::nullopt, std::nullopt, std::nullopt, 5}, BudgetSpent{12, 80.0, 0.0});
      budget.Extend(Seconds(20), 3);
      CHECK(*budget.Left(0.0, 0).seconds == doctest::Approx(20.0));
      CHECK(*budget.Left(0.0, 0).evaluations == 3);
    }
    SUBCASE("a run past its limits (its final confirmation, its evaluations in flight) gets the whole extension") {
      // 8 s budget, 13.55 s spent: --time 10s gave 4.45 s; 6 evaluations
      // budgeted, 8 made: --max-evals 3 gave 1.
      Budget budget(BudgetConfig{Seconds(8), 6, std::nullopt, std::nullopt}, BudgetSpent{8, 13.55, 0.0});
      budget.Extend(Seconds(10), 3);
      CHECK(*budget.Left(0.0, 0).seconds == doctest::Approx(10.0));
      CHECK(*budget.Left(0.0, 0).evaluations == 3);
    }
    SUBCASE("nothing given: unchanged") {
      Budget budget(BudgetConfig{}, BudgetSpent{3, 5.0, 0.0});
      budget.Extend(std::nullopt, std::nullopt);
      CHECK_FALSE(budget.Left(0.0, 0).seconds);
      CHECK_FALSE(budget.Left(0.0, 0).evaluations);
    }
  }

  TEST_CASE("usd reservations in flight block new calls and settle to the real cost") {
    Budget budget(BudgetConfig{std::nullopt, std::nullopt, 1.0, std::nullopt});
    REQUIRE(budget.Reserve(0.4));
    REQUIRE(budget.Reserve(0.4));
    CHECK_FALSE(budget.Reserve(0.4));  // two calls in flight hold 0.8
    CHECK(budget.usd_spent() == 0.0);  // reserved is not spent
    budget.Settle(0.4, 0.05);          // the reply cost less than its estimate
    CHECK(budget.usd_spent() == doctest::Approx(0.05));
    CHECK(budget.Reserve(0.4));  // 0.05 spent + 0.4 + 0.4 reserved
    budget.Settle(0.4, 0.1);
    budget.Settle(0.4, 0.1);
    CHECK(budget.usd_spent() == doctest::Approx(0.25));
    CHECK(budget.Reserve(0.75));
    CHECK_FALSE(budget.Reserve(0.01));
  }

  TEST_CASE("no usd budget: every call may be made, and its cost is still counted") {
    Budget budget(BudgetConfig{});
    CHECK(budget.Reserve(1e6));
    budget.Settle(1e6, 3.0);
    CHECK(budget.usd_spent() == doctest::Approx(3.0));
  }

  TEST_CASE("reservations from many threads never pass the budget together") {
    // Eighths add up exactly: 80 calls spend the 10 USD, no more.
    Budget budget(BudgetConfig{std::nullopt, std::nullopt, 10.0, std::nullopt});
    std::vector<std::thread> workers;
    for (int t = 0; t < 8; ++t) {
      workers.emplace_back([&budget] {
        for (int i = 0; i < 100; ++i) {
          if (budget.Reserve(0.125)) budget.Settle(0.125, 0.125);
        }
      });
    }
    for (std::thread& worker : workers) worker.join();
    CHECK(budget.usd_spent() == 10.0);
    CHECK(budget.Check(BudgetUse::Active(0.0)) == StopKind::kUsd);
  }

  TEST_CASE("SpentBy: the run's evaluations and spend, and its active time from start to stop") {
    RunRecord run;
    run.evaluations = 9;
    run.llm_usd = 0.25;
    const std::vector<RunEventRecord> events = {
        {1, 1, 1'000, "start", "{}"}, {2, 1, 5'000, "new_best", "{}"}, {3, 1, 11'000, "stop", "{}"},
        // A second session killed after its last event.
        {4, 1, 100'000, "start", "{}"}, {5, 1, 103'500, "new_best", "{}"},
        // A third, stopped.
        {6, 1, 200'000, "start", "{}"}, {7, 1, 202'000, "stop", "{}"}};
    const BudgetSpent spent = SpentBy(run, events);
    CHECK(spent.evaluations == 9);
    CHECK(spent.usd == doctest::Approx(0.25));
    CHECK(spent.seconds == doctest::Approx(10.0 + 3.5 + 2.0));
  }

  TEST_CASE("SpentBy: a session killed and resumed counts to its last event, not to the resume") {
    // As `kestrel resume` writes them: "resume" (what was spent) before the
    // new session's "start". The hours the run lay dead are not spent.
    RunRecord run;
    const std::vector<RunEventRecord> events = {
        {1, 1, 1'000, "start", "{}"},       {2, 1, 26'000, "new_best", "{}"},  // killed after 25 s
        {3, 1, 3'600'000, "resume", "{}"},  {4, 1, 3'600'010, "start", "{}"},
        {5, 1, 3'623'010, "new_best", "{}"},  // killed again after 23 s
        {6, 1, 7'200'000, "resume", "{}"},  {7, 1, 7'200'010, "start", "{}"}, {8, 1, 7'201'010, "stop", "{}"}};
    CHECK(SpentBy(run, events).seconds == doctest::Approx(25.0 + 23.0 + 1.0));
  }

  TEST_CASE("a search given no budget that ends it stops after 10 minutes") {
    CHECK(*WithDefaultTime(BudgetConfig{}).time == Seconds(600));
    const BudgetConfig plateau_only = WithDefaultTime(BudgetConfig{std::nullopt, std::nullopt, std::nullopt, 5});
    CHECK_FALSE(plateau_only.time);
    // A usd budget alone does not end a search of knob mutators: the default applies.
    CHECK(*WithDefaultTime(BudgetConfig{std::nullopt, std::nullopt, 1.0, std::nullopt}).time == Seconds(600));
    CHECK(*WithDefaultTime(BudgetConfig{Seconds(5), std::nullopt, std::nullopt, std::nullopt}).time == Seconds(5));
  }

  TEST_CASE("a refused reservation says whether the budget is spent or only held by the calls in flight") {
    Budget budget(UsdOnly(1.0));
    REQUIRE(budget.Reserve(0.4));
    REQUIRE(budget.Reserve(0.4));
    // Nothing is settled: the two calls in flight hold the rest on paper only.
    const Reservation held = budget.Reserve(0.4);
    CHECK_FALSE(held);
    CHECK(held.held());
    CHECK_FALSE(held.spent());
    CHECK_FALSE(budget.Check(BudgetUse::Active(0.0)));  // the run goes on
    // An estimate the settled spend alone cannot hold is spent, calls in flight or not.
    CHECK(budget.Reserve(1.01).spent());
    budget.Settle(0.4, 0.7);
    budget.Settle(0.4, 0.1);
    CHECK(budget.Reserve(0.15));         // 0.8 settled + 0.15
    CHECK(budget.Reserve(0.1).held());   // 0.8 + 0.1 fits once the 0.15 settles
    CHECK(budget.Reserve(0.25).spent());  // 0.8 + 0.25 never fits
    CHECK(Budget(BudgetConfig{}).Reserve(1e9));  // no usd budget: never refused
  }

  TEST_CASE("AwaitSettle returns when a call in flight settles, at once for a settle it missed, or when cancelled") {
    Budget budget(UsdOnly(1.0));
    REQUIRE(budget.Reserve(0.9));
    const Reservation held = budget.Reserve(0.5);
    REQUIRE(held.held());
    const auto start = Clock::now();
    std::thread settler([&budget] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      budget.Settle(0.9, 0.2);
    });
    budget.AwaitSettle(held, [] { return false; });
    CHECK(SecondsSince(start) >= 0.15);
    settler.join();
    CHECK(budget.Reserve(0.5));  // 0.2 settled + 0.5

    const Reservation again = budget.Reserve(0.5);  // 0.2 + 0.5 in flight + 0.5
    REQUIRE(again.held());
    budget.Settle(0.5, 0.1);  // before the wait: not missed
    const auto quick = Clock::now();
    budget.AwaitSettle(again, {});
    CHECK(SecondsSince(quick) < 0.09);  // not one poll

    REQUIRE(budget.Reserve(0.6));  // 0.3 + 0.6
    const Reservation stuck = budget.Reserve(0.5);
    REQUIRE(stuck.held());
    const auto cancelled_at = Clock::now();
    budget.AwaitSettle(stuck, [] { return true; });
    CHECK(SecondsSince(cancelled_at) < 1.0);
  }

  TEST_CASE("a paid call crowded out by calls in flight waits for one to settle, then is made or declines") {
    const MutatorConfig config = PricedAtFifthOfADollar();
    SUBCASE("made once a call in flight settles for less than its estimate") {
      Budget budget(UsdOnly(1.0));
      REQUIRE(budget.Reserve(0.9));  // another call in flight
      CountingClient client(0.05);
      std::thread settler([&budget] {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        budget.Settle(0.9, 0.1);
      });
      const PaidCall paid = MakePaidCall(client, budget, config, Ask(), "mutate", [] { return false; });
      settler.join();
      CHECK(paid.made);
      CHECK_FALSE(paid.budget_spent);
      CHECK(client.calls == 1);
      CHECK(budget.usd_spent() == doctest::Approx(0.15));
    }
    SUBCASE("not made, and not spent, when the run stops while it waits") {
      Budget budget(UsdOnly(1.0));
      REQUIRE(budget.Reserve(0.9));
      CountingClient client(0.05);
      const PaidCall paid = MakePaidCall(client, budget, config, Ask(), "mutate", [] { return true; });
      CHECK_FALSE(paid.made);
      CHECK_FALSE(paid.budget_spent);
      CHECK(client.calls == 0);
    }
    SUBCASE("not made, and spent, when the settled spend alone leaves no room: no wait") {
      Budget budget(UsdOnly(1.0), BudgetSpent{0, 0.0, 0.85});
      REQUIRE(budget.Reserve(0.1));  // in flight, but the refusal is not its doing
      CountingClient client(0.05);
      const auto start = Clock::now();
      const PaidCall paid = MakePaidCall(client, budget, config, Ask(), "mutate", [] { return false; });
      CHECK(SecondsSince(start) < 0.09);  // not one poll
      CHECK_FALSE(paid.made);
      CHECK(paid.budget_spent);
      CHECK(client.calls == 0);
    }
  }

  TEST_CASE("an llm mutator crowded out by calls in flight declines the expansion without stopping the run") {
    // Three calls of 0.3 in flight; this mutator's calls are estimated at 0.2.
    auto budget = std::make_shared<Budget>(UsdOnly(1.0));
    for (int i = 0; i < 3; ++i) REQUIRE(budget->Reserve(0.3));
    auto client = std::make_shared<CountingClient>(0.01);
    auto task = std::make_shared<Task>();
    task->name = "t";
    task->entry = "k";
    task->language = "cpp";
    std::unique_ptr<Mutator> mutator = MakeLlmMutator(PricedAtFifthOfADollar(), client, LlmContext{task, {}, 1, budget});
    const ParentView parent{1, Candidate{"void k(float* x) { x[0] = 0; }\n", {}, "c++", {}}};
    const auto expand = [&] {
      std::mt19937_64 rng(1);
      return mutator->Expand(parent, rng, [](const std::string&) { return false; });
    };

    // One settles for 0.25 while it waits: 0.25 + 0.6 in flight + 0.2 still
    // does not fit. Calls of nothing settle after it, so that the expansion
    // is woken however late it starts waiting.
    std::atomic<bool> expanded{false};
    std::thread settler([&budget, &expanded] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      budget->Settle(0.3, 0.25);
      while (!expanded) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (budget->Reserve(0.0)) budget->Settle(0.0, 0.0);
      }
    });
    const MutationResult declined = expand();
    expanded = true;
    settler.join();
    CHECK_FALSE(declined.proposal);
    CHECK_FALSE(declined.budget_spent);  // before: true, and the engine stopped the run with "usd"
    CHECK_FALSE(declined.exhausted);     // the parent may be expanded again
    CHECK(declined.stop_reason.empty());
    CHECK(declined.calls.empty());
    CHECK(declined.note.find("held by calls in flight") != std::string::npos);
    CHECK(client->calls == 0);
    CHECK_FALSE(budget->Check(BudgetUse::Active(0.0)));

    // Once another settles there is room: the next expansion calls.
    budget->Settle(0.3, 0.0);
    const MutationResult made = expand();
    CHECK(made.proposal);
    CHECK(client->calls == 1);

    // The settled spend alone leaving no room is the end of the run's usd budget.
    budget->Settle(0.3, 0.6);  // 0.25 + 0.01 + 0.6 settled
    const MutationResult spent = expand();
    CHECK_FALSE(spent.proposal);
    CHECK(spent.budget_spent);
    CHECK(spent.exhausted);
    CHECK(spent.note.find("would be exceeded") != std::string::npos);
    CHECK(client->calls == 1);
  }

  TEST_CASE("an analysis crowded out by calls in flight is not made and the expansion is not a budget stop") {
    auto budget = std::make_shared<Budget>(UsdOnly(1.0));
    REQUIRE(budget->Reserve(0.9));
    auto client = std::make_shared<CountingClient>(0.01);
    Analyst analyst(PricedAtFifthOfADollar(), client, budget);
    ParentView parent{3, Candidate{"void k(float* x) { x[0] = 0; }\n", {}, "c++", {}}};
    parent.profile_digest = "roofline: 30% of L2 bandwidth (memory bound)";
    Task task;
    task.entry = "k";
    MutationPromptInput input;
    input.task = &task;
    input.parent = parent.candidate;
    input.max_tokens = 200'000;  // an estimate of 0.2
    const Analyst::Verdict verdict = analyst.AnalysisOf(parent, input, [] { return true; });
    CHECK_FALSE(verdict.analysis);
    CHECK_FALSE(verdict.call);
    CHECK_FALSE(verdict.budget_spent);
    CHECK(verdict.budget_held);
    CHECK(verdict.note.find("held by calls in flight") != std::string::npos);
    CHECK(client->calls == 0);
  }
}
