// RunTiming and RunEvaluate: see modes.h. They set up what TimeShapes (and
// CheckOutputs) need: the prepared inputs, the shared regions, one core
// for the supervisor and its workers, and a worker per kernel; a session
// (modes.h) lends them the regions and the reference's worker it kept.

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
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

// A reference's worker that ended a job is not kept for the next.
Status Finish(JobResult& result, const std::optional<Stop>& stop, const std::string& phase,
              std::initializer_list<WorkerProcess*> workers, Session* session) {
  for (WorkerProcess* worker : workers) {
    if (worker != nullptr) ForwardLog(*worker);
  }
  if (stop) {
    ReportVerdict(result, stop->verdict, stop->role);
    result.verdict_phase = phase;
    if (session != nullptr && stop->role != "candidate") session->Reset();
  }
  return {};
}

// A kept reference's worker inherited this process's RLIMIT_CPU, which its
// CPU time spends job after job: it is replaced once it has used a quarter
// (as a kept supervisor retires itself: runner/serve.h), so that no job
// meets the limit on the reference's account. Unknown: replaced.
bool Spent(const WorkerProcess& worker) {
  rlimit cpu{};
  if (::getrlimit(RLIMIT_CPU, &cpu) != 0 || cpu.rlim_cur == RLIM_INFINITY) return false;
  const double used = worker.CpuSeconds();
  return used < 0 || used > static_cast<double>(cpu.rlim_cur) / 4;
}

// What the reference's worker and the shared regions were made for: a
// session keeps them while this stays the same (the reference's library
// by its file's identity, not only its path).
std::string SessionKey(const Job& job, const TimingSizes& sizes) {
  struct stat file {};
  (void)::stat(job.libraries[1].c_str(), &file);
  std::string key = job.worker.string() + '\n' + job.libraries[1].string() + '\n';
  for (long long part : {static_cast<long long>(file.st_dev), static_cast<long long>(file.st_ino),
                         static_cast<long long>(file.st_size), static_cast<long long>(file.st_mtim.tv_sec),
                         static_cast<long long>(file.st_mtim.tv_nsec)}) {
    key += std::to_string(part) + ' ';
  }
  key += '\n' + job.bwrap + '\n' + (job.seccomp ? "seccomp " : "") + (job.allow_threads ? "threads " : "") +
         std::to_string(job.timeout_s) + '\n';
  for (const std::string& variable : job.worker_env) key += variable + '\n';
  return key + std::to_string(sizes.inputs) + ' ' + std::to_string(sizes.arena);
}

// The job as TimeShapes sees it: the leading timed shapes.
Job TimedView(const Job& job) {
  Job timed = job;
  if (job.timed_shapes > 0) timed.shapes.resize(static_cast<std::size_t>(job.timed_shapes));
  return timed;
}

// The regions and the reference's worker: a session's (kept, or made and
// then kept), else this job's own.
struct Kept {
  std::optional<SharedRegion> inputs, reference_arena, candidate_arena;
  std::unique_ptr<WorkerProcess> reference;
};

struct Workers {
  WorkerProcess* reference = nullptr;  // Kept's or the session's
  std::unique_ptr<WorkerProcess> candidate;
};

