// The engine's profile stage (engine_profile.cc): which nodes are profiled
// (those that challenge the best, the parents an LLM-like mutator expands,
// the top of best at the end), once per node and host, what the expanding
// mutator is told, and that profiles hold a device slot like measurements.
// The engine on a real SQLite file with the FakeEvaluator's canned profiles.

#include <doctest.h>

#include <map>
#include <mutex>
#include <set>

#include "engine_harness.h"
#include "fake_evaluator.h"
#include "search/strategies/strategy.h"

using namespace kestrel;
using testing::FakeEvaluator;
using testing::Harness;
using testing::Must;
using testing::StopGuard;

namespace {

// Node ids with a stored profile, and how many each has.
std::map<std::int64_t, int> StoredProfiles(Harness& harness) {
  std::map<std::int64_t, int> profiles;
  for (const NodeRecord& node : harness.Nodes()) {
    if (auto latest = Must(harness.store().LatestProfile(node.id, 0)); latest) ++profiles[node.id];
  }
  return profiles;
}

std::set<std::int64_t> NewBests(Harness& harness) {
  std::set<std::int64_t> nodes;
  for (const auto& event : Must(harness.store().RunEvents(harness.last_run()))) {
    if (event.kind == "new_best") nodes.insert(nlohmann::json::parse(event.detail_json).at("node").get<std::int64_t>());
  }
  return nodes;
}

// What the probe saw of each parent: the profile fields the engine gave it.
struct Seen {
  std::string digest;
  double fraction = 0;
  std::string bound;
};
class SeenParents {
 public:
  void Note(const ParentView& parent) {
    std::lock_guard lock(mutex_);
    seen_[parent.id] = {parent.profile_digest, parent.roofline_fraction, parent.bound};
  }
  std::map<NodeId, Seen> seen() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<NodeId, Seen> seen_;
};

// A mutator that wants the LLM's context: it notes the profile fields the
// engine gives each parent, then makes the knob mutator's move.
class ContextProbe final : public Mutator {
 public:
  explicit ContextProbe(std::shared_ptr<SeenParents> seen) : seen_(std::move(seen)) {}
  std::string_view Kind() const override { return "probe"; }
  bool WantsContext() const override { return true; }
  std::optional<Proposal> Propose(const ParentView& parent, std::mt19937_64& rng, const IsKnown& is_known) override {
    seen_->Note(parent);
    return knob_->Propose(parent, rng, is_known);
  }

 private:
  std::shared_ptr<SeenParents> seen_;
  std::unique_ptr<Mutator> knob_ = MakeKnobMutator();
};

// One run of the engine with the probe as its only mutator; what it saw.
std::shared_ptr<SeenParents> RunWithProbe(Harness& harness, FakeEvaluator& evaluator, RunConfig config,
                                          RunSummary* summary = nullptr) {
  config.task = harness.task().name;
  const std::int64_t host_id = Must(harness.store().UpsertHost(evaluator.Host()));
  RunRecord run;
  run.task_id = Must(harness.store().UpsertTask(harness.task()));
  run.graph_id = harness.graph_id();
  run.host_id = host_id;
  run.config_json = ToJson(config).dump();
  EngineOptions options;
  options.run_id = Must(harness.store().CreateRun(run));
  options.graph_id = harness.graph_id();
  options.host_id = host_id;
  options.budget = std::make_shared<Budget>(config.budget);
  auto seen = std::make_shared<SeenParents>();
  std::vector<std::unique_ptr<Mutator>> mutators;
  mutators.push_back(std::make_unique<ContextProbe>(seen));
  Engine engine(harness.store(), harness.task(), evaluator, config, std::move(mutators),
                Must(MakeStrategy(config.strategy)), options);
  const RunSummary result = Must(engine.Run());
  if (summary != nullptr) *summary = result;
  return seen;
}

}  // namespace

