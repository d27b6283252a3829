// kestrel show NODE --profile [--json] (docs/PROFILES.md) on a database whose
// node got a profile through the Store API, and on one whose node has none:
// the stored digest, the stored document, and a note that says how a node
// gets a profile. And kestrel doctor's profile sources.

#include <doctest.h>

#include <nlohmann/json.hpp>

#include "cli_workspace.h"
#include "core/profile.h"
#include "store/store.h"

namespace kestrel {
namespace {

using testing::Workspace;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Two nodes of task "affine" (the seed, and a copy with a comment); the first
// has two profiles on one host, the newer one the one shown.
std::pair<std::int64_t, std::int64_t> MakeNodes(const Workspace& workspace, const Profile& profile) {
  auto store = Store::Open(workspace.db());
  REQUIRE(store);
  auto task = LoadTask(workspace.tasks() / "affine");
  REQUIRE(task);
  auto task_id = (*store)->UpsertTask(*task);
  REQUIRE(task_id);
  auto graph = (*store)->GraphForTask(*task_id, false);
  REQUIRE(graph);
  auto host = (*store)->UpsertHost(DetectHost());
  REQUIRE(host);
  const Candidate seed{task->seeds.at(0).text, {{"UNROLL", "1"}, {"REVERSE", "0"}}, "g++ 12.2.0", {"-O3"}};
  auto profiled = (*store)->AddNode(NewNodeRecord(seed, *graph, 0, "seed:seed.cpp"), std::nullopt);
  REQUIRE(profiled);
  const Candidate other{seed.source + "// another\n", seed.knobs, seed.toolchain, seed.flags};
  auto plain = (*store)->AddNode(NewNodeRecord(other, *graph, 0, "seed:other.cpp"), std::nullopt);
  REQUIRE(plain);
  Profile older;
  older.unavailable = {"pmu: an older profile"};
  for (const Profile* each : {static_cast<const Profile*>(&older), &profile}) {
    ProfileRecord record;
    record.node_id = *profiled;
    record.host_id = *host;
    record.profile_json = ProfileToJson(*each).dump();
    record.digest = ProfileDigest(*each);
    record.seconds = 1.25;
    REQUIRE((*store)->AddProfile(record));
  }
  return {*profiled, *plain};
}

TEST_CASE("show --profile prints the latest digest, --json the stored profile, and a node without one says how") {
  Workspace workspace;
  Profile profile;
  profile.mix = InstructionMix{18, 0, 1, 0, 512, 0, 0, 1, {}};
  profile.counters = CounterProfile{"cachegrind", "n=200000", std::nullopt, 6.0, std::nullopt, 0.0625, 0.03,
                                    0.125, std::nullopt};
  profile.unavailable = {"pmu: no hardware counters here"};
  const auto [profiled, plain] = MakeNodes(workspace, profile);

  const auto shown = workspace.Run({"show", std::to_string(profiled), "--profile"});
  INFO(shown.out << shown.err);
  CHECK(shown.code == 0);
  CHECK(Contains(shown.out, "profile of node " + std::to_string(profiled) + " (host "));
  CHECK(Contains(shown.out, "took 1.25s"));
  CHECK(Contains(shown.out, ProfileDigest(profile)));
  CHECK(!Contains(shown.out, "an older profile"));

  const auto json = workspace.Run({"show", std::to_string(profiled), "--profile", "--json"});
  REQUIRE(json.code == 0);
  const auto document = nlohmann::json::parse(json.out);
  CHECK(document["node"] == profiled);
  CHECK(document["profile"] == ProfileToJson(profile));
  CHECK(document["digest"] == ProfileDigest(profile));
  CHECK(document["seconds"] == 1.25);

  // The node's own page points at it; its JSON carries it.
  const auto page = workspace.Run({"show", std::to_string(profiled)});
  CHECK(Contains(page.out, "kestrel show " + std::to_string(profiled) + " --profile"));
  const auto page_json = nlohmann::json::parse(workspace.Run({"show", std::to_string(profiled), "--json"}).out);
  CHECK(page_json["profile"] == ProfileToJson(profile));

  const auto none = workspace.Run({"show", std::to_string(plain), "--profile"});
  CHECK(none.code == 0);
  CHECK(Contains(none.out, "node " + std::to_string(plain) + " has no profile on any host"));
  CHECK(Contains(none.out, "new bests"));
  const auto none_json = nlohmann::json::parse(workspace.Run({"show", std::to_string(plain), "--profile", "--json"}).out);
  CHECK(none_json["profile"].is_null());
  CHECK(Contains(none_json["note"].get<std::string>(), "has no profile"));
}

TEST_CASE("doctor lists every profile source with whether it works here") {
  Workspace workspace;
  const auto doctor = workspace.Run({"doctor", "--json"});
  INFO(doctor.out << doctor.err);
  const auto checks = nlohmann::json::parse(doctor.out);
  for (const char* name : {"profile: pmu", "profile: cachegrind", "profile: objdump", "profile: compiler remarks",
                           "profile: ncu"}) {
    bool found = false;
    for (const auto& check : checks) {
      if (check["check"] != name) continue;
      found = true;
      CHECK(check["state"] != "fail");
      CHECK(!check["detail"].get<std::string>().empty());
    }
    CHECK_MESSAGE(found, name);
  }
}

}  // namespace
}  // namespace kestrel
