// RunTiming: see modes.h. Candidate and reference each run in a worker of
// their own; this process (the supervisor) owns the clock, prepares every
// call (outputs poisoned, dims and inouts restored) outside the timed
// interval, and watches the candidate's CPU time while it should be idle.
// Every call slot has inputs of its own, and before each round a few of
// their elements are drawn afresh, so that no two timed calls see the same
// inputs (a kernel cannot answer from a memo of earlier calls). In each
// round the reference runs a window of the candidate's slots chosen at
// random after the candidate ran, and randomly chosen calls in that window
// are re-checked against the reference's on the same inputs.

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "evaluators/runner/call_layout.h"
#include "evaluators/runner/inputs.h"
#include "evaluators/runner/modes.h"
#include "evaluators/runner/shared_region.h"
#include "evaluators/runner/supervisor.h"
#include "evaluators/worker/protocol.h"

namespace kestrel::runner {
namespace {

constexpr double kWarmupSeconds = 0.05;
constexpr double kMinSampleSeconds = 1e-3;  // well above the control channel's round trip
constexpr double kMaxSampleSeconds = 0.05;
constexpr std::size_t kMaxSamples = 100000;
constexpr std::uint64_t kSlotBudgetBytes = 64ULL << 20;  // call slots per kernel, beyond the input sets
constexpr std::uint32_t kMaxSlots = 4096;
constexpr double kRecheckShare = 0.25;       // timed calls whose outputs are re-checked
constexpr int kPerturbedElements = 8;        // per input and call slot, drawn afresh before each round
constexpr double kIdleCpuSlackSeconds = 0.02;
constexpr double kIdleCpuShare = 0.05;

using Bytes = std::vector<std::byte>;
using Clock = std::chrono::steady_clock;

bool OnlyInputs(ArgRole role) { return role == ArgRole::kInput; }
bool NotInputs(ArgRole role) { return role != ArgRole::kInput; }

// A buffer larger than the last-level cache, written over before a sample
// so that the sample starts with cold caches. Empty: no flushing.
class CacheFlusher {
 public:
  explicit CacheFlusher(std::int64_t bytes) : lines_(static_cast<std::size_t>(std::max<std::int64_t>(bytes, 0)), 0) {}
  bool enabled() const { return !lines_.empty(); }
  void Flush() {
    for (std::size_t i = 0; i < lines_.size(); i += 64) lines_[i] = static_cast<unsigned char>(lines_[i] + 1);
    sink_ = sink_ + lines_[lines_.size() / 2];
  }

 private:
  std::vector<unsigned char> lines_;
  volatile unsigned sink_ = 0;
};

// The sizes every shape needs, so that the regions are made once.
struct Sizes {
  std::uint64_t inputs = 0;  // the input sets of the largest shape
  std::uint64_t arena = 64;  // the call slots of the largest shape
};

// Call slots of a shape: as many as fit the budget (inputs and outputs),
// at least one per input set.
std::uint32_t SlotsFor(const Placement& inputs, const Placement& slot, int sets) {
  const auto fit =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(kSlotBudgetBytes / (inputs.bytes + slot.bytes), kMaxSlots));
  return std::max(static_cast<std::uint32_t>(sets), fit);
}

Sizes SizesOf(const Job& job) {
  Sizes sizes;
  for (const auto& shape : job.shapes) {
    const Placement inputs = Place(shape, OnlyInputs);
    const Placement slot = Place(shape, NotInputs);
    const std::uint64_t slots = SlotsFor(inputs, slot, job.buffer_sets);
    sizes.inputs = std::max(sizes.inputs, inputs.bytes * slots);
    sizes.arena = std::max(sizes.arena, slot.bytes * slots);
  }
  return sizes;
}

// One shape as laid out for both workers: each call slot's inputs in the
// shared read-only region, its outputs in each worker's own arena. Slot j
// starts from input set j % sets.
struct ShapeLayout {
  const JobShape* shape = nullptr;
  int sets = 1;
  Placement inputs;  // one slot's inputs; slot j's start at j * inputs.bytes
  Placement slot;    // one slot's outputs, inouts, dims and scalars; slot j's at j * slot.bytes
  std::uint32_t slots = 1;
  std::vector<std::vector<Bytes>> inouts;  // per set, per argument: the pristine inouts

