// core/profile.h: a profile survives its JSON (what the profiles table
// stores and a command harness sends), a malformed document is refused
// naming the field, and the digest is deterministic plain text with the
// numbers of every part.

#include "core/profile.h"

#include <doctest.h>

#include <nlohmann/json.hpp>

namespace kestrel {
namespace {

Profile FullProfile() {
  Profile profile;
  profile.roofline = RooflinePosition{"n=4194304", 0.25, 12.5, 25.0, 400.0, 30.0, "DRAM", "memory", 0.83};
  CounterProfile counters;
  counters.source = "cachegrind";
  counters.shape = "n=1024";
  counters.instructions = 6.5;
  counters.d1_miss_rate = 0.0625;
  counters.ll_miss_rate = 0.01;
  counters.cache_misses = 0.125;
  profile.counters = counters;
  profile.mix = InstructionMix{120, 30, 4, 256, 512, 1, 0, 12, {"expf"}};
  profile.remarks = CompilerRemarks{"g++ 12.2.0", {"kernel.cpp:5: loop vectorized using 32 byte vectors"},
                                    {"kernel.cpp:9: not vectorized: complicated access pattern."}};
  profile.scaling = {{"n=1024", 1024, 0.4}, {"n=4194304", 4194304, 0.9}};
  profile.unavailable = {"pmu: no hardware counters"};
  profile.seconds = 1.5;
  profile.costs = {{"objdump", 0.02}, {"cachegrind", 1.2}};
  return profile;
}

TEST_CASE("a profile survives its JSON") {
  const Profile profile = FullProfile();
  const nlohmann::json json = ProfileToJson(profile);
  auto back = ProfileFromJson(nlohmann::json::parse(json.dump()));
  REQUIRE(back);
  CHECK(ProfileToJson(*back) == json);
  CHECK(ProfileDigest(*back) == ProfileDigest(profile));
  REQUIRE(back->counters);
  CHECK(!back->counters->cycles);  // absent stays absent, not 0
  CHECK(*back->counters->instructions == 6.5);
  CHECK(back->mix->calls == std::vector<std::string>{"expf"});
  CHECK(back->scaling.size() == 2);
  REQUIRE(back->costs.size() == 2);
  CHECK(back->costs[1].source == "cachegrind");
  CHECK(back->costs[1].seconds == 1.2);
}

TEST_CASE("an empty object is an empty profile") {
  auto empty = ProfileFromJson(nlohmann::json::object());
  REQUIRE(empty);
  CHECK(!empty->roofline);
  CHECK(!empty->mix);
  CHECK(empty->scaling.empty());
  CHECK(ProfileDigest(*empty).empty());
}

TEST_CASE("a malformed profile is refused naming the field") {
  const auto error = [](const char* text) {
    auto parsed = ProfileFromJson(nlohmann::json::parse(text));
    REQUIRE(!parsed);
    return parsed.error().message();
  };
  CHECK(error("[]") == "profile: not a JSON object");
  CHECK(error(R"({"roofline": 3})") == "profile.roofline: not an object");
  CHECK(error(R"({"roofline": {"gflops": "fast"}})") == "profile.roofline.gflops: wrong type");
  CHECK(error(R"({"counters": {"ipc": "high"}})") == "profile.counters.ipc: not a number");
  CHECK(error(R"({"mix": {"calls": "expf"}})") == "profile.mix.calls: wrong type");
  CHECK(error(R"({"remarks": {"missed": [1]}})") == "profile.remarks.missed: wrong type");
  CHECK(error(R"({"scaling": {}})") == "profile.scaling: not an array");
  CHECK(error(R"({"scaling": [{"ns_per_element": null}]})") == "profile.scaling[].ns_per_element: wrong type");
  CHECK(error(R"({"unavailable": "pmu"})") == "profile.unavailable: wrong type");
  CHECK(error(R"({"costs": [{"seconds": "1"}]})") == "profile.costs[].seconds: wrong type");
  // A profile may come from a command harness, the kernel's side: figures
  // finite, non-negative and sane, counts integers an int holds (these once
  // reached the prompts as "inf%", "IPC -1e308" and "-2147483648 instructions").
  CHECK(error(R"({"roofline": {"fraction": 1e308}})") ==
        "profile.roofline.fraction: expected a number from 0 to 1e18, got 1e+308");
  CHECK(error(R"({"counters": {"ipc": -1}})") == "profile.counters.ipc: expected a number from 0 to 1e18, got -1");
  CHECK(error(R"({"mix": {"packed_fp": 2147483647.0}})") == "profile.mix.packed_fp: wrong type");
  CHECK(error(R"({"mix": {"total": 3000000000}})") ==
        "profile.mix.total: expected an integer from 0 to 2147483647, got 3000000000");
  CHECK(error(R"({"mix": {"total": -5}})") == "profile.mix.total: expected an integer from 0 to 2147483647, got -5");
}

TEST_CASE("the digest is a few hundred tokens of plain text with the numbers of every part") {
  const std::string digest = ProfileDigest(FullProfile());
  CHECK(digest == ProfileDigest(FullProfile()));
  for (const char* expected :
       {"83% of the roofline", "memory-bound", "intensity 0.25", "DRAM", "instructions/elem 6.50",
        "D1 miss rate 6.25%", "30 packed / 4 scalar (88% packed)", "widest vector 256 bits (ymm) of 512 available (zmm)", "calls expf",
        "kernel.cpp:5: loop vectorized", "kernel.cpp:9: not vectorized", "n=1024 0.4 ns", "n=4194304 0.9 ns",
        "the largest shape is 2.2x slower per element: cache-bound",
        "not available: pmu"}) {
    CHECK_MESSAGE(digest.find(expected) != std::string::npos, std::string(expected) << " in\n" << digest);
  }
  CHECK(digest.size() / 4 < 400);  // tokens, about
}

TEST_CASE("the digest of an uncalibrated host gives no fraction of nothing; a slower small shape is noted") {
  Profile profile;
  profile.roofline = RooflinePosition{"n=1000", 0.125, 0.46, 3.7, 0.0, 0.0, "L3", "", 0.0};
  profile.scaling = {{"n=512", 262144, 19.6}, {"n=1000", 1e6, 2.2}};
  const std::string digest = ProfileDigest(profile);
  CHECK(digest.find("of the roofline") == std::string::npos);
  CHECK(digest.find("the host is not calibrated; intensity 0.125 flop/byte; 0.46 GFLOP/s, 3.70 GB/s achieved (L3 "
                    "working set)") != std::string::npos);
  CHECK(digest.find("the smallest shape is 8.9x slower per element") != std::string::npos);
}

}  // namespace
}  // namespace kestrel
