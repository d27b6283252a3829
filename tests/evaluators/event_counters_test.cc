// Counting events with perf_event_open (evaluators/event_counters.h): on
// this process, and through the runner on a candidate's worker around its
// counted calls (Job::count_events), which is how a profile reads the PMU.
// Hardware counters exist only where the machine has a PMU (many VMs have
// none); the kernel's software events exist on every Linux, so the tests
// count page faults and CPU time, and check the hardware path for what the
// machine offers: counts with a PMU, the reason without one.

#include "evaluators/event_counters.h"

#include <sys/mman.h>

#include <doctest.h>

#include <chrono>
#include <map>
#include <memory>

#include "evaluators/cpu_evaluator.h"
#include "evaluators/profile_sources.h"
#include "scale_task.h"

namespace kestrel {
namespace {

constexpr int kPagesPerCall = 64;  // scale_touches_pages.cpp

void TouchFreshPages(int pages) {
  const std::size_t bytes = static_cast<std::size_t>(pages) * 4096;
  void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(map != MAP_FAILED);
  volatile char* data = static_cast<char*>(map);
  for (int p = 0; p < pages; ++p) data[static_cast<std::size_t>(p) * 4096] = 1;
  ::munmap(map, bytes);
}

std::map<std::string, EventCount> ByName(const std::vector<EventCount>& counts) {
  std::map<std::string, EventCount> named;
  for (const EventCount& count : counts) named[count.name] = count;
  return named;
}

CpuEvaluator& ScaleEvaluator() {
  static std::unique_ptr<CpuEvaluator> evaluator;
  if (!evaluator) {
    auto made = CpuEvaluator::Create(testing::MakeScaleTask(), testing::FastOptions());
    if (!made) FAIL("CpuEvaluator::Create: " << made.error().message());
    evaluator = std::move(*made);
  }
  return *evaluator;
}

BuildResult Built(CpuEvaluator& evaluator, const std::string& kernel) {
  const BuildResult build = evaluator.Build(testing::MakeCandidate(evaluator, kernel));
  REQUIRE_MESSAGE(build.ok, build.log);
  return build;
}

TEST_CASE("this process's page faults, counted only while the counters are on") {
  auto counters = EventCounters::Open(0, {"page-faults", "task-clock"});
  REQUIRE_MESSAGE(counters, testing::ErrorOf(counters));
  REQUIRE(counters->Enable());
  TouchFreshPages(256);
  REQUIRE(counters->Disable());
  auto first = counters->Read();
  REQUIRE_MESSAGE(first, testing::ErrorOf(first));
  auto named = ByName(*first);
  CHECK(named["page-faults"].value >= 256);
  CHECK(named["page-faults"].value < 256 + 64);
  CHECK(named["task-clock"].value > 0);
  CHECK(named["page-faults"].enabled_s > 0);
  // Off: nothing more is counted.
  TouchFreshPages(256);
  auto second = counters->Read();
  REQUIRE(second);
  CHECK(ByName(*second)["page-faults"].raw == named["page-faults"].raw);
  // On again: it adds up.
  REQUIRE(counters->Enable());
  TouchFreshPages(128);
  REQUIRE(counters->Disable());
  auto third = counters->Read();
  REQUIRE(third);
  CHECK(ByName(*third)["page-faults"].raw >= named["page-faults"].raw + 128);
}

TEST_CASE("an unknown event is refused by name; hardware events are counted where the PMU is, else refused with why") {
  auto unknown = EventCounters::Open(0, {"page-faults", "cpu-wizardry"});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message() == "unknown counter event 'cpu-wizardry'");
  CHECK(FindCounterEvent("L1-dcache-load-misses") != nullptr);
  CHECK(FindCounterEvent("cpu-wizardry") == nullptr);
  for (const std::string& event : PmuEvents()) CHECK_MESSAGE(FindCounterEvent(event) != nullptr, event);