// Starts the reference's worker (unless `reference` already holds one)
// and the candidate's. `stop` is set when one of them failed to start.
Result<Workers> StartWorkers(const Job& job, SharedRegion& candidate_arena, SharedRegion& reference_arena,
                             SharedRegion& inputs, std::unique_ptr<WorkerProcess>& reference_worker,
                             std::optional<Stop>& stop) {
  const Deadline deadline = JobDeadline(job);
  Workers workers;
  std::optional<WorkerVerdict> failed;
  if (!reference_worker) {
    auto reference =
        WorkerProcess::Start(WorkerFor(job, job.libraries[1], "reference"), reference_arena, inputs, deadline, failed);
    if (!reference) return Fail(reference.error());
    reference_worker = std::move(*reference);
  }
  workers.reference = reference_worker.get();
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

// Runs both steps of `job` (checks only when `check`), with the regions
// and the reference's worker a session kept when it has them.
Status Run(const Job& job, JobResult& result, bool check, Session* session) {
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
  const std::uint64_t candidate_bytes = std::max(sizes.arena, check ? CheckArenaBytes(job) : 0);
  Kept own;
  bool reused = false;
  if (session != nullptr) {
    const std::string key = SessionKey(job, sizes);
    if (session->key == key && session->reference && !session->reference->Inspect() &&
        !Spent(*session->reference)) {
      reused = true;
    } else {
      session->Reset();
      session->key = key;
    }
  }
  // Where this job's regions and the reference's worker live: the
  // session's, or `own` (gone at the end of the job).
  std::optional<SharedRegion>& inputs = session ? session->inputs : own.inputs;
  std::optional<SharedRegion>& reference_arena = session ? session->reference_arena : own.reference_arena;
  std::optional<SharedRegion>& candidate_arena = session ? session->candidate_arena : own.candidate_arena;
  std::unique_ptr<WorkerProcess>& reference_worker = session ? session->reference : own.reference;
  if (!reused) {
    auto made_inputs = SharedRegion::Create("kestrel-inputs", sizes.inputs, true);
    if (!made_inputs) return Fail(made_inputs.error());
    inputs.emplace(std::move(*made_inputs));
    auto made_reference = SharedRegion::Create("kestrel-arena", sizes.arena, false);
    if (!made_reference) return Fail(made_reference.error());
    reference_arena.emplace(std::move(*made_reference));
  }
  bool cleared = false;
  if (candidate_arena && candidate_arena->size() == candidate_bytes) {
    // The last candidate's worker is gone (reaped with its namespace); what
    // it left in the arena must not reach the next.
    if (candidate_arena->size() > 0) std::memset(candidate_arena->data(), 0, candidate_arena->size());
    cleared = true;
  } else {
    candidate_arena.reset();
    auto made = SharedRegion::Create("kestrel-arena", candidate_bytes, false);
    if (!made) return Fail(made.error());
    candidate_arena.emplace(std::move(*made));
  }

  const double regions_ms = since(phase);
  std::optional<Stop> stop;
  phase = Clock::now();
  auto workers = StartWorkers(job, *candidate_arena, *reference_arena, *inputs, reference_worker, stop);
  const double start_ms = since(phase);
  if (!workers) return Fail(workers.error());
  WorkerProcess* reference = workers->reference;
  WorkerProcess* candidate = workers->candidate.get();
  if (stop) return Finish(result, stop, check ? "checking outputs" : "", {reference, candidate}, session);

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
    if (*checked) return Finish(result, *checked, "checking outputs", {reference, candidate}, session);
    std::printf("supervisor: inputs %s %.1f ms, shared regions (%.0f MB) %s in %.1f ms, %s in %.1f ms, "
                "outputs checked in %.1f ms\n",
                job.inputs_file.empty() ? "drawn in" : "mapped in", inputs_ms,
                static_cast<double>(inputs->size() + candidate_arena->size() + reference_arena->size()) / (1 << 20),
                reused    ? "kept from the last job, the candidate's arena cleared"
                : cleared ? "made, the candidate's arena kept and cleared"
                          : "made",
                regions_ms, reused ? "the reference's worker kept, the candidate's started" : "workers started",
                start_ms, since(phase));
    if (summary.wrong) return Finish(result, std::nullopt, "", {reference, candidate}, session);
  }
  auto timing = TimeShapes(timed, *prepared,
                           {*candidate, *candidate_arena, *reference, *reference_arena, *inputs,
                            session != nullptr ? &session->reference_per_call : nullptr},
                           result);
  if (!timing) return Fail(timing.error());
  return Finish(result, *timing, check ? "timing" : "", {reference, candidate}, session);
}

}  // namespace

Status RunTiming(const Job& job, JobResult& result, Session* session) { return Run(job, result, false, session); }

Status RunEvaluate(const Job& job, JobResult& result, Session* session) { return Run(job, result, true, session); }

}  // namespace kestrel::runner
