#include "evaluators/judge.h"

#include "evaluators/removed_at_end.h"

#include <algorithm>
#include <cmath>

#include "evaluators/compare.h"
#include "evaluators/verdict.h"

namespace kestrel {
namespace {

constexpr std::size_t kMaxMismatches = 10;

bool ValidSamples(const std::vector<double>& samples) {
  return !samples.empty() &&
         std::all_of(samples.begin(), samples.end(), [](double s) { return std::isfinite(s) && s > 0; });
}

// A comparison that could not be made: the runner's files broke the
// protocol (kCorruption), or the evaluator could not read them.
Measurement NotCompared(const Error& error, const std::string& log) {
  const bool protocol = error.code() == ErrorCode::kCorruption;
  return Verdict(Outcome::kRejected, (protocol ? "runner protocol violation: " : "evaluator error: ") + error.message(),
                 log);
}

}  // namespace

std::string CheckOrder(const JobResult& result, std::size_t shapes, int sets) {
  if (result.checks.size() != shapes * static_cast<std::size_t>(sets)) return "wrong number of checks";
  for (std::size_t i = 0; i < result.checks.size(); ++i) {
    const auto& check = result.checks[i];
    if (check.shape_index != static_cast<int>(i) / sets || check.input_set != static_cast<int>(i) % sets) {
      return "checks out of order";
    }
  }
  return "";
}

Job TimedLayout(const Job& time) {
  Job layout = time;
  layout.mode = "outputs";
  layout.input_sets = time.buffer_sets;
  return layout;
}

Status JudgeReferenceRun(const JudgeContext& context, const Job& job, const JobResult& result,
                         const std::filesystem::path& reference_outputs) {
  const std::string task = "task " + context.task->name;
  const auto& shapes = *context.all_shapes;
  if (auto order = CheckOrder(result, shapes.size(), context.input_sets); !order.empty()) {
    return Fail(Error::Internal(task + ": the reference's runner: " + order));
  }
  for (const auto& check : result.checks) {
    const std::string where = " (shape " + shapes[check.shape_index].label + ")";
    if (!check.inputs_modified.empty()) {
      return Fail(Error::InvalidArgument(task + ": the reference modifies its input " + check.inputs_modified.front() +
                                         where));
    }
    if (check.nondeterministic) {
      return Fail(Error::InvalidArgument(task + ": the reference is non-deterministic" + where));
    }
  }
  if (auto varies = CheckReferenceVaries(job, reference_outputs, context.task->tolerance,
                                         static_cast<int>(context.timed_shapes->size()));
      !varies) {
    return Fail(varies.error().code() == ErrorCode::kInvalidArgument ? varies.error().WithContext(task)
                                                                     : varies.error());
  }
  return {};
}

Result<std::filesystem::path> PrepareTimedOutputs(const JudgeContext& context, const Job& outputs, const Job& time,
                                                  const std::filesystem::path& reference_outputs,
                                                  const std::filesystem::path& file) {
  // Every timed call starts from the pristine inouts (the supervisor
  // restores them), so inouts are re-checked like outputs.
  if (auto sliced = SliceOutputs(outputs, reference_outputs, TimedLayout(time), file); !sliced) {
    return Fail(sliced.error());
  }
  return file;
}

std::optional<Measurement> JudgeOutputs(const JudgeContext& context, const Job& outputs, const JobResult& result,
                                        const std::filesystem::path& reference_outputs, const std::string& log) {
  const auto& shapes = *context.all_shapes;
  if (auto order = CheckOrder(result, shapes.size(), context.input_sets); !order.empty()) {
    return Verdict(Outcome::kRejected, "runner protocol violation: " + order, log);
  }
  for (const auto& check : result.checks) {
    const std::string where =
        " (shape " + shapes[check.shape_index].label + ", input set " + std::to_string(check.input_set) + ")";
    if (!check.inputs_modified.empty()) {
      return Verdict(Outcome::kWrong, "modified its input " + check.inputs_modified.front() + where, log);
    }
    if (check.nondeterministic) {
      return Verdict(Outcome::kWrong, "non-deterministic: two calls on the same inputs differ" + where, log);
    }
  }
  // Compared by an evaluate job's runner in memory, else here from the files.
  Result<OutputComparison> comparison =
      result.outputs_compared
          ? Result<OutputComparison>(*result.outputs_compared)
          : CompareOutputs(outputs, reference_outputs, outputs.output_file, context.task->tolerance, kMaxMismatches);
  if (!comparison) return NotCompared(comparison.error(), log);
  if (comparison->ok) return std::nullopt;
  Measurement wrong = Verdict(Outcome::kWrong, comparison->reason, "");
  wrong.log = comparison->details + "worst mismatches (shape, set, element: expected, actual):\n";
  for (const auto& m : comparison->worst) {
    wrong.log += "  " + shapes[m.shape_index].label + ", set " + std::to_string(m.input_set) + ", " + m.arg + "[" +
                 std::to_string(m.index) + "]: " + Number(m.expected) + ", " + Number(m.actual) + "\n";
  }
  wrong.log += log;
  wrong.mismatches = std::move(comparison->worst);
  return wrong;
}

std::optional<Measurement> JudgeTimedOutputs(const JudgeContext& context, const Job& time, const JobResult& result,
                                             const std::filesystem::path& reference_timed_outputs,
                                             const std::string& log) {
  Result<OutputComparison> comparison =
      result.timed_compared ? Result<OutputComparison>(*result.timed_compared)
                            : CompareOutputs(TimedLayout(time), reference_timed_outputs, time.timed_output_file,
                                             context.task->tolerance, kMaxMismatches);
  if (!comparison) return NotCompared(comparison.error(), log);
  if (comparison->ok) return std::nullopt;
  Measurement wrong = Verdict(Outcome::kWrong, "outputs produced while timing differ: " + comparison->reason,
                              comparison->details + log);
  wrong.mismatches = std::move(comparison->worst);
  return wrong;
}

Measurement JudgeTimings(const JudgeContext& context, JobResult& timed, const std::string& clock,
                         const std::string& flushed, const std::string& log) {
  const auto& shapes = *context.timed_shapes;
  if (timed.timings.size() != shapes.size()) {
    return Verdict(Outcome::kRejected, "runner protocol violation: wrong number of timed shapes", log);
  }
  Measurement measured = Verdict(Outcome::kMeasured, "", "");
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    auto& samples = timed.timings[s];
    if (!ValidSamples(samples.candidate) || !ValidSamples(samples.reference)) {
      return Verdict(Outcome::kRejected, "runner protocol violation: invalid timing samples", log);
    }
    ShapeTiming timing;
    timing.shape = context.task->shapes[s];
    timing.candidate = Summarize(samples.candidate);
    timing.reference = Summarize(samples.reference);
    timing.candidate_seconds = std::move(samples.candidate);
    timing.reference_seconds = std::move(samples.reference);
    timing.candidate_calls_per_sample = samples.candidate_batch;
    timing.reference_calls_per_sample = samples.reference_batch;
    timing.speedup = timing.reference.median / timing.candidate.median;
    if (const auto flops = context.task->Flops(timing.shape)) timing.gflops = *flops / timing.candidate.median / 1e9;
    if (const auto bytes = context.task->Bytes(timing.shape)) timing.gbps = *bytes / timing.candidate.median / 1e9;
    // Every candidate sample was preceded by a flush (the runner flushes
    // once per round, and a round may time the reference alone).
    const bool each_flushed = samples.flushes > 0 && samples.flushes >= timing.candidate.count;
    measured.log += "shape " + shapes[s].label + ": candidate " + Number(timing.candidate.median * 1e6) +
                    " us, reference " + Number(timing.reference.median * 1e6) + " us (" + clock +
                    std::to_string(timing.candidate.count) + "/" + std::to_string(timing.reference.count) +
                    " samples" + (each_flushed ? ", " + flushed + " flushed before each" : "") + "), speedup " +
                    Number(timing.speedup) + "\n";
    measured.shapes.push_back(std::move(timing));
  }
  measured.speedup = GeomeanSpeedup(measured.shapes);
  return measured;
}