  auto hardware = EventCounters::Open(0, {"instructions"});
  if (PmuUnavailableReason().empty()) {
    REQUIRE_MESSAGE(hardware, testing::ErrorOf(hardware));
    REQUIRE(hardware->Enable());
    volatile double sum = 0;
    for (int i = 0; i < 1'000'000; ++i) sum = sum + i;
    REQUIRE(hardware->Disable());
    auto counts = hardware->Read();
    REQUIRE(counts);
    CHECK((*counts)[0].value >= 1e6);
  } else {
    MESSAGE("no PMU here: " << PmuUnavailableReason());
    REQUIRE_FALSE(hardware);
    CHECK(hardware.error().message().rfind("perf_event_open(instructions): ", 0) == 0);
    // The same words as the detection's (`kestrel doctor`).
    const std::string why = hardware.error().message().substr(hardware.error().message().find(": ") + 2);
    CHECK(PmuUnavailableReason().find(why) != std::string::npos);
  }
}

TEST_CASE("the runner counts a candidate's counted calls on its worker, and nothing else") {
  CpuEvaluator& evaluator = ScaleEvaluator();
  const BuildResult touches = Built(evaluator, "scale_touches_pages");
  const std::vector<std::string> events = {"page-faults", "task-clock"};

  auto four = evaluator.CountEvents(touches, events, 0, 4);
  REQUIRE_MESSAGE(four, testing::ErrorOf(four));
  const auto start = std::chrono::steady_clock::now();
  auto sixteen = evaluator.CountEvents(touches, events, 0, 16);
  REQUIRE_MESSAGE(sixteen, testing::ErrorOf(sixteen));
  MESSAGE("a counting job of 16 calls on n=100000: "
          << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s");
  auto named4 = ByName(*four);
  auto named16 = ByName(*sixteen);
  // 64 faults per counted call, and not the check call's, nor the worker's
  // start (loading the kernel, the first touch of the arena's pages).
  CHECK(named4["page-faults"].value >= 4 * kPagesPerCall);
  CHECK(named4["page-faults"].value < 5 * kPagesPerCall);
  CHECK(named16["page-faults"].value >= 16 * kPagesPerCall);
  CHECK(named16["page-faults"].value < 17 * kPagesPerCall);
  CHECK(named4["task-clock"].value > 0);

  // The reference's loop faults nothing once its buffers are touched.
  const BuildResult plain = Built(evaluator, "scale_ref");
  auto quiet = evaluator.CountEvents(plain, events, 0, 16);
  REQUIRE_MESSAGE(quiet, testing::ErrorOf(quiet));
  CHECK(ByName(*quiet)["page-faults"].value < kPagesPerCall / 2);

  // CPU time follows the work: the same loop a hundred times over.
  const BuildResult slow = Built(evaluator, "scale_slow");
  auto heavy = evaluator.CountEvents(slow, events, 0, 16);
  REQUIRE_MESSAGE(heavy, testing::ErrorOf(heavy));
  CHECK(ByName(*heavy)["task-clock"].value > 10 * ByName(*quiet)["task-clock"].value);

  // Bad requests are refused before any job; the PMU's events are counted
  // where there is one, and say why not where there is none.
  CHECK_FALSE(evaluator.CountEvents(plain, events, 7, 4));
  CHECK_FALSE(evaluator.CountEvents(plain, {}, 0, 4));
  auto pmu = evaluator.CountEvents(plain, PmuEvents(), 0, 4);
  if (PmuUnavailableReason().empty()) {
    REQUIRE_MESSAGE(pmu, testing::ErrorOf(pmu));
    CHECK(ByName(*pmu)["instructions"].value > 4 * 100000);  // one multiply-add per element at least
  } else {
    REQUIRE_FALSE(pmu);
    CHECK(pmu.error().message().rfind("perf_event_open(cycles): ", 0) == 0);
  }
}

TEST_CASE("a kernel cannot stop or reset the counters its supervisor holds") {
  CpuEvaluator& evaluator = ScaleEvaluator();
  const auto attack = [&evaluator](const std::string& file) {
    const std::string source =
        testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / "adversarial" / (file + ".cpp"));
    const BuildResult build = evaluator.Build(Candidate{source, {}, evaluator.Toolchain(), evaluator.Flags()});
    REQUIRE_MESSAGE(build.ok, build.log);
    return evaluator.CountEvents(build, {"page-faults", "task-clock"}, 0, 4);
  };
  // PERF_EVENT_IOC_DISABLE and _RESET on each of its descriptors: it holds
  // no counter, and every fault of its 4 counted calls is counted.
  auto reset = attack("p_resets_counters");
  REQUIRE_MESSAGE(reset, testing::ErrorOf(reset));
  CHECK(ByName(*reset)["page-faults"].value >= 4 * kPagesPerCall);
  CHECK(ByName(*reset)["page-faults"].value < 5 * kPagesPerCall);
  // prctl(PR_TASK_PERF_EVENTS_DISABLE) would stop them: the allowlist ends
  // the job, and no count comes back.
  auto stopped = attack("p_stops_counters");
  REQUIRE_FALSE(stopped);
  CHECK(stopped.error().message().find("prctl") != std::string::npos);
}

TEST_CASE("the profile's counts come from the source the evaluator is told to use") {
  const bool has_pmu = PmuUnavailableReason().empty();
  const auto profile_with = [](const std::string& counters) {
    CpuEvaluatorOptions options = testing::FastOptions();
    options.profile_counters = counters;
    auto evaluator = CpuEvaluator::Create(testing::MakeScaleTask(), options);
    REQUIRE_MESSAGE(evaluator, testing::ErrorOf(evaluator));
    const Candidate candidate = testing::MakeCandidate(**evaluator, "scale_ref");
    const BuildResult build = (*evaluator)->Build(candidate);
    REQUIRE_MESSAGE(build.ok, build.log);
    Profile profile;
    (*evaluator)->AddProfileSources(candidate, build, profile);
    return profile;
  };
  const auto sources = [](const Profile& profile) {
    std::vector<std::string> names;
    for (const ProfileCost& cost : profile.costs) names.push_back(cost.source);
    return names;
  };
  const auto says = [](const Profile& profile, const std::string& text) {
    for (const std::string& line : profile.unavailable) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  };
  REQUIRE_MESSAGE(CachegrindValgrind(), "valgrind is not installed (scripts/setup installs it)");

  const Profile simulated = profile_with("cachegrind");
  REQUIRE(simulated.counters);
  CHECK(simulated.counters->source == "cachegrind");
  CHECK(sources(simulated) == std::vector<std::string>{"objdump", "compiler remarks", "cachegrind"});

  const Profile pmu_only = profile_with("pmu");
  const Profile automatic = profile_with("auto");
  if (has_pmu) {
    REQUIRE(pmu_only.counters);
    CHECK(pmu_only.counters->source == "pmu");
    CHECK(pmu_only.counters->cycles.has_value());
    CHECK(pmu_only.counters->ipc.has_value());
    CHECK(sources(pmu_only) == std::vector<std::string>{"objdump", "compiler remarks", "pmu"});
    REQUIRE(automatic.counters);
    CHECK(automatic.counters->source == "pmu");
  } else {
    // No PMU and no fallback wanted: no counts, and the profile says why.
    CHECK_FALSE(pmu_only.counters);
    CHECK(says(pmu_only, "pmu: perf_event_open(PERF_TYPE_HARDWARE) failed"));
    CHECK(sources(pmu_only) == std::vector<std::string>{"objdump", "compiler remarks"});
    // "auto" falls back to cachegrind.
    REQUIRE(automatic.counters);
    CHECK(automatic.counters->source == "cachegrind");
    CHECK(says(automatic, "pmu: perf_event_open(PERF_TYPE_HARDWARE) failed"));
  }
}

}  // namespace
}  // namespace kestrel
