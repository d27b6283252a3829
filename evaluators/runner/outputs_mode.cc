// CheckOutputs and RunOutputs: see modes.h. The kernel runs in its worker;
// this process (the supervisor) copies in its pristine inputs, poisons its
// outputs, keeps the pristine inputs where the kernel cannot reach them and
// judges what each call left.

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "evaluators/runner/call_layout.h"
#include "evaluators/runner/modes.h"
#include "evaluators/runner/supervisor.h"
#include "evaluators/compare.h"
#include "evaluators/event_counters.h"

namespace kestrel::runner {
namespace {

bool Everything(ArgRole) { return true; }

// A counting job's counted calls (Job::count_events): the last shape's last
// input set, as CheckOutputs left it in the arena, called again and again
// with the events counted on the worker around each call. Counters that
// cannot be opened or read leave counts_error, not a verdict.
std::optional<WorkerVerdict> CountCalls(const Job& job, WorkerProcess& worker, Deadline deadline,
                                        JobResult& result) {
  if (job.counted_calls <= 0 || job.count_events.empty()) return std::nullopt;
  if (worker.pid() <= 0) {
    result.counts_error = "the worker's process id is unknown";
    return std::nullopt;
  }
  auto counters = EventCounters::Open(worker.pid(), job.count_events);
  if (!counters) {
    result.counts_error = counters.error().message();
    return std::nullopt;
  }
  for (int call = 0; call < job.counted_calls; ++call) {
    if (auto on = counters->Enable(); !on) {
      result.counts_error = on.error().message();
      return std::nullopt;
    }
    double seconds = 0;
    std::optional<WorkerVerdict> bad = worker.Run(0, 1, deadline, &seconds);
    const Status off = counters->Disable();
    if (bad) return bad;
    if (!off) {
      result.counts_error = off.error().message();
      return std::nullopt;
    }
  }
  if (auto bad = worker.Inspect()) return bad;
  if (auto counts = counters->Read()) {
    result.counts = std::move(*counts);
  } else {
    result.counts_error = counts.error().message();
  }
  return std::nullopt;
}


}  // namespace

std::uint64_t CheckArenaBytes(const Job& job) {
  std::uint64_t bytes = 64;
  for (const auto& shape : job.shapes) bytes = std::max(bytes, Place(shape, Everything).bytes);
  return bytes;
}

Step CheckOutputs(const Job& job, const PreparedInputs& inputs, WorkerProcess& worker, SharedRegion& arena,
                  const std::byte* reference, JobResult& result, CheckSummary& summary) {
  const Deadline deadline = JobDeadline(job);
  std::optional<OutputFile> out;
  if (!job.output_file.empty()) {
    auto created = OutputFile::Create(job.output_file);
    if (!created) return Fail(created.error());
    out.emplace(std::move(*created));
  }
  std::optional<OutputComparer> comparer;
  if (reference != nullptr) comparer.emplace(job, Tolerance{job.rtol, job.atol});
  const auto stop = [](const std::optional<WorkerVerdict>& verdict) -> Step { return Stop{*verdict, "candidate"}; };
  const std::vector<OutputSegment> segments = OutputSegments(job);
  std::size_t next_segment = 0;
  std::byte* base = arena.data();
  std::vector<std::vector<std::byte>> first;  // per argument: the first call's results (reused: fresh pages cost)
  for (int s = 0; s < static_cast<int>(job.shapes.size()); ++s) {
    const JobShape& shape = job.shapes[s];
    const Placement place = Place(shape, Everything);
    const auto args = static_cast<std::uint32_t>(shape.args.size());
    if (auto bad = worker.Layout(place.offsets, args, deadline)) return stop(bad);
    first.resize(std::max(first.size(), shape.args.size()));
    for (int set = 0; set < job.input_sets; ++set) {
      // The pristine inputs stay in the prepared inputs, where the kernel
      // cannot reach them.
      const auto prepare = [&](int variant, bool inputs_too) {
        for (std::size_t a = 0; a < shape.args.size(); ++a) {
          const ArgRole role = shape.args[a].role;
          if (role == ArgRole::kInOut || (role == ArgRole::kInput && inputs_too)) {
            std::memcpy(base + place.offsets[a], inputs.Arg(s, set, static_cast<int>(a)), ArgBytes(shape.args[a]));
          }
        }
        WriteValues(shape, base, place);
        PoisonOutputs(shape, base, place, variant);
      };
      SetCheck check{s, set, {}, false};
      double seconds = 0;
      prepare(0, true);
      if (auto bad = worker.Run(0, 1, deadline, &seconds)) return stop(bad);
      for (std::size_t a = 0; a < shape.args.size(); ++a) {
        const JobArg& arg = shape.args[a];
        const std::byte* data = base + place.offsets[a];
        if (arg.role == ArgRole::kInput &&
            std::memcmp(data, inputs.Arg(s, set, static_cast<int>(a)), ArgBytes(arg)) != 0) {
          check.inputs_modified.push_back(arg.name);
        }
        if (!IsResultRole(arg.role)) continue;
        first[a].assign(data, data + ArgBytes(arg));
        if (out) {
          if (auto written = out->Write(data, ArgBytes(arg)); !written) return Fail(written.error());
        }
        const OutputSegment& segment = segments[next_segment++];
        if (comparer) comparer->Add(segment, reference + segment.offset, data);
      }
      // Second call: the same buffers and inputs (restored if the first
      // changed them), the outputs poisoned differently.
      if (job.second_call) {
        prepare(1, !check.inputs_modified.empty());
        if (auto bad = worker.Run(0, 1, deadline, &seconds)) return stop(bad);
        for (std::size_t a = 0; a < shape.args.size(); ++a) {
          if (IsResultRole(shape.args[a].role) &&
              std::memcmp(base + place.offsets[a], first[a].data(), first[a].size()) != 0) {
            check.nondeterministic = true;
          }
        }
      }
      if (!check.inputs_modified.empty() || check.nondeterministic) summary.wrong = true;
      result.checks.push_back(std::move(check));
    }
  }
  if (auto bad = worker.Inspect()) return stop(bad);
  if (out) {
    if (auto closed = out->Close(); !closed) return Fail(closed.error());
  }
  if (comparer) {
    result.outputs_compared = comparer->Finish();
    if (!result.outputs_compared->ok) summary.wrong = true;
  }
  return std::optional<Stop>();
}

Status RunOutputs(const Job& job, JobResult& result) {
  if (job.libraries.size() != 1) return Fail(Error::InvalidArgument("outputs mode takes one library"));
  const Deadline deadline = JobDeadline(job);
  auto inputs = PreparedInputs::For(job);
  if (!inputs) return Fail(inputs.error());
  auto arena = SharedRegion::Create("kestrel-arena", CheckArenaBytes(job), false);
  if (!arena) return Fail(arena.error());
  auto no_inputs = SharedRegion::Create("kestrel-inputs", 0, true);
  if (!no_inputs) return Fail(no_inputs.error());

  std::optional<WorkerVerdict> failed;
  auto worker = WorkerProcess::Start(WorkerFor(job, job.libraries[0], "candidate"), *arena, *no_inputs, deadline, failed);
  if (!worker) return Fail(worker.error());
  const auto finish = [&](const std::optional<WorkerVerdict>& verdict) -> Status {
    ForwardLog(**worker);
    if (verdict) ReportVerdict(result, *verdict, "candidate");
    return {};
  };
  if (failed) return finish(failed);
  CheckSummary summary;
  auto checked = CheckOutputs(job, *inputs, **worker, *arena, nullptr, result, summary);
  if (!checked) return Fail(checked.error());
  if (*checked) return finish((*checked)->verdict);
  return finish(CountCalls(job, **worker, deadline, result));
}

}  // namespace kestrel::runner