TEST_SUITE("profile") {
  TEST_CASE("results that challenge the best are profiled once each, the others are not; the top is profiled at the end") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    evaluator.EnableProfiles();
    RunConfig config = testing::Config();
    config.parallel.max_in_flight = 1;  // each result is judged before the next is measured
    config.confirm = {2, 1};
    const RunSummary summary = Must(harness.Run(evaluator, config));
    const auto stored = StoredProfiles(harness);
    const auto bests = NewBests(harness);
    REQUIRE_FALSE(bests.empty());
    for (const std::int64_t node : bests) {
      CAPTURE(node);
      CHECK(stored.count(node) == 1);
    }
    // The top two at the end (confirm.top) have one too.
    for (const BestRow& row : Must(harness.store().Best({.task = "fake_task", .top = 2}))) {
      CHECK(stored.count(row.node_id) == 1);
    }
    CHECK(stored.size() < harness.Nodes().size());  // not every node
    CHECK(summary.profiles == static_cast<std::int64_t>(stored.size()));
    for (const auto& [identity, count] : evaluator.ProfilesByIdentity()) {
      CAPTURE(identity);
      CHECK(count == 1);
    }
    // What is stored is the evaluator's profile and its digest.
    const ProfileRecord record = *Must(harness.store().LatestProfile(*bests.begin(), 0));
    auto profile = Must(ProfileFromJson(nlohmann::json::parse(record.profile_json)));
    REQUIRE(profile.roofline);
    CHECK(profile.roofline->bound == "memory");
    CHECK(record.digest == ProfileDigest(profile));
    CHECK(record.digest.find("memory-bound") != std::string::npos);
    CHECK(record.run_id == harness.last_run());
  }

  TEST_CASE("a parent an LLM-like mutator expands is profiled first, once, and the mutator gets its digest") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator(testing::FakeSpeedup, [](const KnobValues&) { return Outcome::kMeasured; },
                            std::chrono::milliseconds(2));
    evaluator.EnableProfiles();
    RunConfig config = testing::Config();
    config.budget.evaluations = 12;
    config.parallel.max_in_flight = 4;  // several expansions of one parent in flight at once
    const auto seen = RunWithProbe(harness, evaluator, config)->seen();
    REQUIRE_FALSE(seen.empty());
    for (const auto& [parent, what] : seen) {
      CAPTURE(parent);
      const auto stored = Must(harness.store().LatestProfile(parent, 0));
      REQUIRE(stored.has_value());
      CHECK(what.digest == stored->digest);
      CHECK(what.bound == "memory");
      CHECK(what.fraction == doctest::Approx(*Must(harness.store().GetNode(parent)).speedup / 10).epsilon(0.5));
    }
    for (const auto& [identity, count] : evaluator.ProfilesByIdentity()) {
      CAPTURE(identity);
      CHECK(count == 1);
    }
    // Profiles take a device slot: never two kernels on the one slot at once.
    CHECK(evaluator.MaxConcurrentMeasures() == 1);
  }

  TEST_CASE("a later run reuses the stored profiles: no node is profiled twice on a host") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    evaluator.EnableProfiles();
    RunConfig config = testing::Config();
    config.budget.evaluations = 6;
    (void)RunWithProbe(harness, evaluator, config);
    const auto first = StoredProfiles(harness);
    config.budget.evaluations = 12;
    FakeEvaluator again;  // a new process: it remembers nothing
    again.EnableProfiles();
    const auto seen = RunWithProbe(harness, again, config)->seen();
    for (const auto& [node, count] : StoredProfiles(harness)) CHECK(count == 1);
    for (const auto& [identity, count] : again.ProfilesByIdentity()) {
      CAPTURE(identity);
      CHECK(count == 1);
    }
    // Every parent of the second run had a digest, stored before or taken now.
    REQUIRE_FALSE(seen.empty());
    for (const auto& [parent, what] : seen) CHECK_FALSE(what.digest.empty());
    CHECK(first.size() >= 1);
  }

  TEST_CASE("an evaluator that cannot profile: no profiles, and the mutator gets no digest") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    RunConfig config = testing::Config();
    config.budget.evaluations = 6;
    RunSummary summary;
    const auto seen = RunWithProbe(harness, evaluator, config, &summary)->seen();
    CHECK(summary.profiles == 0);
    CHECK(StoredProfiles(harness).empty());
    REQUIRE_FALSE(seen.empty());
    for (const auto& [parent, what] : seen) CHECK(what.digest.empty());
  }
}
