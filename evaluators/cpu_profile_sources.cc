// CpuEvaluator: the profile sources of a built candidate besides its
// measurement (docs/PROFILES.md). See cpu_evaluator.h.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/simulated_shape.h"
#include "evaluators/code_fingerprint.h"
#include "evaluators/compiler_remarks.h"
#include "evaluators/cpu_evaluator.h"
#include "evaluators/instruction_mix.h"
#include "evaluators/judge.h"
#include "evaluators/profile_sources.h"
#include "evaluators/removed_at_end.h"
#include "evaluators/task_layout.h"

namespace kestrel {
namespace {

// Calls of the kernel in the profile's outputs job of one shape and one
// input set (Job::second_call off): one, on fresh buffers, as a timed call
// on a slot it has not used. A second call would double valgrind's work.
constexpr double kCachegrindCalls = 1;

// The last level cachegrind simulates at most (bytes; 16-way, 64-byte lines).
constexpr std::int64_t kSimulatedLastLevel = 32LL * 1024 * 1024;

// Counted calls of the PMU's job: enough for about this much of the
// kernel's time (its measured time per call), within these bounds.
constexpr double kCountedSeconds = 0.05;
constexpr int kMinCountedCalls = 3;
constexpr int kMaxCountedCalls = 1000;
constexpr int kCountedCallsUnmeasured = 10;

double BufferElements(const JobShape& shape) {
  double elements = 0;
  for (const JobArg& arg : shape.args) {
    if (arg.role == ArgRole::kInput || arg.role == ArgRole::kOutput || arg.role == ArgRole::kInOut) {
      elements += static_cast<double>(arg.count);
    }
  }
  return elements;
}

}  // namespace

Job CpuEvaluator::ProfileJob(const BuildResult& build, const JobShape& shape) const {
  Job job = MakeJob("outputs", {build.library}, false);
  job.shapes = {shape};
  job.input_sets = 1;
  job.second_call = false;
  job.inputs_file.clear();  // drawn in memory: the run's file holds every shape
  return job;
}

void CpuEvaluator::AddProfileSources(const Candidate& candidate, const BuildResult& build, Profile& profile,
                                     const Measurement* measurement) {
  // Each source timed: the profile says what it cost and where that went.
  const auto timed = [&profile](const char* source, const auto& take) {
    const auto start = std::chrono::steady_clock::now();
    take();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    profile.costs.push_back({source, seconds});
  };
  try {
    timed("objdump", [&] {
      if (auto mix = InstructionMixOf(build.library, IsaVectorBits(host_.isa))) {
        profile.mix = std::move(*mix);
      } else {
        profile.unavailable.push_back("objdump: " + mix.error().message());
      }
    });
    timed("compiler remarks", [&] {
      // Written by the build itself where the compiler can; else one more compile.
      if (build_remarks_) {
        if (auto written = ReadRemarkFile(build.library.parent_path() / kRemarksFile, toolchain_)) {
          profile.remarks = std::move(*written);
          return;
        }
      }
      const CompileRequest request = CompileRequestFor(candidate, build.library.parent_path());
      if (auto remarks = CompileWithRemarks(request, toolchain_)) {
        profile.remarks = std::move(*remarks);
      } else {
        profile.unavailable.push_back("compiler remarks: " + remarks.error().message());
      }
    });
    // Hardware counters where the PMU is, counted by the supervisor on the
    // kernel's worker; cachegrind simulates them elsewhere.
    // evaluator.profile_counters picks one source ("auto": the PMU first).
    const std::string& wanted = options_.profile_counters;
    bool counted = false;
    if (wanted == "cachegrind") {
      // Chosen: deterministic counts, at a valgrind run's cost.
    } else if (const std::string pmu = PmuUnavailableReason(); !pmu.empty()) {
      profile.unavailable.push_back(pmu);
    } else if (options_.threads > 1) {
      // A counter follows the threads a kernel starts, but adds their
      // counts only when they exit; a thread pool's never do.
      profile.unavailable.push_back("pmu: counts one thread, and this run's kernels may start threads (threads > 1)");
    } else {
      timed("pmu", [&] {
        if (auto counters = CountHardware(build, measurement)) {
          profile.counters = std::move(*counters);
          counted = true;
        } else {
          profile.unavailable.push_back("pmu: " + counters.error().message());
        }
      });
    }
    if (counted || wanted == "pmu") {
      // The PMU's counts stand (valgrind's would cost more), or were the only ones wanted.
    } else if (profile.mix && profile.mix->vector_bits >= 512) {
      // Valgrind (3.19 and later alike) has no AVX-512: the kernel would die of SIGILL.
      profile.unavailable.push_back("cachegrind: valgrind cannot run AVX-512 code (this kernel uses zmm registers)");
    } else if (const auto valgrind = CachegrindValgrind()) {
      timed("cachegrind", [&] {
        if (auto counters = SimulateCaches(build, *valgrind)) {
          profile.counters = std::move(*counters);
        } else {
          profile.unavailable.push_back("cachegrind: " + counters.error().message());
        }
      });
    } else {
      profile.unavailable.push_back("cachegrind: valgrind is not installed (Debian: apt-get install valgrind)");
    }
  } catch (const std::exception& e) {
    profile.unavailable.push_back(std::string("profile sources: ") + e.what());
  }
}

Result<CounterProfile> CpuEvaluator::SimulateCaches(const BuildResult& build, const std::string& valgrind) {
  if (timed_shapes_.empty() || timed_shapes_.size() != task_.shapes.size()) {
    return Fail(Error::NotFound("the task has no timed shape"));
  }
  std::size_t smallest = 0;  // by buffer elements
  for (std::size_t s = 1; s < timed_shapes_.size(); ++s) {
    if (BufferElements(timed_shapes_[s]) < BufferElements(timed_shapes_[smallest])) smallest = s;
  }
  // Cut down to about a tenth of a second of simulation (core/simulated_shape.h).
  const Shape simulated = SimulatedShape(task_, task_.shapes[smallest]);
  auto laid_out = LayoutShape(task_, simulated);
  if (!laid_out) return Fail(laid_out.error());
  const double elements = OutputElements(task_, simulated);
  if (elements <= 0) return Fail(Error::NotFound("the task has no output buffer to count per element"));
  const std::optional<std::string> objdump = ObjdumpText(build.library);
  if (!objdump) return Fail(Error::NotFound("objdump cannot list the kernel's functions"));
  std::set<std::string> functions;
  for (const auto& [name, body] : KernelFunctions(*objdump)) functions.insert(name);

  const std::filesystem::path dir = NewEvalDir();
  const RemovedAtEnd remove{dir};  // the outputs written there may be large
  std::filesystem::create_directories(dir / "reference");
  std::filesystem::create_directories(dir / "candidate");
  // The reference's outputs on the same shape and inputs (both jobs draw
  // them from the run's seed), natively: the simulated call's outputs are
  // judged against them, so that a kernel that works less under valgrind
  // (it can tell: RUNNING_ON_VALGRIND) gets no counts, not flattering ones.
  Job reference = ProfileJob(reference_build_, *laid_out);
  reference.output_file = dir / "reference" / "outputs.bin";
  if (const JobRun ran = RunJob(reference, dir / "reference", "running the reference on the simulated shape", false);
      ran.failure) {
    return Fail(Error::Io("the reference on the simulated shape: " + ran.failure->reason));
  }
  // Each output in its own job's folder, as the hidden-shape check keeps them.
  Job job = ProfileJob(build, *laid_out);
  job.output_file = dir / "candidate" / "outputs.bin";
  // Valgrind does not implement the seccomp system call (the worker could
  // not install its allowlist), and the allowlist would stop valgrind's own
  // calls: valgrind and the kernel it runs are under kestrel-confine's
  // denylist instead, inside the rest of the sandbox (docs/PROFILES.md,
  // "The sandbox of the cachegrind run").
  job.seccomp = false;
  auto confine = DefaultConfinePath();
  if (!confine) return Fail(Error::NotFound("cachegrind: " + confine.error().message()));
  job.wrapper_confine = *confine;
  job.worker_wrapper = {valgrind, "-q", "--tool=cachegrind", "--cache-sim=yes", "--demangle=no", "--vgdb=no",
                        "--cachegrind-out-file=cachegrind.out"};
  if (host_.l3_bytes > kSimulatedLastLevel) {
    // Valgrind sizes its last level as the host reports its L3 (a VM may
    // report hundreds of MB) and sets the whole of it up before the first
    // instruction: 0.2 s for 512 MB. The simulated working set (a few MB)
    // fits either way, so a smaller one counts the same misses.
    job.worker_wrapper.push_back("--LL=" + std::to_string(kSimulatedLastLevel) + ",16,64");
  }
  job.worker_wrapper.push_back("--");
  job.wrapper_file = "cachegrind.out";
  job.wrapper_output = dir / "cachegrind.out";
  const JobRun run = RunJob(job, dir / "candidate", "profiling (cachegrind)", false);
  bool read = false;
  std::stringstream text;
  if (std::ifstream in(job.wrapper_output, std::ios::binary); in && !run.failure) {
    text << in.rdbuf();
    read = true;
  }
  if (run.failure) {
    std::string reason = run.failure->reason;
    if (reason.find("SIGILL") != std::string::npos) reason += " (valgrind cannot run some of its instructions: AVX-512?)";
    // The worker's last words (valgrind's among them) say why.
    const std::string& log = run.failure->log.empty() ? run.log : run.failure->log;
    if (!log.empty()) reason += "; log: " + log.substr(log.size() > 600 ? log.size() - 600 : 0);
    return Fail(Error::Io(reason));
  }
  if (!read) return Fail(Error::Io("valgrind left no output file" + (run.log.empty() ? "" : ":\n" + run.log)));
  const std::vector<JobShape> shapes = {*laid_out};
  if (const auto wrong = JudgeOutputs({&task_, &shapes, &shapes, 1}, job, run.result, reference.output_file, run.log)) {
    return Fail(Error::Io("the simulated call's outputs are not the reference's (" +
                          std::string(ToString(wrong->outcome)) + ": " + wrong->reason +
                          "): its counts are not the work the kernel does"));
  }
  auto totals = ParseCachegrind(text.str(), functions);
  if (!totals) return Fail(totals.error());
  return CachegrindCounters(*totals, kCachegrindCalls, elements, laid_out->label);
}

Result<std::vector<EventCount>> CpuEvaluator::CountEvents(const BuildResult& build,
                                                        const std::vector<std::string>& events, int shape,
                                                        int calls) {
  if (shape < 0 || shape >= static_cast<int>(timed_shapes_.size())) {
    return Fail(Error::InvalidArgument("no timed shape " + std::to_string(shape)));
  }
  if (events.empty() || calls < 1) return Fail(Error::InvalidArgument("nothing to count"));
  const std::filesystem::path dir = NewEvalDir();
  Job job = ProfileJob(build, timed_shapes_[static_cast<std::size_t>(shape)]);
  job.output_file.clear();  // the counts are the point, not the outputs
  job.count_events = events;
  job.counted_calls = calls;
  const JobRun run = RunJob(job, dir, "counting events", false);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  if (run.failure) return Fail(Error::Io(run.failure->reason));
  if (!run.result.counts_error.empty()) return Fail(Error::Unsupported(run.result.counts_error));
  if (run.result.counts.size() != events.size()) {
    return Fail(Error::Io("the runner counted " + std::to_string(run.result.counts.size()) + " of " +
                          std::to_string(events.size()) + " events"));
  }
  return run.result.counts;
}

Result<CounterProfile> CpuEvaluator::CountHardware(const BuildResult& build, const Measurement* measurement) {
  if (timed_shapes_.empty() || timed_shapes_.size() != task_.shapes.size()) {
    return Fail(Error::NotFound("the task has no timed shape"));
  }
  // The largest timed shape, as the roofline's: where the counts say most
  // about the memory hierarchy (they cost no more than its calls).
  std::size_t largest = 0;
  for (std::size_t s = 1; s < timed_shapes_.size(); ++s) {
    if (OutputElements(task_, task_.shapes[s]) > OutputElements(task_, task_.shapes[largest])) largest = s;
  }
  const double elements = OutputElements(task_, task_.shapes[largest]);
  if (elements <= 0) return Fail(Error::NotFound("the task has no output buffer to count per element"));
  int calls = kCountedCallsUnmeasured;
  if (measurement != nullptr) {
    for (const ShapeTiming& timing : measurement->shapes) {
      if (ShapeLabel(task_, timing.shape) != timed_shapes_[largest].label || timing.candidate.median <= 0) continue;
      const double wanted = std::ceil(kCountedSeconds / timing.candidate.median);
      calls = static_cast<int>(std::clamp(wanted, double{kMinCountedCalls}, double{kMaxCountedCalls}));
    }
  }
  auto counts = CountEvents(build, PmuEvents(), static_cast<int>(largest), calls);
  if (!counts) return Fail(counts.error());
  return PmuCounters(*counts, calls, elements, timed_shapes_[largest].label);
}

}  // namespace kestrel