  std::vector<std::uint64_t> Places() const {
    std::vector<std::uint64_t> places;
    for (std::uint32_t j = 0; j < slots; ++j) {
      for (std::size_t a = 0; a < shape->args.size(); ++a) {
        places.push_back(shape->args[a].role == ArgRole::kInput
                             ? worker::kInputsRegion | (j * inputs.bytes + inputs.offsets[a])
                             : j * slot.bytes + slot.offsets[a]);
      }
    }
    return places;
  }
};

// One kernel's side of the timing: its worker, its arena, its first
// outputs per input set, its samples.
class Timed {
 public:
  Timed(WorkerProcess& worker, SharedRegion& arena, std::string role)
      : worker_(worker), arena_(arena), role_(std::move(role)) {}

  WorkerProcess& worker() { return worker_; }
  const std::string& role() const { return role_; }

  std::optional<WorkerVerdict> Begin(const ShapeLayout& layout, Deadline deadline) {
    layout_ = &layout;
    samples_.clear();
    total_ = 0;
    batch_ = 1;
    return worker_.Layout(layout.Places(), static_cast<std::uint32_t>(layout.shape->args.size()), deadline);
  }

  // Poison, inouts, dims and scalars of slot j, outside any timed interval.
  void Prepare(std::uint32_t j) {
    const ShapeLayout& l = *layout_;
    std::byte* base = arena_.data() + static_cast<std::uint64_t>(j) * l.slot.bytes;
    PoisonOutputs(*l.shape, base, l.slot, 0);
    WriteValues(*l.shape, base, l.slot);
    const auto& inouts = l.inouts[j % l.sets];
    for (std::size_t a = 0; a < l.shape->args.size(); ++a) {
      if (!inouts.empty() && l.shape->args[a].role == ArgRole::kInOut) {
        std::memcpy(base + l.slot.offsets[a], inouts[a].data(), inouts[a].size());
      }
    }
  }

  // What slot j produced (outputs and inouts, in argument order).
  Bytes Results(std::uint32_t j) const {
    const ShapeLayout& l = *layout_;
    const std::byte* base = arena_.data() + static_cast<std::uint64_t>(j) * l.slot.bytes;
    Bytes bytes;
    for (std::size_t a = 0; a < l.shape->args.size(); ++a) {
      if (!IsResultRole(l.shape->args[a].role)) continue;
      const std::byte* data = base + l.slot.offsets[a];
      bytes.insert(bytes.end(), data, data + ArgBytes(l.shape->args[a]));
    }
    return bytes;
  }

  const std::byte* Slot(std::uint32_t j) const { return arena_.data() + static_cast<std::uint64_t>(j) * layout_->slot.bytes; }

  const std::vector<Bytes>& first() const { return first_; }

  // Batches of growing size until kWarmupSeconds have passed; then the
  // seconds per call. The first batch calls slots 0 .. sets - 1 on their
  // input sets as drawn (nothing perturbed yet): their outputs are the
  // first outputs, which the engine compares with the reference's
  // (job.timed_output_file).
  std::optional<WorkerVerdict> WarmUp(Deadline deadline) {
    double spent = 0;
    double per_call = 0;
    auto calls = static_cast<std::uint32_t>(layout_->sets);
    first_.clear();
    do {
      for (std::uint32_t j = 0; j < calls; ++j) Prepare(j);
      double seconds = 0;
      if (auto bad = Run(0, calls, deadline, &seconds)) return bad;
      if (first_.empty()) {
        for (int k = 0; k < layout_->sets; ++k) first_.push_back(Results(static_cast<std::uint32_t>(k)));
      }
      spent += seconds;
      per_call = seconds / calls;
      calls = std::min(calls * 2, layout_->slots);
    } while (spent < kWarmupSeconds);
    per_call_ = std::max(per_call, 1e-9);
    return std::nullopt;
  }
  double per_call() const { return per_call_; }
  // The calls of a sample of about `seconds`.
  std::uint32_t CallsFor(double seconds) const {
    return static_cast<std::uint32_t>(std::clamp<double>(std::ceil(seconds / per_call_), 1, layout_->slots));
  }

