// RunOutputs: see modes.h. The kernel runs in its worker; this process (the
// supervisor) fills its inputs, poisons its outputs, keeps the pristine
// inputs and judges what each call left.

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "evaluators/runner/call_layout.h"
#include "evaluators/runner/inputs.h"
#include "evaluators/runner/modes.h"
#include "evaluators/runner/shared_region.h"
#include "evaluators/runner/supervisor.h"

namespace kestrel::runner {
namespace {

bool Everything(ArgRole) { return true; }

using Bytes = std::vector<std::byte>;

bool Same(const std::byte* data, const Bytes& copy) {
  return copy.empty() || std::memcmp(data, copy.data(), copy.size()) == 0;
}

}  // namespace

Status RunOutputs(const Job& job, JobResult& result) {
  if (job.libraries.size() != 1) return Fail(Error::InvalidArgument("outputs mode takes one library"));
  const Deadline deadline = JobDeadline(job);
  auto out = OutputFile::Create(job.output_file);
  if (!out) return Fail(out.error());
  std::uint64_t arena_bytes = 64;
  for (const auto& shape : job.shapes) arena_bytes = std::max(arena_bytes, Place(shape, Everything).bytes);
  auto arena = SharedRegion::Create("kestrel-arena", arena_bytes, false);
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

  std::byte* base = arena->data();
  for (int s = 0; s < static_cast<int>(job.shapes.size()); ++s) {
    const JobShape& shape = job.shapes[s];
    const Placement place = Place(shape, Everything);
    const auto args = static_cast<std::uint32_t>(shape.args.size());
    if (auto bad = (*worker)->Layout(place.offsets, args, deadline)) return finish(bad);
    for (int set = 0; set < job.input_sets; ++set) {
      // The pristine inputs stay here, where the kernel cannot reach them.
      std::vector<Bytes> pristine(shape.args.size());
      for (std::size_t a = 0; a < shape.args.size(); ++a) {
        if (!IsInputRole(shape.args[a].role)) continue;
        pristine[a].resize(ArgBytes(shape.args[a]));
        FillInput(shape.args[a], {job.seed, s, set}, static_cast<int>(a), pristine[a].data());
      }
      const auto prepare = [&](int variant) {
        for (std::size_t a = 0; a < shape.args.size(); ++a) {
          if (!pristine[a].empty()) std::memcpy(base + place.offsets[a], pristine[a].data(), pristine[a].size());
        }
        WriteValues(shape, base, place);
        PoisonOutputs(shape, base, place, variant);
      };
      SetCheck check{s, set, {}, false};
      double seconds = 0;
      prepare(0);
      if (auto bad = (*worker)->Run(0, 1, deadline, &seconds)) return finish(bad);
      std::vector<Bytes> first(shape.args.size());
      for (std::size_t a = 0; a < shape.args.size(); ++a) {
        const JobArg& arg = shape.args[a];
        const std::byte* data = base + place.offsets[a];
        if (arg.role == ArgRole::kInput && !Same(data, pristine[a])) check.inputs_modified.push_back(arg.name);
        if (IsResultRole(arg.role)) first[a].assign(data, data + ArgBytes(arg));
      }
      // Second call: the same inputs, outputs poisoned differently.
      prepare(1);
      if (auto bad = (*worker)->Run(0, 1, deadline, &seconds)) return finish(bad);
      for (std::size_t a = 0; a < shape.args.size(); ++a) {
        if (IsResultRole(shape.args[a].role) && !Same(base + place.offsets[a], first[a])) check.nondeterministic = true;
      }
      for (std::size_t a = 0; a < shape.args.size(); ++a) {
        if (!IsResultRole(shape.args[a].role)) continue;
        if (auto written = out->Write(first[a].data(), first[a].size()); !written) return written;
      }
      result.checks.push_back(std::move(check));
    }
  }
  if (auto bad = (*worker)->Inspect()) return finish(bad);
  if (auto closed = out->Close(); !closed) return closed;
  return finish(std::nullopt);
}

}  // namespace kestrel::runner
