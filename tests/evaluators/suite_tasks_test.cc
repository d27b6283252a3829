// The suite's tasks (configs/tasks with a `level`): each task's reference,
// its seeds (the default knobs and a seeded sample of other combinations)
// and its expert baseline pass the real CPU evaluator's full check, the
// sandboxed runner and the hidden-shape check included. Making the evaluator
// builds and runs the reference and checks the baseline (a failing baseline
// refuses it); Evaluate is what `kestrel eval` does.
//
// KESTREL_SUITE_SAMPLES=N checks N non-default combinations of each seed's
// knobs (default 1; "all" for every combination); KESTREL_SUITE_TASKS=a,b
// checks only those tasks. The sample is drawn from a fixed seed, so a
// failure reproduces.

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest.h>

#include "core/candidate.h"
#include "core/scalar_type.h"
#include "scale_task.h"

namespace kestrel {
namespace {

// Every combination of the knobs' values, the default (all first values) first.
std::vector<KnobValues> AllCombinations(const std::vector<KnobSpec>& knobs) {
  std::vector<KnobValues> combos = {KnobValues{}};
  for (const KnobSpec& knob : knobs) {
    std::vector<KnobValues> next;
    for (const KnobValues& partial : combos) {
      for (const std::string& value : knob.values) {
        KnobValues more = partial;
        more[knob.name] = value;
        next.push_back(std::move(more));
      }
    }
    combos = std::move(next);
  }
  return combos;
}

// The default and `samples` others (all of them when samples < 0), drawn
// without replacement from a generator seeded by the seed file's name.
std::vector<KnobValues> ChosenCombinations(const std::vector<KnobSpec>& knobs, int samples, const std::string& name) {
  std::vector<KnobValues> all = AllCombinations(knobs);
  if (samples < 0 || static_cast<std::size_t>(samples) + 1 >= all.size()) return all;
  std::vector<KnobValues> others(all.begin() + 1, all.end());
  std::mt19937_64 generator(std::hash<std::string>{}(name) ^ 20u);
  std::shuffle(others.begin(), others.end(), generator);
  std::vector<KnobValues> chosen = {all.front()};
  chosen.insert(chosen.end(), others.begin(), others.begin() + samples);
  return chosen;
}

int SamplesWanted() {
  const char* text = std::getenv("KESTREL_SUITE_SAMPLES");
  if (text == nullptr || *text == '\0') return 1;
  if (std::string(text) == "all") return -1;
  return std::max(0, std::atoi(text));
}

std::set<std::string> TasksWanted() {
  std::set<std::string> names;
  const char* text = std::getenv("KESTREL_SUITE_TASKS");
  if (text == nullptr) return names;
  std::stringstream list(text);
  for (std::string name; std::getline(list, name, ',');) {
    if (!name.empty()) names.insert(name);
  }
  return names;
}

std::vector<Task> SuiteTasks() {
  auto tasks = LoadTasks({testing::TasksDir()});
  REQUIRE_MESSAGE(tasks.has_value(), testing::ErrorOf(tasks));
  const std::set<std::string> wanted = TasksWanted();
  std::vector<Task> suite;
  for (Task& task : *tasks) {
    if (task.level > 0 && task.language == "cpp" && (wanted.empty() || wanted.count(task.name) > 0)) suite.push_back(std::move(task));
  }
  return suite;
}

bool UsesHalfFloats(const Task& task) {
  return std::any_of(task.args.begin(), task.args.end(),
                     [](const ArgSpec& arg) { return arg.type == ScalarType::kF16 || arg.type == ScalarType::kBF16; });
}

// The full check (every shape, three input sets, the sandbox, hidden
// shapes) with little timing; a generous wall clock, since the slowest
// references take tens of milliseconds a call on a loaded two-core machine.
CpuEvaluatorOptions SuiteOptions() {
  CpuEvaluatorOptions options = testing::FastOptions();
  options.measure.min_time_s = 0.01;
  options.measure.min_samples = 3;
  options.measure.run_timeout_s = 60;
  return options;
}

// What one task's check found wrong ("" when everything passed), and how
// many kernels it evaluated.
struct TaskVerdict {
  std::string failures;
  int evaluated = 0;
};

TaskVerdict CheckTask(const Task& task, int samples) {
  TaskVerdict verdict;
  std::ostringstream failures;
  auto evaluator = MakeCpuEvaluator(task, SuiteOptions());
  if (!evaluator.has_value()) {
    return {task.name + ": the evaluator refuses the task (reference or baseline): " + evaluator.error().message() + "\n", 0};
  }
  auto judge = [&](const std::string& what, const std::string& source, const KnobValues& knobs) {
    const Measurement m = (*evaluator)->Evaluate(Candidate{source, knobs, (*evaluator)->Toolchain(), (*evaluator)->Flags()});
    ++verdict.evaluated;
    if (m.outcome != Outcome::kMeasured) {
      failures << task.name << ": " << what << (knobs.empty() ? "" : " " + ToString(knobs)) << " is "
               << ToString(m.outcome) << ": " << m.reason << "\n";
    }
  };
  judge(task.reference.name, task.reference.text, {});
  for (const SourceFile& seed : task.seeds) {
    auto knobs = ParseKnobs(seed.text);
    if (!knobs.has_value()) {
      failures << task.name << ": " << seed.name << "'s knobs: " << knobs.error().message() << "\n";
      continue;
    }
    if (knobs->empty()) failures << task.name << ": " << seed.name << " declares no knobs\n";
    for (const KnobValues& combo : ChosenCombinations(*knobs, samples, task.name + "/" + seed.name)) {
      judge(seed.name, seed.text, combo);
    }
  }
  verdict.failures = failures.str();
  return verdict;
}

TEST_SUITE("suite tasks") {
  TEST_CASE("the suite has at least 20 single operators, 10 fused chains, 5 blocks and 6 tasks in f16 or bf16") {
    std::map<int, int> per_level;
    int half = 0;
    for (const Task& task : SuiteTasks()) {
      ++per_level[task.level];
      half += UsesHalfFloats(task) ? 1 : 0;
      CHECK_MESSAGE(!task.shape_ranges.empty(), task.name << " has no shape_ranges for the hidden-shape check");
      CHECK_MESSAGE(!task.check_shapes.empty(), task.name << " has no check_shapes");
    }
    if (!TasksWanted().empty()) return;  // a chosen few: the counts are the whole suite's
    CHECK(per_level[1] >= 20);
    CHECK(per_level[2] >= 10);
    CHECK(per_level[3] >= 5);
    CHECK(half >= 6);
  }

  TEST_CASE("every suite task's reference, seeds and baseline pass the evaluator's checks") {
    const std::vector<Task> tasks = SuiteTasks();
    REQUIRE_FALSE(tasks.empty());
    const int samples = SamplesWanted();
    // Two tasks at a time: each evaluation is a compiler and a runner process,
    // and a task's kernels are evaluated one after another.
    std::mutex mutex;
    std::size_t next = 0;
    std::map<std::string, TaskVerdict> verdicts;
    auto work = [&] {
      for (;;) {
        std::size_t index;
        {
          std::lock_guard<std::mutex> lock(mutex);
          if (next == tasks.size()) return;
          index = next++;
        }
        TaskVerdict verdict = CheckTask(tasks[index], samples);
        std::lock_guard<std::mutex> lock(mutex);
        verdicts[tasks[index].name] = std::move(verdict);
      }
    };
    std::thread helper(work);
    work();
    helper.join();
    int evaluated = 0;
    for (const auto& [name, verdict] : verdicts) {
      CHECK_MESSAGE(verdict.failures.empty(), verdict.failures);
      evaluated += verdict.evaluated;
    }
    CHECK(verdicts.size() == tasks.size());
    MESSAGE(tasks.size() << " suite tasks, " << evaluated << " kernels evaluated, "
                         << (samples < 0 ? std::string("every") : std::to_string(samples))
                         << " non-default knob combination(s) per seed");
  }
}

}  // namespace
}  // namespace kestrel