  // One timed sample of `calls` calls on slots first .. first + calls - 1.
  std::optional<WorkerVerdict> Sample(std::uint32_t first, std::uint32_t calls, Deadline deadline) {
    batch_ = calls;
    const auto prepare_start = Clock::now();
    for (std::uint32_t j = first; j < first + batch_; ++j) Prepare(j);
    prepare_s_ += std::chrono::duration<double>(Clock::now() - prepare_start).count();
    double seconds = 0;
    if (auto bad = Run(first, batch_, deadline, &seconds)) return bad;
    total_ += seconds;
    samples_.push_back(seconds / batch_);
    return std::nullopt;
  }

  bool Done(const Job& job) const {
    return (total_ >= job.min_time_s && static_cast<int>(samples_.size()) >= job.min_samples) ||
           samples_.size() >= kMaxSamples;
  }
  std::vector<double>& samples() { return samples_; }
  std::uint32_t batch() const { return batch_; }
  double idle_cpu() const { return idle_cpu_; }
  double idle_wall() const { return idle_wall_; }
  double busy_cpu() const { return busy_cpu_; }
  double busy_wall() const { return busy_wall_; }
  double prepare_s() const { return prepare_s_; }

 private:
  // A run, with the worker's CPU time before and after: what it used
  // between runs is idle time it should not have used.
  std::optional<WorkerVerdict> Run(std::uint32_t first, std::uint32_t calls, Deadline deadline, double* seconds) {
    const auto now = Clock::now();
    const double cpu_before = worker_.CpuSeconds();
    if (last_cpu_ >= 0 && cpu_before >= 0) {
      idle_cpu_ += cpu_before - last_cpu_;
      idle_wall_ += std::chrono::duration<double>(now - last_end_).count();
    }
    if (auto bad = worker_.Run(first, calls, deadline, seconds)) return bad;
    last_end_ = Clock::now();
    last_cpu_ = worker_.CpuSeconds();
    if (cpu_before >= 0 && last_cpu_ >= 0) {
      busy_cpu_ += last_cpu_ - cpu_before;
      busy_wall_ += *seconds;
    }
    return std::nullopt;
  }