namespace {

// What follows the checks: the outputs produced while timed re-checked,
// then the samples.
Judged JudgeTimedRun(const JudgeContext& context, const Job& time, const ReferenceOutputs& reference, JobRun& timed,
                     std::string log, const std::string& clock, const std::string& flushed) {
  if (!time.timed_output_file.empty() || timed.result.timed_compared) {
    if (auto failed = JudgeTimedOutputs(context, time, timed.result, reference.timed_outputs, log)) return {*failed, ""};
  }
  Measurement measured = JudgeTimings(context, timed.result, clock, flushed, log);
  if (measured.outcome != Outcome::kMeasured) return {std::move(measured), ""};
  return {std::move(measured), std::move(log)};
}

}  // namespace

Judged CheckAndTimeInOneJob(const JudgeContext& context, const RunJobFunction& run_job, const Job& outputs, Job time,
                            const std::filesystem::path& dir, const ReferenceOutputs& reference,
                            const std::string& clock, const std::string& flushed) {
  RemovedAtEnd cleanup{dir};
  Job checks = outputs;
  checks.output_file.clear();  // compared in the runner's memory
  time.timed_output_file.clear();
  Job job = time;
  job.mode = "evaluate";
  job.shapes = checks.shapes;
  job.input_sets = checks.input_sets;
  job.timed_shapes = static_cast<int>(time.shapes.size());
  job.output_file = checks.output_file;
  job.inputs_file = checks.inputs_file;
  job.prepare_inputs = false;
  job.reference_output_file = reference.outputs;
  job.reference_timed_output_file = reference.timed_outputs;
  JobRun run = run_job(job, dir, "evaluating");
  const std::string log = run.log.empty() ? "" : "runner output (evaluating):\n" + run.log;
  // Checks complete: a wrong kernel is reported wrong, even when it then
  // crashed or hung while timed.
  const bool checked = !run.result.checks.empty() &&
                       CheckOrder(run.result, checks.shapes.size(), checks.input_sets).empty();
  if (checked || !run.failure) {
    if (auto failed = JudgeOutputs(context, checks, run.result, reference.outputs, log)) return {*failed, ""};
  }
  if (run.failure) return {*run.failure, ""};
  if (!reference.timed_outputs.empty() && !run.result.timed_compared) {
    return {Verdict(Outcome::kRejected, "runner protocol violation: the outputs produced while timing were not compared",
                    log),
            ""};
  }
  return JudgeTimedRun(context, time, reference, run, log, clock, flushed);
}

