// RunTiming and RunEvaluate: see modes.h. They set up what TimeShapes (and
// CheckOutputs) need: the prepared inputs, the shared regions, one core
// for the supervisor and its workers, and a worker per kernel.

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "evaluators/runner/mapped_file.h"
#include "evaluators/runner/modes.h"
#include "evaluators/runner/supervisor.h"

namespace kestrel::runner {
namespace {

// One core for the supervisor and both workers (they inherit it): each
// call then runs where the supervisor prepared its memory, for the
// candidate and the reference alike, instead of wherever the scheduler
// happens to wake each worker. A kernel allowed threads gets every core.
void PinToOneCore(const Job& job) {
  if (job.allow_threads) return;
  const int cpu = ::sched_getcpu();
  if (cpu < 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  (void)::sched_setaffinity(0, sizeof one, &one);
}

Status Finish(JobResult& result, const std::optional<Stop>& stop, const std::string& phase,
              std::initializer_list<WorkerProcess*> workers) {
  for (WorkerProcess* worker : workers) {
    if (worker != nullptr) ForwardLog(*worker);
  }
  if (stop) {
    ReportVerdict(result, stop->verdict, stop->role);
    result.verdict_phase = phase;
  }
  return {};
}

// The job as TimeShapes sees it: the leading timed shapes.
Job TimedView(const Job& job) {
  Job timed = job;
  if (job.timed_shapes > 0) timed.shapes.resize(static_cast<std::size_t>(job.timed_shapes));
  return timed;
}

struct Workers {
  std::unique_ptr<WorkerProcess> reference;
  std::unique_ptr<WorkerProcess> candidate;
};

// Starts the reference's worker and the candidate's. `stop` is set when
// one of them failed to start.
Result<Workers> StartWorkers(const Job& job, SharedRegion& candidate_arena, SharedRegion& reference_arena,
                             SharedRegion& inputs, std::optional<Stop>& stop) {
  const Deadline deadline = JobDeadline(job);
  Workers workers;
  std::optional<WorkerVerdict> failed;
  auto reference =
      WorkerProcess::Start(WorkerFor(job, job.libraries[1], "reference"), reference_arena, inputs, deadline, failed);
  if (!reference) return Fail(reference.error());
  workers.reference = std::move(*reference);
  if (failed) {
    stop = Stop{*failed, "reference"};
    return workers;
  }
  auto candidate =
      WorkerProcess::Start(WorkerFor(job, job.libraries[0], "candidate"), candidate_arena, inputs, deadline, failed);
  if (!candidate) return Fail(candidate.error());
  workers.candidate = std::move(*candidate);
  if (failed) stop = Stop{*failed, "candidate"};
  return workers;
}

// Runs both steps of `job` (checks only when `check`).
Status Run(const Job& job, JobResult& result, bool check) {
  if (job.libraries.size() != 2) return Fail(Error::InvalidArgument(job.mode + " mode takes two libraries"));
  const Job timed = check ? TimedView(job) : job;
  // Time mode draws only the sets it times when nothing was prepared.
  Job drawn = job;
  if (!check && job.inputs_file.empty()) drawn.input_sets = std::min(job.input_sets, job.buffer_sets);
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point from) { return std::chrono::duration<double>(Clock::now() - from).count() * 1e3; };
  auto phase = Clock::now();
  auto prepared = PreparedInputs::For(drawn);
  const double inputs_ms = since(phase);
  if (!prepared) return Fail(prepared.error());
  PinToOneCore(job);
  phase = Clock::now();
  const TimingSizes sizes = TimingSizesOf(timed);
  auto inputs = SharedRegion::Create("kestrel-inputs", sizes.inputs, true);
  if (!inputs) return Fail(inputs.error());
  auto candidate_arena =
      SharedRegion::Create("kestrel-arena", std::max(sizes.arena, check ? CheckArenaBytes(job) : 0), false);
  if (!candidate_arena) return Fail(candidate_arena.error());
  auto reference_arena = SharedRegion::Create("kestrel-arena", sizes.arena, false);
  if (!reference_arena) return Fail(reference_arena.error());

  const double regions_ms = since(phase);
  std::optional<Stop> stop;
  phase = Clock::now();
  auto workers = StartWorkers(job, *candidate_arena, *reference_arena, *inputs, stop);
  const double start_ms = since(phase);
  if (!workers) return Fail(workers.error());
  WorkerProcess* reference = workers->reference.get();
  WorkerProcess* candidate = workers->candidate.get();
  if (stop) return Finish(result, stop, check ? "checking outputs" : "", {reference, candidate});

  if (check) {
    std::uint64_t reference_bytes = 0;
    if (!job.reference_output_file.empty()) {
      const auto segments = OutputSegments(job);
      if (!segments.empty()) reference_bytes = segments.back().offset + segments.back().bytes;
    }
    auto reference_outputs = MappedFile::Open(job.reference_output_file, reference_bytes);
    if (!reference_outputs) return Fail(reference_outputs.error());
    CheckSummary summary;
    phase = Clock::now();
    auto checked = CheckOutputs(job, *prepared, *candidate, *candidate_arena, reference_outputs->data(), result, summary);
    if (!checked) return Fail(checked.error());
    if (*checked) return Finish(result, *checked, "checking outputs", {reference, candidate});
    std::printf("supervisor: inputs %s %.1f ms, shared regions (%.0f MB) made in %.1f ms, workers started in %.1f ms, "
                "outputs checked in %.1f ms\n",
                job.inputs_file.empty() ? "drawn in" : "mapped in", inputs_ms,
                static_cast<double>(inputs->size() + candidate_arena->size() + reference_arena->size()) / (1 << 20),
                regions_ms, start_ms, since(phase));
    if (summary.wrong) return Finish(result, std::nullopt, "", {reference, candidate});
  }
  auto timing = TimeShapes(timed, *prepared, {*candidate, *candidate_arena, *reference, *reference_arena, *inputs}, result);
  if (!timing) return Fail(timing.error());
  return Finish(result, *timing, check ? "timing" : "", {reference, candidate});
}

}  // namespace

Status RunTiming(const Job& job, JobResult& result) { return Run(job, result, false); }

Status RunEvaluate(const Job& job, JobResult& result) { return Run(job, result, true); }

}  // namespace kestrel::runner