  WorkerProcess& worker_;
  SharedRegion& arena_;
  std::string role_;
  const ShapeLayout* layout_ = nullptr;
  std::vector<Bytes> first_;
  std::uint32_t batch_ = 1;
  double total_ = 0;
  std::vector<double> samples_;
  double last_cpu_ = -1;
  Clock::time_point last_end_;
  double idle_cpu_ = 0, idle_wall_ = 0, busy_cpu_ = 0, busy_wall_ = 0;
  double prepare_s_ = 0;  // the supervisor's own work before samples
  double per_call_ = 1e-9;
};

ShapeLayout LayOut(const Job& job, int s, SharedRegion& inputs) {
  const JobShape& shape = job.shapes[s];
  ShapeLayout layout;
  layout.shape = &shape;
  layout.sets = job.buffer_sets;
  layout.inputs = Place(shape, OnlyInputs);
  layout.slot = Place(shape, NotInputs);
  layout.slots = SlotsFor(layout.inputs, layout.slot, layout.sets);
  layout.inouts.resize(static_cast<std::size_t>(layout.sets));
  for (int k = 0; k < layout.sets; ++k) {
    std::byte* set = inputs.data() + static_cast<std::uint64_t>(k) * layout.inputs.bytes;
    for (std::size_t a = 0; a < shape.args.size(); ++a) {
      const JobArg& arg = shape.args[a];
      if (arg.role == ArgRole::kInput) {
        FillInput(arg, {job.seed, s, k}, static_cast<int>(a), set + layout.inputs.offsets[a]);
      } else if (arg.role == ArgRole::kInOut) {
        auto& inouts = layout.inouts[static_cast<std::size_t>(k)];
        inouts.resize(shape.args.size());
        inouts[a].resize(ArgBytes(arg));
        FillInput(arg, {job.seed, s, k}, static_cast<int>(a), inouts[a].data());
      }
    }
  }
  // The other slots start as copies of their input set.
  for (std::uint32_t j = static_cast<std::uint32_t>(layout.sets); j < layout.slots; ++j) {
    std::memcpy(inputs.data() + j * layout.inputs.bytes,
                inputs.data() + (j % static_cast<std::uint32_t>(layout.sets)) * layout.inputs.bytes, layout.inputs.bytes);
  }
  return layout;
}

// A few elements of every input of slots 0 .. calls - 1 drawn afresh from
// the argument's distribution, by a generator the kernel cannot see.
void Perturb(const ShapeLayout& layout, SharedRegion& inputs, std::uint32_t calls, std::mt19937_64& random) {
  const JobShape& shape = *layout.shape;
  for (std::uint32_t j = 0; j < calls; ++j) {
    std::byte* slot = inputs.data() + j * layout.inputs.bytes;
    for (std::size_t a = 0; a < shape.args.size(); ++a) {
      const JobArg& arg = shape.args[a];
      if (arg.role != ArgRole::kInput || arg.count <= 0) continue;
      std::uniform_int_distribution<std::int64_t> where(0, arg.count - 1);
      for (int e = 0; e < kPerturbedElements; ++e) {
        double value = 0;
        switch (arg.init.dist) {
          case InitSpec::Dist::kNormal: value = std::normal_distribution<double>(arg.init.mean, arg.init.std)(random); break;
          case InitSpec::Dist::kUniform: value = std::uniform_real_distribution<double>(arg.init.lo, arg.init.hi)(random); break;
          case InitSpec::Dist::kInt:
            value = static_cast<double>(std::uniform_int_distribution<std::int64_t>(
                static_cast<std::int64_t>(std::ceil(arg.init.lo)), static_cast<std::int64_t>(std::floor(arg.init.hi)))(random));
            break;
        }
        StoreValue(arg.type, value, slot + layout.inputs.offsets[a], where(random));
      }
    }
  }
}

// The first element of `count` where the candidate's `c` is not within
// |c - r| <= atol + rtol * |r| of the reference's `r` (where r is not
// finite: the same value), or -1.
template <class T>
std::int64_t FirstMismatch(const std::byte* candidate, const std::byte* reference, std::int64_t count, const Job& job) {
  if (std::memcmp(candidate, reference, static_cast<std::size_t>(count) * sizeof(T)) == 0) return -1;
  const auto* c = reinterpret_cast<const T*>(candidate);
  const auto* r = reinterpret_cast<const T*>(reference);
  for (std::int64_t i = 0; i < count; ++i) {
    const double cv = static_cast<double>(c[i]);
    const double rv = static_cast<double>(r[i]);
    if (std::fabs(cv - rv) <= job.atol + job.rtol * std::fabs(rv)) continue;  // false for NaN
    if (std::isfinite(rv) || (std::isnan(rv) ? !std::isnan(cv) : cv != rv)) return i;
  }
  return -1;
}

// How the candidate's results in `candidate` differ from the reference's in
// `reference` (one slot each, the same inputs): "" when every element is
// within tolerance, else the first element that is not ("y[12]").
std::string Difference(const ShapeLayout& layout, const std::byte* candidate, const std::byte* reference,
                       const Job& job) {
  const JobShape& shape = *layout.shape;
  for (std::size_t a = 0; a < shape.args.size(); ++a) {
    const JobArg& arg = shape.args[a];
    if (!IsResultRole(arg.role)) continue;
    const std::byte* c = candidate + layout.slot.offsets[a];
    const std::byte* r = reference + layout.slot.offsets[a];
    std::int64_t at = -1;
    switch (arg.type) {
      case ScalarType::kF32: at = FirstMismatch<float>(c, r, arg.count, job); break;
      case ScalarType::kF64: at = FirstMismatch<double>(c, r, arg.count, job); break;
      case ScalarType::kI8: at = FirstMismatch<std::int8_t>(c, r, arg.count, job); break;
      case ScalarType::kU8: at = FirstMismatch<std::uint8_t>(c, r, arg.count, job); break;
      case ScalarType::kI32: at = FirstMismatch<std::int32_t>(c, r, arg.count, job); break;
      case ScalarType::kI64: at = FirstMismatch<std::int64_t>(c, r, arg.count, job); break;
    }
    if (at >= 0) return arg.name + "[" + std::to_string(at) + "]";
  }
  return "";
}

std::string Milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f ms", seconds * 1e3);
  return text;
}

}  // namespace