Judged CheckAndTime(const JudgeContext& context, const RunJobFunction& run_job, Job outputs, Job time,
                    const std::filesystem::path& dir, const ReferenceOutputs& reference, const std::string& clock,
                    const std::string& flushed) {
  RemovedAtEnd cleanup{dir};
  // 1. Correctness, in a process of its own: every shape, every input set.
  outputs.output_file = dir / "outputs.bin";
  JobRun checked = run_job(outputs, dir, "checking outputs");
  if (checked.failure) return {*checked.failure, ""};
  std::string log = checked.log.empty() ? "" : "runner output (checking outputs):\n" + checked.log;
  if (auto failed = JudgeOutputs(context, outputs, checked.result, reference.outputs, log)) return {*failed, ""};
  std::error_code ignored;
  std::filesystem::remove(outputs.output_file, ignored);  // it may be large

  // 2. Timing: candidate and reference interleaved in one process.
  if (!reference.timed_outputs.empty()) time.timed_output_file = dir / "timed_outputs.bin";
  JobRun timed = run_job(time, dir, "timing");
  if (timed.failure) return {*timed.failure, ""};
  if (!timed.log.empty()) log += "runner output (timing):\n" + timed.log;
  // 3. What the kernel computed once it was timed must still be right.
  return JudgeTimedRun(context, time, reference, timed, std::move(log), clock, flushed);
}

}  // namespace kestrel