Status RunTiming(const Job& job, JobResult& result) {
  if (job.libraries.size() != 2) return Fail(Error::InvalidArgument("time mode takes two libraries"));
  const Deadline deadline = JobDeadline(job);
  std::optional<OutputFile> timed_out;
  if (!job.timed_output_file.empty()) {
    auto created = OutputFile::Create(job.timed_output_file);
    if (!created) return Fail(created.error());
    timed_out.emplace(std::move(*created));
  }
  // One core for the supervisor and both workers (they inherit it): each
  // call then runs where the supervisor prepared its memory, for the
  // candidate and the reference alike, instead of wherever the scheduler
  // happens to wake each worker. A kernel allowed threads gets every core.
  if (!job.allow_threads) {
    const int cpu = ::sched_getcpu();
    cpu_set_t one;
    CPU_ZERO(&one);
    if (cpu >= 0) {
      CPU_SET(cpu, &one);
      (void)::sched_setaffinity(0, sizeof one, &one);
    }
  }
  const Sizes sizes = SizesOf(job);
  auto inputs = SharedRegion::Create("kestrel-inputs", sizes.inputs, true);
  if (!inputs) return Fail(inputs.error());
  auto candidate_arena = SharedRegion::Create("kestrel-arena", sizes.arena, false);
  if (!candidate_arena) return Fail(candidate_arena.error());
  auto reference_arena = SharedRegion::Create("kestrel-arena", sizes.arena, false);
  if (!reference_arena) return Fail(reference_arena.error());

  std::optional<WorkerVerdict> failed;
  auto reference_worker =
      WorkerProcess::Start(WorkerFor(job, job.libraries[1], "reference"), *reference_arena, *inputs, deadline, failed);
  if (!reference_worker) return Fail(reference_worker.error());
  if (failed) {
    ForwardLog(**reference_worker);
    ReportVerdict(result, *failed, "reference");
    return {};
  }
  auto candidate_worker =
      WorkerProcess::Start(WorkerFor(job, job.libraries[0], "candidate"), *candidate_arena, *inputs, deadline, failed);
  if (!candidate_worker) return Fail(candidate_worker.error());
  Timed cand(**candidate_worker, *candidate_arena, "candidate");
  Timed ref(**reference_worker, *reference_arena, "reference");
  const auto finish = [&](const std::optional<WorkerVerdict>& verdict, const std::string& role) -> Status {
    ForwardLog(ref.worker());
    ForwardLog(cand.worker());
    if (verdict) ReportVerdict(result, *verdict, role);
    return {};
  };
  if (failed) return finish(failed, "candidate");

  std::random_device entropy;
  std::mt19937_64 recheck((static_cast<std::uint64_t>(entropy()) << 32) ^ entropy());
  // Per sample of the slower kernel.
  const double sample_seconds =
      std::clamp(job.min_time_s / (4.0 * job.min_samples), kMinSampleSeconds, kMaxSampleSeconds);
  CacheFlusher flusher(job.flush_bytes);

  const auto job_start = Clock::now();
  double layout_s = 0, warmup_s = 0, perturb_s = 0, recheck_s = 0;
  const auto since = [](Clock::time_point from) { return std::chrono::duration<double>(Clock::now() - from).count(); };
  for (int s = 0; s < static_cast<int>(job.shapes.size()); ++s) {
    auto phase = Clock::now();
    const ShapeLayout layout = LayOut(job, s, *inputs);
    layout_s += since(phase);
    for (Timed* timed : {&ref, &cand}) {
      if (auto bad = timed->Begin(layout, deadline)) return finish(bad, timed->role());
    }
    phase = Clock::now();
    for (Timed* timed : {&ref, &cand}) {
      if (auto bad = timed->WarmUp(deadline)) return finish(bad, timed->role());
    }
    warmup_s += since(phase);
    // Each kernel's sample lasts about `sample_seconds`. The candidate runs
    // slots 0 .. n - 1; then the reference runs a window of them chosen at
    // random (the candidate cannot know which), or more slots when it needs
    // more calls, so that some of the candidate's calls can be re-checked
    // against the reference's on the same inputs.
    const std::uint32_t cand_calls = cand.CallsFor(sample_seconds);
    const std::uint32_t ref_calls = ref.CallsFor(sample_seconds);
    // Interleaved: a change of machine load hits both kernels alike.
    std::int64_t flushes = 0;
    while (!cand.Done(job) || !ref.Done(job)) {
      const std::uint32_t window =
          cand_calls > ref_calls ? std::uniform_int_distribution<std::uint32_t>(0, cand_calls - ref_calls)(recheck) : 0;
      auto prepare = Clock::now();
      Perturb(layout, *inputs, std::max(cand_calls, window + ref_calls), recheck);
      perturb_s += since(prepare);
      if (flusher.enabled()) {
        flusher.Flush();
        ++flushes;
      }
      if (auto bad = cand.Sample(0, cand_calls, deadline)) return finish(bad, "candidate");
      if (flusher.enabled()) flusher.Flush();
      if (auto bad = ref.Sample(window, ref_calls, deadline)) return finish(bad, "reference");
      // Some of the candidate's calls in the window, chosen after they ran.
      prepare = Clock::now();
      const std::uint32_t end = std::min(cand_calls, window + ref_calls);
      std::bernoulli_distribution pick(kRecheckShare);
      const std::uint32_t forced = std::uniform_int_distribution<std::uint32_t>(window, end - 1)(recheck);
      for (std::uint32_t j = window; j < end; ++j) {
        if (j != forced && !pick(recheck)) continue;
        if (const std::string where = Difference(layout, cand.Slot(j), ref.Slot(j), job); !where.empty()) {
          return finish(WorkerVerdict{Outcome::kWrong, "outputs produced while timing differ: a timed call on shape " +
                                                           layout.shape->label + " gave " + where +
                                                           " out of tolerance of the reference's on the same inputs"},
                        "candidate");
        }
      }
      recheck_s += since(prepare);
    }
    if (timed_out) {
      for (const Bytes& first : cand.first()) {
        if (auto written = timed_out->Write(first.data(), first.size()); !written) return written;
      }
    }
    ShapeSamples samples;
    samples.candidate = std::move(cand.samples());
    samples.reference = std::move(ref.samples());
    samples.candidate_batch = cand.batch();
    samples.reference_batch = ref.batch();
    samples.flushes = flushes;
    result.timings.push_back(std::move(samples));
  }
  if (auto bad = cand.worker().Inspect()) return finish(bad, "candidate");
  if (auto bad = ref.worker().Inspect()) return finish(bad, "reference");
  // A kernel that keeps working after its calls return (a thread finishing
  // the answer, or stealing the reference's time) is caught here.
  if (cand.idle_cpu() > kIdleCpuSlackSeconds + kIdleCpuShare * cand.idle_wall()) {
    return finish(WorkerVerdict{Outcome::kRejected, "the kernel kept running after its calls returned: " +
                                                        Milliseconds(cand.idle_cpu()) + " of CPU time while idle (" +
                                                        Milliseconds(cand.idle_wall()) + ")"},
                  "candidate");
  }
  std::printf("supervisor: candidate CPU time %s in %s timed, %s while idle in %s\n",
              Milliseconds(cand.busy_cpu()).c_str(), Milliseconds(cand.busy_wall()).c_str(),
              Milliseconds(cand.idle_cpu()).c_str(), Milliseconds(cand.idle_wall()).c_str());
  std::printf("supervisor: %s in all: inputs %s, warm-up %s, fresh input elements %s, preparing samples %s, "
              "re-checks %s\n",
              Milliseconds(since(job_start)).c_str(), Milliseconds(layout_s).c_str(),
              Milliseconds(warmup_s).c_str(), Milliseconds(perturb_s).c_str(),
              Milliseconds(cand.prepare_s() + ref.prepare_s()).c_str(), Milliseconds(recheck_s).c_str());
  if (timed_out) {
    if (auto closed = timed_out->Close(); !closed) return closed;
  }
  return finish(std::nullopt, "candidate");
}

}  // namespace kestrel::runner
