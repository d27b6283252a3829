// TimeShapes: see modes.h. Candidate and reference each run in a worker of
// their own; this process (the supervisor) owns the clock, prepares every
// call (outputs poisoned, dims and inouts restored) outside the timed
// interval, and watches the candidate's CPU time while it should be idle.
// Every call slot has inputs of its own, and before each round some of
// their elements (all of them, where the kernel's work is large beside its
// inputs: fresh_inputs.h) are drawn afresh, so that no two timed calls see
// the same inputs (a kernel cannot answer from a memo of earlier calls, nor
// patch its last answer where the inputs changed). In each
// round the reference runs a window of the candidate's slots chosen at
// random after the candidate ran, and randomly chosen calls in that window
// are re-checked against the reference's on the same inputs.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "evaluators/compare.h"
#include "evaluators/runner/call_estimate.h"
#include "evaluators/runner/call_layout.h"
#include "evaluators/runner/fresh_inputs.h"
#include "evaluators/runner/mapped_file.h"
#include "evaluators/runner/inputs.h"
#include "evaluators/runner/modes.h"
#include "evaluators/runner/run_queue.h"
#include "evaluators/runner/secret_seeds.h"
#include "evaluators/runner/shared_region.h"
#include "evaluators/runner/supervisor.h"
#include "evaluators/worker/protocol.h"

namespace kestrel::runner {
namespace {

constexpr std::uint32_t kMaxWarmCalls = 4096;  // of the warm-up's estimate of the seconds per call
constexpr double kMinSampleSeconds = 1e-3;  // well above the control channel's round trip
constexpr double kMaxSampleSeconds = 0.05;
constexpr std::size_t kMaxSamples = 100000;
constexpr std::uint64_t kSlotBudgetBytes = 128ULL << 20;  // call slots per kernel (the calls a sample can hold)
constexpr std::uint32_t kMaxSlots = 4096;
// A sample's fixed costs (the round trip, a worker woken on an idle core:
// from a few us to a few hundred on a VM) weigh alike on both kernels only
// when their samples last alike. The candidate's calls per sample come from
// its own warm-up, which it can rush; a round whose candidate sample lasts
// outside this factor of the reference's is dropped and its calls resized
// (at most kMaxResizes times a shape).
constexpr double kSampleMismatch = 1.1;
constexpr int kMaxResizes = 8;
constexpr double kRecheckShare = 0.25;       // timed calls whose outputs are re-checked
// A round is retaken when either kernel's sample was disturbed: a busy
// machine took over this share of it (Timed::Run's lost time: the worker
// or the supervisor that times it runnable but waiting for a CPU, see
// run_queue.h). A loaded CI machine once measured the same code as the
// reference at 0.23x: with three busy loops on two cores, the supervisor
// (its core shared with a loop) woke late after the candidate's samples,
// up to 4 ms after a 1 ms sample, not after the reference's: it had just
// prepared the round, and the scheduler let the loop run first. A kernel
// that sleeps or blocks does not wait in this sense, so it cannot void its
// own slow samples that way; the correctness checks of a retaken round
// still count. At most kMaxRetakesPerRound times the planned rounds (and
// min_samples) are retaken a shape, and none once the job has used half its
// time limit; then disturbed rounds are kept (and counted). With one retake
// a round, a CI run beside five busy loops (and three more) ran out with 14
// disturbed rounds of 27 kept, and measured the same code at 0.23x.
constexpr double kDisturbedShare = 0.25;
constexpr int kMaxRetakesPerRound = 4;
// The supervisor sleeps this long before each timed sample, after
// preparing it. Preparing a round (fresh inputs, the cache flush, the
// slots) is CPU work, and with the kernel's fair scheduler (EEVDF) a task
// that has just used the CPU owes the other tasks on its core: woken by
// the worker's reply, it waited its turn. Beside two busy loops on each
// core (busy_machine_test), the supervisor woke 13-15 ms late after each
// of the candidate's 1.5 ms samples, which followed the round's
// preparation, and not after the reference's, which followed the freeze's
// sleeps: every candidate round disturbed, the retakes run out, and the
// same code measured at 0.01-0.4x. Sleeping first, the supervisor owes
// nothing when the reply comes: 0.99-1.25x, and a third of the retakes
// (100 us did as well as 500 us; 2 ms did worse). Only on a busy machine:
// for kSettleRounds rounds after one that lost over kBusyShare of a sample
// to waits for a CPU (or whose waits are unknown). On an idle one the
// sleeps cost 3-5% of an evaluation's time (a round lasts a few ms), and
// little waits. The worker is thawed meanwhile, its slots prepared: a
// thread that computes them then is caught by the watch on its CPU time
// while idle (x_works_in_the_pause).
constexpr auto kSettle = std::chrono::microseconds(100);
constexpr double kBusyShare = 0.01;
constexpr int kSettleRounds = 4;  // the rounds that pause after one that showed a busy machine
// The CPU time a kernel's worker may use while it should be idle: with one
// thread, the tail of its reply and its next read, a few us a sample (0.0
// to 0.2 ms in all for the ten built-in seeds with two busy loops beside
// them), so 2 ms + 2% of the idle time; a kernel that hooks the worker's
// reply to finish deferred calls after it (x_replies_before_deferred_calls)
// used 13 ms when a loaded machine let it finish before its freeze. With
// threads, a pool's spin-wait after its last region: 20 ms + 5%.
constexpr double kIdleCpuSlackSeconds = 0.002;
constexpr double kIdleCpuShare = 0.02;
constexpr double kThreadsIdleCpuSlackSeconds = 0.02;
constexpr double kThreadsIdleCpuShare = 0.05;
// With threads allowed, the kernel is watched idle for at least this long
// in all: a thread left spinning after the calls shows above the slack even
// when a loaded machine gives it a quarter of a core.
constexpr double kMinIdleWatchSeconds = 0.25;
// A freeze (Timed::Freeze) takes about 0.1 ms on an idle core; on a busy
// one the worker may wait hundreds of ms for the CPU that stops it (up to
// 0.65 s seen with three busy loops on two cores, where a one-second limit
// once rejected an honest kernel). Past kFreezePatience a worker that has
// used over kFreezeCpuSeconds of CPU time since its stop was sent is
// rejected: it kept running (a kernel that cancels its stop with SIGCONT to
// itself); one that waits for a CPU uses about 0.01 ms, and is waited for,
// up to the job's deadline.
constexpr auto kFreezePatience = std::chrono::seconds(1);
constexpr double kFreezeCpuSeconds = 0.01;

using Clock = std::chrono::steady_clock;

bool OnlyInputs(ArgRole role) { return role == ArgRole::kInput; }
bool OnlyInOuts(ArgRole role) { return role == ArgRole::kInOut; }
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

// Call slots of a shape: as many as fit the budget (inputs and outputs),
// at least one per input set.
std::uint32_t SlotsFor(const Placement& inputs, const Placement& slot, int sets) {
  const auto fit =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(kSlotBudgetBytes / (inputs.bytes + slot.bytes), kMaxSlots));
  return std::max(static_cast<std::uint32_t>(sets), fit);
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
  const PreparedInputs* prepared = nullptr;  // the pristine inputs and inouts of each set
  int shape_index = 0;
  std::uint32_t filled = 0;  // slots 0 .. filled - 1 hold their inputs
  // Each filled slot's inouts (Place(shape, InOuts) per slot), which the
  // supervisor copies in before every call: perturbed like the inputs, so
  // that no call repeats an earlier call's inouts either.
  Placement inout;
  std::vector<std::byte> inouts;
  std::byte* InOuts(std::uint32_t j) { return inouts.data() + static_cast<std::uint64_t>(j) * inout.bytes; }
  const std::byte* InOuts(std::uint32_t j) const {
    return inouts.data() + static_cast<std::uint64_t>(j) * inout.bytes;
  }

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

// Where the candidate's first outputs go, in OutputSegments order of the
// timed layout (the timed shapes, one set per buffer set): to
// job.timed_output_file, and compared in memory with the reference's
// (job.reference_timed_output_file).
class FirstOutputs {
 public:
  static Result<FirstOutputs> Open(const Job& job) {
    Job layout = job;
    layout.input_sets = job.buffer_sets;
    std::optional<OutputFile> file;
    if (!job.timed_output_file.empty()) {
      auto created = OutputFile::Create(job.timed_output_file);
      if (!created) return Fail(created.error());
      file.emplace(std::move(*created));
    }
    std::vector<OutputSegment> segments = OutputSegments(layout);
    const std::uint64_t bytes =
        job.reference_timed_output_file.empty() || segments.empty() ? 0 : segments.back().offset + segments.back().bytes;
    auto reference = MappedFile::Open(job.reference_timed_output_file, bytes);
    if (!reference) return Fail(reference.error());
    return FirstOutputs(std::move(layout), std::move(segments), std::move(file), std::move(*reference));
  }
  bool wanted() const { return file_.has_value() || comparer_ != nullptr; }
  Status Keep(const std::byte* data, std::uint64_t bytes) {
    if (next_ >= segments_.size() || segments_[next_].bytes != bytes) {
      return Fail(Error::Internal("first outputs out of the timed layout"));
    }
    const OutputSegment& segment = segments_[next_++];
    if (file_) {
      if (auto written = file_->Write(data, bytes); !written) return written;
    }
    if (comparer_) comparer_->Add(segment, reference_.data() + segment.offset, data);
    return {};
  }
  Status Finish(JobResult& result) {
    if (file_) {
      if (auto closed = file_->Close(); !closed) return closed;
    }
    if (comparer_) result.timed_compared = comparer_->Finish();
    return {};
  }

 private:
  FirstOutputs(Job layout, std::vector<OutputSegment> segments, std::optional<OutputFile> file, MappedFile reference)
      : layout_(std::make_unique<Job>(std::move(layout))),
        segments_(std::move(segments)),
        file_(std::move(file)),
        reference_(std::move(reference)) {
    if (reference_.data() != nullptr) {
      comparer_ = std::make_unique<OutputComparer>(*layout_, Tolerance{layout_->rtol, layout_->atol});
    }
  }
  std::unique_ptr<Job> layout_;  // the comparer keeps a reference to it
  std::vector<OutputSegment> segments_;
  std::size_t next_ = 0;
  std::optional<OutputFile> file_;
  MappedFile reference_;
  std::unique_ptr<OutputComparer> comparer_;
};

// One kernel's side of the timing: its worker, its arena, its first
// outputs per input set, its samples.
class Timed {
 public:
  // `poison`: the outputs are poisoned before every call. Not the
  // reference's: it is the task's own trusted code, and the task was
  // refused unless two calls of it with differently poisoned outputs gave
  // the same bytes, i.e. it writes every output (JudgeReferenceRun); its
  // memory is beyond the candidate's reach. That halves the poisoning.
  // `threads`: the kernel may run threads of its own (Run's lost time).
  Timed(WorkerProcess& worker, SharedRegion& arena, std::string role, bool poison, bool threads)
      : worker_(worker), arena_(arena), role_(std::move(role)), poison_(poison), count_worker_wait_(!threads) {}

  WorkerProcess& worker() { return worker_; }
  const std::string& role() const { return role_; }

  std::optional<WorkerVerdict> Begin(const ShapeLayout& layout, Deadline deadline) {
    layout_ = &layout;
    samples_.clear();
    waits_.clear();
    total_ = 0;
    fastest_ever_ = std::numeric_limits<double>::infinity();
    batch_ = 1;
    return worker_.Layout(layout.Places(), static_cast<std::uint32_t>(layout.shape->args.size()), deadline);
  }

  // Poison, inouts, dims and scalars of slot j, outside any timed interval.
  void Prepare(std::uint32_t j) {
    const ShapeLayout& l = *layout_;
    std::byte* base = arena_.data() + static_cast<std::uint64_t>(j) * l.slot.bytes;
    if (poison_) PoisonOutputs(*l.shape, base, l.slot, 0);
    WriteValues(*l.shape, base, l.slot);
    for (std::size_t a = 0; a < l.shape->args.size(); ++a) {
      if (l.shape->args[a].role != ArgRole::kInOut) continue;
      std::memcpy(base + l.slot.offsets[a], l.InOuts(j) + l.inout.offsets[a], ArgBytes(l.shape->args[a]));
    }
  }

  // What slot j produced (outputs and inouts, in argument order), kept
  // straight from the slot.
  Status KeepResults(std::uint32_t j, FirstOutputs& keep) const {
    const ShapeLayout& l = *layout_;
    const std::byte* base = Slot(j);
    for (std::size_t a = 0; a < l.shape->args.size(); ++a) {
      if (!IsResultRole(l.shape->args[a].role)) continue;
      if (auto kept = keep.Keep(base + l.slot.offsets[a], ArgBytes(l.shape->args[a])); !kept) return kept;
    }
    return {};
  }

  const std::byte* Slot(std::uint32_t j) const { return arena_.data() + static_cast<std::uint64_t>(j) * layout_->slot.bytes; }

  // The worker's first access to the pages of slots 0 .. calls - 1 (its
  // outputs in the arena and its inputs), when it has not had it: a page's
  // first access costs a fault, on this kind of virtual machine about 2 us
  // per 4 KiB page, i.e. a first call several times slower than the next.
  // The regions outlive the shape, so what an earlier shape touched stays.
  std::optional<WorkerVerdict> TouchPages(std::uint32_t calls, Deadline deadline) {
    const std::uint64_t arena = std::min<std::uint64_t>(std::uint64_t{calls} * layout_->slot.bytes, arena_.size());
    const std::uint64_t inputs = std::uint64_t{calls} * layout_->inputs.bytes;
    if (arena <= arena_touched_ && inputs <= inputs_touched_) return std::nullopt;
    arena_touched_ = std::max(arena_touched_, arena);
    inputs_touched_ = std::max(inputs_touched_, inputs);
    // The worker's CPU time while it touches is its own work, not idle
    // time: what it used before counts as idle, the touch itself as neither.
    EndIdle();
    if (auto bad = worker_.Touch(arena_touched_, inputs_touched_, deadline)) return bad;
    if (last_cpu_ >= 0) {
      last_end_ = Clock::now();
      last_cpu_ = worker_.CpuSeconds();
    }
    return std::nullopt;
  }

  // The first batch calls slots 0 .. sets - 1 on their input sets as drawn
  // (nothing perturbed yet): their outputs are the first outputs, which go
  // to `keep` (see FirstOutputs); without `keep` it calls slot 0 only. Its
  // pages touched first, more batches on the same slots (caches warm, as in
  // a sample) until the estimate is made: the fastest batch's seconds per
  // call, the control channel's round trip taken off (CallEstimate).
  Result<std::optional<WorkerVerdict>> WarmUp(Deadline deadline, FirstOutputs* keep) {
    const auto first_calls = keep != nullptr ? static_cast<std::uint32_t>(layout_->sets) : 1U;
    if (auto bad = TouchPages(first_calls, deadline)) return bad;
    if (auto bad = MeasureRoundTrip(deadline)) return bad;
    CallEstimate estimate(round_trip_, first_calls, kMinSampleSeconds, kMaxWarmCalls, kMaxSampleSeconds);
    double seconds = 0;
    if (auto bad = Batch(first_calls, deadline, &seconds)) return bad;
    if (keep != nullptr) {
      for (std::uint32_t k = 0; k < first_calls; ++k) {
        if (auto kept = KeepResults(k, *keep); !kept) return Fail(kept.error());
      }
    }
    estimate.Add(first_calls, seconds);
    while (!estimate.Done()) {
      const std::uint32_t batch = estimate.NextBatch();
      if (auto bad = Batch(batch, deadline, &seconds)) return bad;
      estimate.Add(batch, seconds);
    }
    per_call_ = estimate.PerCall();
    return std::optional<WorkerVerdict>();
  }
  // Slots 0 .. calls - 1 prepared and called: *seconds, round trip included.
  std::optional<WorkerVerdict> Batch(std::uint32_t calls, Deadline deadline, double* seconds) {
    for (std::uint32_t j = 0; j < calls; ++j) Prepare(j);
    return Run(0, calls, deadline, seconds);
  }
  // The control channel's round trip: the fastest of a few empty runs,
  // measured once per job.
  std::optional<WorkerVerdict> MeasureRoundTrip(Deadline deadline) {
    if (round_trip_ >= 0) return std::nullopt;
    constexpr int kEmptyRuns = 5;
    double fastest = std::numeric_limits<double>::infinity();
    for (int i = 0; i < kEmptyRuns; ++i) {
      double seconds = 0;
      if (auto bad = Run(0, 0, deadline, &seconds)) return bad;
      fastest = std::min(fastest, seconds);
    }
    round_trip_ = fastest;
    return std::nullopt;
  }
  // -1 until measured (a kept reference's estimate needs none).
  double round_trip() const { return round_trip_; }
  double per_call() const { return per_call_; }
  // An estimate known from before (a kept reference's last job), instead
  // of WarmUp's: its pages of slot 0 touched, no call.
  std::optional<WorkerVerdict> Assume(double per_call, Deadline deadline) {
    per_call_ = std::max(per_call, 1e-9);
    return TouchPages(1, deadline);
  }
  // The fastest of the samples kept (seconds per call, the round trip's
  // share included); 0 when none.
  double FastestSample() const { return samples_.empty() ? 0 : *std::min_element(samples_.begin(), samples_.end()); }
  // The same over the shape's samples, those dropped included. What a kept
  // reference's next job sizes its samples by: like the warm-up's
  // estimate, the fastest, since a stall only ever slows a sample. (The
  // median once came out twice the call's time after a noisy job, and the
  // next job's reference samples held half the candidate's calls.)
  double FastestEver() const { return std::isfinite(fastest_ever_) ? fastest_ever_ : 0; }

  // One timed sample of `calls` calls on slots first .. first + calls - 1.
  // `settle`: the supervisor sleeps kSettle first, once the sample is prepared.
  std::optional<WorkerVerdict> Sample(std::uint32_t first, std::uint32_t calls, bool settle, Deadline deadline) {
    batch_ = calls;
    const auto prepare_start = Clock::now();
    for (std::uint32_t j = first; j < first + batch_; ++j) Prepare(j);
    prepare_s_ += std::chrono::duration<double>(Clock::now() - prepare_start).count();
    if (settle) std::this_thread::sleep_for(kSettle);
    double seconds = 0;
    if (auto bad = Run(first, batch_, deadline, &seconds)) return bad;
    total_ += seconds;
    samples_.push_back(seconds / batch_);
    waits_.push_back(last_wait_);
    fastest_ever_ = std::min(fastest_ever_, samples_.back());
    return std::nullopt;
  }
  // Whether the last sample was disturbed: a busy machine took over
  // kDisturbedShare of it (false when that is unknown).
  bool Disturbed() const {
    return !samples_.empty() && runner::Disturbed(waits_.back(), samples_.back() * batch_, kDisturbedShare);
  }
  // Whether a busy machine took over kBusyShare of the last sample (true
  // when that is unknown).
  bool Busy() const { return !(last_wait_ >= 0 && last_wait_ <= kBusyShare * last_seconds_); }
  // Whether the time a busy machine took from the samples is known.
  bool WaitsKnown() const { return waits_known_; }
  // The seconds a busy machine took from the samples kept.
  double KeptWaits() const {
    double sum = 0;
    for (const double wait : waits_) sum += std::max(wait, 0.0);
    return sum;
  }

  // Forgets every sample so far (rounds sized on a wrong estimate): the
  // samples kept are all of the current calls per sample, as reported.
  void DropSamples() {
    samples_.clear();
    waits_.clear();
    total_ = 0;
  }
  // Keeps the last sample less the time a busy machine took from it (its
  // round disturbed, and kept past the limit of retakes). Never below the
  // worker's CPU time in it (LostToBusyMachine's cap): a kernel gains
  // nothing it did not compute. Returns the seconds taken off.
  double CorrectLastSample() {
    if (samples_.empty() || waits_.back() <= 0) return 0;
    const double lost = waits_.back();
    total_ -= lost;
    samples_.back() -= lost / batch_;
    waits_.back() = 0;
    return lost;
  }
  // Forgets the last sample (its round retaken).
  void DropLastSample() {
    if (samples_.empty()) return;
    total_ -= samples_.back() * batch_;
    samples_.pop_back();
    waits_.pop_back();
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
  int freezes() const { return freezes_; }
  double freeze_wall() const { return freeze_wall_; }  // waiting for the worker to stop

  // The worker is frozen from the end of each of its samples until that
  // sample's outputs are checked: a thread still finishing the answer
  // after the calls returned is held where it stood (its outputs partly
  // poisoned), and takes no CPU time from the reference's sample meanwhile. Frozen time is neither idle nor busy.
  // How it ended: WorkerProcess::Freeze.
  WorkerProcess::Frozen Freeze(Deadline deadline) {
    EndIdle();
    frozen_ = true;
    ++freezes_;
    const auto start = Clock::now();
    const WorkerProcess::Frozen frozen = worker_.Freeze(deadline, kFreezePatience, kFreezeCpuSeconds);
    freeze_wall_ += std::chrono::duration<double>(Clock::now() - start).count();
    return frozen;
  }
  void Thaw() {
    if (!frozen_) return;
    frozen_ = false;
    worker_.Thaw();
    last_end_ = Clock::now();
    last_cpu_ = worker_.CpuSeconds();
  }

  // Waits, the worker idle, until it has been watched idle for `seconds`
  // in all (a short job's gaps between samples are too brief to tell a
  // thread that goes on from the worker's own upkeep).
  void WatchIdle(double seconds) {
    if (last_cpu_ < 0 || idle_wall_ + std::chrono::duration<double>(Clock::now() - last_end_).count() >= seconds) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds - idle_wall_) - (Clock::now() - last_end_));
    EndIdle();
    last_end_ = Clock::now();
    last_cpu_ = worker_.CpuSeconds();
  }

 private:
  // A run, with the worker's CPU time before and after: what it used
  // between runs is idle time it should not have used. What a busy machine
  // took from its seconds goes to last_wait_ (-1 when unknown; the rule is
  // run_queue.h's LostToBusyMachine). With threads allowed the worker's
  // wait is not counted: its own threads can make it wait
  // (x_voids_slow_rounds).
  std::optional<WorkerVerdict> Run(std::uint32_t first, std::uint32_t calls, Deadline deadline, double* seconds) {
    const double cpu_before = EndIdle();
    const double wait_before = worker_.RunQueueSeconds();
    const double own_before = OwnRunQueueSeconds();
    if (auto bad = worker_.Run(first, calls, deadline, seconds)) return bad;
    const double own_after = OwnRunQueueSeconds();
    const double wait_after = worker_.RunQueueSeconds();
    last_end_ = Clock::now();
    last_cpu_ = worker_.CpuSeconds();
    last_wait_ = -1;
    last_seconds_ = *seconds;
    if (wait_before >= 0 && wait_after >= 0 && own_before >= 0 && own_after >= 0 && cpu_before >= 0 &&
        last_cpu_ >= 0) {
      last_wait_ = LostToBusyMachine({.worker_wait = wait_after - wait_before,
                                      .supervisor_wait = own_after - own_before,
                                      .worker_cpu = last_cpu_ - cpu_before,
                                      .seconds = *seconds,
                                      .count_worker_wait = count_worker_wait_});
    }
    waits_known_ = last_wait_ >= 0;
    if (cpu_before >= 0 && last_cpu_ >= 0) {
      busy_cpu_ += last_cpu_ - cpu_before;
      busy_wall_ += *seconds;
    }
    return std::nullopt;
  }

  // The worker's CPU time since its last call returned counts as idle
  // (none before its first); returns its CPU time now (-1 when unknown).
  double EndIdle() {
    const auto now = Clock::now();
    const double cpu = worker_.CpuSeconds();
    if (last_cpu_ >= 0 && cpu >= 0) {
      idle_cpu_ += cpu - last_cpu_;
      idle_wall_ += std::chrono::duration<double>(now - last_end_).count();
    }
    return cpu;
  }

  WorkerProcess& worker_;
  SharedRegion& arena_;
  std::string role_;
  bool poison_ = true;
  bool count_worker_wait_ = true;
  bool frozen_ = false;
  const ShapeLayout* layout_ = nullptr;
  std::uint32_t batch_ = 1;
  double round_trip_ = -1;
  double total_ = 0;
  std::vector<double> samples_;
  std::vector<double> waits_;  // the seconds a busy machine took from each sample (-1: unknown)
  double last_wait_ = -1;
  double last_seconds_ = 0;  // the last run's
  bool waits_known_ = false;
  double fastest_ever_ = std::numeric_limits<double>::infinity();
  double last_cpu_ = -1;
  Clock::time_point last_end_;
  double idle_cpu_ = 0, idle_wall_ = 0, busy_cpu_ = 0, busy_wall_ = 0;
  double prepare_s_ = 0;  // the supervisor's own work before samples
  int freezes_ = 0;
  double freeze_wall_ = 0;
  double per_call_ = 1e-9;
  std::uint64_t arena_touched_ = 0, inputs_touched_ = 0;  // bytes of each region the worker has accessed
};

// How many calls each kernel's sample holds, so that both reach min_time
// and min_samples in the same number of rounds, with the least time spent
// sampling in all (each sample at least `sample_seconds` long). With
// samples of one length for both, a fast candidate would keep a slow
// reference running for several times its min_time.
struct RoundPlan {
  std::uint32_t rounds = 1;
  std::uint32_t candidate_calls = 1;
  std::uint32_t reference_calls = 1;
};

RoundPlan PlanRounds(const Job& job, double sample_seconds, double candidate_call, double reference_call,
                     std::uint32_t slots) {
  constexpr std::uint32_t kMaxRounds = 20000;
  const auto calls = [&](double per_call, std::uint32_t rounds) {
    const double wanted = std::max(std::ceil(sample_seconds / per_call), std::ceil(job.min_time_s / (rounds * per_call)));
    return static_cast<std::uint32_t>(std::clamp<double>(wanted, 1, slots));
  };
  const double fastest = std::min(candidate_call, reference_call);
  const auto most = static_cast<std::uint32_t>(std::clamp<double>(
      std::ceil(job.min_time_s / std::max(fastest, 1e-9)), job.min_samples, std::max<double>(job.min_samples, kMaxRounds)));
  const auto seconds = [&](std::uint32_t rounds) {
    return rounds * (calls(candidate_call, rounds) * candidate_call + calls(reference_call, rounds) * reference_call);
  };
  double least = std::numeric_limits<double>::infinity();
  for (auto rounds = static_cast<std::uint32_t>(job.min_samples); rounds <= most; ++rounds) {
    least = std::min(least, seconds(rounds));
  }
  // Of the plans within 5% of the least time, the one with most samples.
  RoundPlan best;
  for (auto rounds = static_cast<std::uint32_t>(job.min_samples); rounds <= most; ++rounds) {
    if (seconds(rounds) <= least * 1.05) best = {rounds, calls(candidate_call, rounds), calls(reference_call, rounds)};
  }
  return best;
}

// Slots filled .. calls - 1 of the shape made copies of their input sets
// (slot j of set j % sets): only the slots a sample will use are filled.
void FillSlots(ShapeLayout& layout, SharedRegion& inputs, std::uint32_t calls) {
  const JobShape& shape = *layout.shape;
  const std::uint32_t upto = std::min(calls, layout.slots);
  const bool any_inout = std::any_of(shape.args.begin(), shape.args.end(),
                                     [](const JobArg& arg) { return arg.role == ArgRole::kInOut; });
  if (any_inout && upto > layout.filled) layout.inouts.resize(upto * layout.inout.bytes);
  for (std::uint32_t j = layout.filled; j < upto; ++j) {
    std::byte* slot = inputs.data() + j * layout.inputs.bytes;
    const int set = static_cast<int>(j % static_cast<std::uint32_t>(layout.sets));
    for (std::size_t a = 0; a < shape.args.size(); ++a) {
      const ArgRole role = shape.args[a].role;
      if (role != ArgRole::kInput && role != ArgRole::kInOut) continue;
      std::byte* to = role == ArgRole::kInput ? slot + layout.inputs.offsets[a] : layout.InOuts(j) + layout.inout.offsets[a];
      std::memcpy(to, layout.prepared->Arg(layout.shape_index, set, static_cast<int>(a)), ArgBytes(shape.args[a]));
    }
  }
  layout.filled = std::max(layout.filled, std::min(calls, layout.slots));
}

ShapeLayout LayOut(const Job& job, int s, const PreparedInputs& prepared, SharedRegion& inputs) {
  const JobShape& shape = job.shapes[s];
  ShapeLayout layout;
  layout.shape = &shape;
  layout.sets = job.buffer_sets;
  layout.inputs = Place(shape, OnlyInputs);
  layout.slot = Place(shape, NotInputs);
  layout.slots = SlotsFor(layout.inputs, layout.slot, layout.sets);
  layout.prepared = &prepared;
  layout.shape_index = s;
  layout.inout = Place(shape, OnlyInOuts);
  FillSlots(layout, inputs, static_cast<std::uint32_t>(layout.sets));
  return layout;
}

// Where argument `a` of call slot `j` lies: an input in the shared inputs,
// an inout in the slot's own copy; nullptr for the other roles.
std::byte* DrawnArg(ShapeLayout& layout, SharedRegion& inputs, std::uint32_t j, std::size_t a) {
  const JobArg& arg = layout.shape->args[a];
  if (arg.count <= 0) return nullptr;
  if (arg.role == ArgRole::kInput) return inputs.data() + j * layout.inputs.bytes + layout.inputs.offsets[a];
  if (arg.role == ArgRole::kInOut) return layout.InOuts(j) + layout.inout.offsets[a];
  return nullptr;
}

// Elements of every input and inout of slots 0 .. calls - 1 drawn afresh
// (as many as `fresh` plans), from seeds the kernel cannot predict
// (secret_seeds.h): what it recovers from one draw's values tells it
// nothing of the next draw, nor of the generator that picks the
// reference's window and the re-checks.
void Perturb(ShapeLayout& layout, SharedRegion& inputs, std::uint32_t calls, const FreshInputs& fresh,
             SecretSeeds& seeds) {
  const JobShape& shape = *layout.shape;
  for (std::uint32_t j = 0; j < calls; ++j) {
    for (std::size_t a = 0; a < shape.args.size(); ++a) {
      std::byte* data = DrawnArg(layout, inputs, j, a);
      if (data == nullptr) continue;
      const std::uint64_t values = seeds();
      DrawAfresh(shape.args[a], {values, seeds()}, fresh.elements(a), data);
    }
  }
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
    const std::int64_t at = FirstMismatch(arg.type, c, r, arg.count, Tolerance{job.rtol, job.atol});
    if (at >= 0) return arg.name + "[" + std::to_string(at) + "]";
  }
  return "";
}

// "100%", or "0.1%-100%" over shapes that differ.
std::string Shares(double least, double most) {
  const auto percent = [](double share) {
    char text[32];
    std::snprintf(text, sizeof text, share >= 0.1 ? "%.0f%%" : share >= 0.001 ? "%.2g%%" : "%.1e%%", share * 100);
    return std::string(text);
  };
  return least == most || percent(least) == percent(most) ? percent(most) : percent(least) + "-" + percent(most);
}

std::string Milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f ms", seconds * 1e3);
  return text;
}

}  // namespace

TimingSizes TimingSizesOf(const Job& job) {
  TimingSizes sizes;
  for (const auto& shape : job.shapes) {
    const Placement inputs = Place(shape, OnlyInputs);
    const Placement slot = Place(shape, NotInputs);
    const std::uint64_t slots = SlotsFor(inputs, slot, job.buffer_sets);
    sizes.inputs = std::max(sizes.inputs, inputs.bytes * slots);
    sizes.arena = std::max(sizes.arena, slot.bytes * slots);
  }
  return sizes;
}

// Some of the candidate's calls in slots first .. end - 1 (where the
// reference ran too), chosen after they ran: a random kRecheckShare of
// them and at least one, each compared with the reference's call on the
// same inputs.
std::optional<Stop> Recheck(const Job& job, const ShapeLayout& layout, const Timed& cand, const Timed& ref,
                            std::uint32_t first, std::uint32_t end, std::mt19937_64& random) {
  std::bernoulli_distribution pick(kRecheckShare);
  const std::uint32_t forced = std::uniform_int_distribution<std::uint32_t>(first, end - 1)(random);
  for (std::uint32_t j = first; j < end; ++j) {
    if (j != forced && !pick(random)) continue;
    if (const std::string where = Difference(layout, cand.Slot(j), ref.Slot(j), job); !where.empty()) {
      return Stop{WorkerVerdict{Outcome::kWrong, "outputs produced while timing differ: a timed call on shape " +
                                                     layout.shape->label + " gave " + where +
                                                     " out of tolerance of the reference's on the same inputs"},
                  "candidate"};
    }
  }
  return std::nullopt;
}

Step TimeShapes(const Job& job, const PreparedInputs& prepared, const TimingWorkers& workers, JobResult& result) {
  const Deadline deadline = JobDeadline(job);
  const auto half_time = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(job.timeout_s / 2));
  auto opened = FirstOutputs::Open(job);
  if (!opened) return Fail(opened.error());
  FirstOutputs& first = *opened;
  Timed cand(workers.candidate, workers.candidate_arena, "candidate", true, job.allow_threads);
  Timed ref(workers.reference, workers.reference_arena, "reference", false, job.allow_threads);
  const auto stop = [](const std::optional<WorkerVerdict>& verdict, const std::string& role) -> Step {
    return Stop{*verdict, role};
  };
  // The idle CPU check and the freeze watch the candidate's worker by its
  // process id (bwrap's child-pid, then its reaper's one child in /proc):
  // without it a kernel could work on after its replies unseen, so it is
  // not timed unwatched.
  if (workers.candidate.pid() <= 0) {
    return Stop{WorkerVerdict{Outcome::kRejected,
                              "evaluator error: the candidate's worker process id is unknown (bwrap's --info-fd gave "
                              "none, or /proc/PID/task/PID/children is missing), so its CPU time cannot be watched "
                              "nor its worker frozen between samples; not timed"},
                "candidate"};
  }

  std::random_device entropy;
  std::mt19937_64 recheck((static_cast<std::uint64_t>(entropy()) << 32) ^ entropy());
  SecretSeeds fresh_seeds;
  // Per sample of the slower kernel.
  const double sample_seconds =
      std::clamp(job.min_time_s / (4.0 * job.min_samples), kMinSampleSeconds, kMaxSampleSeconds);
  CacheFlusher flusher(job.flush_bytes);

  const auto job_start = Clock::now();
  double layout_s = 0, warmup_s = 0, perturb_s = 0, recheck_s = 0;
  double least_fresh = 1, most_fresh = 0;  // of each call's input elements, over the shapes
  int known_shapes = 0;
  std::uint32_t retaken = 0, disturbed_kept = 0, rounds = 0, settled = 0;
  double kept_waits_s = 0;  // waited for a CPU in the samples kept
  double corrected_s = 0;   // taken off the disturbed rounds kept
  const auto since = [](Clock::time_point from) { return std::chrono::duration<double>(Clock::now() - from).count(); };
  for (int s = 0; s < static_cast<int>(job.shapes.size()); ++s) {
    auto phase = Clock::now();
    ShapeLayout layout = LayOut(job, s, prepared, workers.inputs);
    layout_s += since(phase);
    for (Timed* timed : {&ref, &cand}) {
      if (auto bad = timed->Begin(layout, deadline)) return stop(bad, timed->role());
    }
    phase = Clock::now();
    // The reference's estimate may be known from a kept reference's last
    // job on this shape and layout (its seconds per call do not change).
    const std::string shape_key = std::to_string(s) + ' ' + layout.shape->label + ' ' + std::to_string(layout.slots) +
                                  ' ' + std::to_string(job.flush_bytes);
    const auto known = workers.reference_per_call != nullptr ? workers.reference_per_call->find(shape_key)
                                                              : std::map<std::string, double>::iterator();
    const bool assumed = workers.reference_per_call != nullptr && known != workers.reference_per_call->end();
    for (Timed* timed : {&ref, &cand}) {
      if (timed == &ref && assumed) {
        if (auto bad = ref.Assume(known->second, deadline)) return stop(bad, "reference");
        ++known_shapes;
        continue;
      }
      auto warm = timed->WarmUp(deadline, timed == &cand && first.wanted() ? &first : nullptr);
      if (!warm) return Fail(warm.error());
      if (*warm) return stop(*warm, timed->role());
    }
    warmup_s += since(phase);
    // The candidate runs slots 0 .. n - 1 of each round; then the reference
    // runs a window of them chosen at random (the candidate cannot know
    // which), or more slots when it needs more calls, so that some of the
    // candidate's calls can be re-checked against the reference's on the
    // same inputs. How many calls each sample holds: PlanRounds.
    const RoundPlan plan = PlanRounds(job, sample_seconds, cand.per_call(), ref.per_call(), layout.slots);
    std::uint32_t cand_calls = plan.candidate_calls;
    const std::uint32_t ref_calls = plan.reference_calls;
    phase = Clock::now();
    FillSlots(layout, workers.inputs, std::max(cand_calls, ref_calls));
    layout_s += since(phase);
    // A round's draws: about kFreshShare of the reference's sample, shared
    // by the slots the round uses (fresh_inputs.h).
    phase = Clock::now();
    FreshInputs fresh(*layout.shape);
    std::vector<std::byte*> slot_args;
    for (std::size_t a = 0; a < layout.shape->args.size(); ++a) {
      slot_args.push_back(DrawnArg(layout, workers.inputs, 0, a));
    }
    fresh.TimeScattered(slot_args, fresh_seeds());
    fresh.Plan(FreshInputs::kFreshShare * ref_calls * ref.per_call() / std::max(cand_calls, ref_calls));
    least_fresh = std::min(least_fresh, fresh.share());
    most_fresh = std::max(most_fresh, fresh.share());
    perturb_s += since(phase);
    phase = Clock::now();
    if (auto bad = cand.TouchPages(cand_calls, deadline)) return stop(bad, "candidate");
    if (auto bad = ref.TouchPages(std::max(cand_calls, ref_calls), deadline)) return stop(bad, "reference");
    warmup_s += since(phase);
    // Interleaved: a change of machine load hits both kernels alike.
    std::int64_t flushes = 0;
    int resizes = 0;
    const std::uint32_t retake_limit = kMaxRetakesPerRound * std::max<std::uint32_t>(plan.rounds, job.min_samples);
    std::uint32_t shape_retakes = 0;
    int settle_for = kSettleRounds;  // rounds still to pause before their samples (until they show an idle machine)
    while (!cand.Done(job) || !ref.Done(job)) {
      const bool settle = settle_for > 0;
      ++rounds;
      settled += settle;
      const std::uint32_t window =
          cand_calls > ref_calls ? std::uniform_int_distribution<std::uint32_t>(0, cand_calls - ref_calls)(recheck) : 0;
      auto prepare = Clock::now();
      Perturb(layout, workers.inputs, std::max(cand_calls, window + ref_calls), fresh, fresh_seeds);
      perturb_s += since(prepare);
      if (flusher.enabled()) {
        flusher.Flush();
        ++flushes;
      }
      if (auto bad = cand.Sample(0, cand_calls, settle, deadline)) return stop(bad, "candidate");
      // The candidate stays frozen through the reference's sample and the
      // re-checks (Timed::Freeze); its last call's outputs must be written
      // by the time it returned. One thread needs it as much as many: a
      // kernel that hooks the worker's write() (or takes over its loop) can
      // send the 'D' itself and do deferred calls' work afterwards, on the
      // reference's core and time (x_replies_before_deferred_calls). About
      // 0.2 ms a sample. (The worker's process id is known: checked above.)
      struct ThawOnExit {
        Timed& timed;
        ~ThawOnExit() { timed.Thaw(); }
      } thaw{cand};
      switch (cand.Freeze(deadline)) {
        case WorkerProcess::Frozen::kStopped:
          break;
        case WorkerProcess::Frozen::kKeptRunning:
          return Stop{WorkerVerdict{Outcome::kRejected,
                                    "the kernel kept running when stopped to have its outputs checked (its threads "
                                    "were not all seen stopped, and it used CPU time after the stop)"},
                      "candidate"};
        case WorkerProcess::Frozen::kOutOfTime:
          return Stop{WorkerVerdict{Outcome::kTimedOut,
                                    "timed out while its worker was being stopped to have its outputs checked (it "
                                    "used no CPU time meanwhile: it waited for a CPU on a busy machine)"},
                      "candidate"};
      }
      if (const std::string output = UnwrittenOutput(*layout.shape, cand.Slot(cand_calls - 1), layout.slot, 0, recheck() | 1);
          !output.empty()) {
        return Stop{WorkerVerdict{Outcome::kWrong, "output " + output + " of its last timed call on shape " +
                                                       layout.shape->label +
                                                       " was not written when the call returned (the call skipped "
                                                       "its work, or work went on after it returned: a thread, or a "
                                                       "hook on the worker's reply, finishing the answer)"},
                    "candidate"};
      }
      if (flusher.enabled()) flusher.Flush();
      if (auto bad = ref.Sample(window, ref_calls, settle, deadline)) return stop(bad, "reference");
      prepare = Clock::now();
      if (auto wrong = Recheck(job, layout, cand, ref, window, std::min(cand_calls, window + ref_calls), recheck)) {
        return *wrong;
      }
      recheck_s += since(prepare);
      settle_for = cand.Busy() || ref.Busy() ? kSettleRounds : std::max(settle_for, 1) - 1;
      // A disturbed round is retaken (kDisturbedShare), both its samples
      // dropped: a kept round's two samples ran on a machine alike.
      if (cand.Disturbed() || ref.Disturbed()) {
        if (shape_retakes < retake_limit && deadline - Clock::now() > half_time) {
          ++shape_retakes;
          cand.DropLastSample();
          ref.DropLastSample();
        } else {
          ++disturbed_kept;
          corrected_s += cand.CorrectLastSample() + ref.CorrectLastSample();
        }
      }
      // Samples of unlike length: the rounds so far are dropped and the
      // candidate's calls resized to last as long as the reference's sample
      // (from its own timed seconds, which no warm-up can shorten). A kernel
      // that rushed its warm-up for long samples gets short ones; one that
      // slows down to be resized only shortens its own (e_rushes_warmup). The
      // lengths compared are each kernel's fastest sample (the candidate's
      // since its last resize, the reference's of the shape): a stall only
      // ever slows a sample, and a busy machine's stalls resized honest
      // kernels to one call against thirty (runner_pool_test), nor does a
      // kernel that spins through some samples (e_games_resize) move them.
      // All earlier rounds go, not only this one: a kept sample has the
      // calls per sample that the result reports, and both kernels' samples
      // come from the same rounds.
      const double cand_seconds = cand.FastestSample() * cand_calls, ref_seconds = ref.FastestEver() * ref_calls;
      if (resizes < kMaxResizes && cand_seconds > 0 && ref_seconds > 0 &&
          (cand_seconds > kSampleMismatch * ref_seconds || ref_seconds > kSampleMismatch * cand_seconds)) {
        const auto resized = static_cast<std::uint32_t>(std::clamp<double>(
            std::round(cand_calls * ref_seconds / cand_seconds), 1, layout.slots));
        if (resized != cand_calls) {
          ++resizes;
          cand.DropSamples();
          ref.DropSamples();
          if (resized > cand_calls) {
            cand.Thaw();  // the touch is a request the worker answers
            phase = Clock::now();
            FillSlots(layout, workers.inputs, std::max(resized, ref_calls));
            layout_s += since(phase);
            if (auto bad = cand.TouchPages(resized, deadline)) return stop(bad, "candidate");
            if (auto bad = ref.TouchPages(std::max(resized, ref_calls), deadline)) return stop(bad, "reference");
          }
          cand_calls = resized;
        }
      }
    }
    retaken += shape_retakes;
    kept_waits_s += cand.KeptWaits() + ref.KeptWaits();
    if (const double fastest = ref.FastestEver(); workers.reference_per_call != nullptr && fastest > 0) {
      (*workers.reference_per_call)[shape_key] = fastest;
    }
    ShapeSamples samples;
    samples.candidate = std::move(cand.samples());
    samples.reference = std::move(ref.samples());
    samples.candidate_batch = cand.batch();
    samples.reference_batch = ref.batch();
    samples.flushes = flushes;
    result.timings.push_back(std::move(samples));
  }
  if (auto bad = cand.worker().Inspect()) return stop(bad, "candidate");
  if (auto bad = ref.worker().Inspect()) return stop(bad, "reference");
  // A kernel that keeps working after its calls return (a thread finishing
  // the answer, or stealing the reference's time) is caught here.
  if (job.allow_threads) cand.WatchIdle(kMinIdleWatchSeconds);
  const double idle_slack = job.allow_threads ? kThreadsIdleCpuSlackSeconds + kThreadsIdleCpuShare * cand.idle_wall()
                                              : kIdleCpuSlackSeconds + kIdleCpuShare * cand.idle_wall();
  if (cand.idle_cpu() > idle_slack) {
    return Stop{WorkerVerdict{Outcome::kRejected, "the kernel kept running after its calls returned: " +
                                                      Milliseconds(cand.idle_cpu()) + " of CPU time while idle (" +
                                                      Milliseconds(cand.idle_wall()) + ")"},
                "candidate"};
  }
  std::printf("supervisor: candidate CPU time %s in %s timed, %s while idle in %s; frozen after each of %d samples "
              "(%s waiting for it to stop)\n",
              Milliseconds(cand.busy_cpu()).c_str(), Milliseconds(cand.busy_wall()).c_str(),
              Milliseconds(cand.idle_cpu()).c_str(), Milliseconds(cand.idle_wall()).c_str(), cand.freezes(),
              Milliseconds(cand.freeze_wall()).c_str());
  std::printf("supervisor: timing %s in all: inputs %s, warm-up %s (the reference's seconds per call known from "
              "the last job on %d of %zu shapes; the candidate's round trip %.0f us), fresh input elements %s "
              "(%s of each call's, before each round), preparing samples %s, re-checks %s\n",
              Milliseconds(since(job_start)).c_str(), Milliseconds(layout_s).c_str(),
              Milliseconds(warmup_s).c_str(), known_shapes, job.shapes.size(), std::max(cand.round_trip(), 0.0) * 1e6,
              Milliseconds(perturb_s).c_str(), Shares(least_fresh, most_fresh).c_str(), Milliseconds(cand.prepare_s() + ref.prepare_s()).c_str(),
              Milliseconds(recheck_s).c_str());
  if (!cand.WaitsKnown() || !ref.WaitsKnown()) {
    std::printf("supervisor: waits for a CPU unknown (no scheduler statistics in /proc/PID/schedstat): no round "
                "retaken for a busy machine\n");
  } else {
    std::printf("supervisor: %u rounds retaken, a busy machine having taken over %.0f%% of a sample (its worker or "
                "this process waiting for a CPU); %s taken from the samples kept; %u of %u rounds timed after a "
                "pause (the machine busy)%s\n",
                retaken, kDisturbedShare * 100, Milliseconds(kept_waits_s).c_str(), settled, rounds,
                disturbed_kept > 0 ? (", " + std::to_string(disturbed_kept) +
                                      " disturbed rounds kept past the limit of retakes, less the " +
                                      Milliseconds(corrected_s) + " a busy machine took from them")
                                         .c_str()
                                   : "");
  }
  if (auto finished = first.Finish(result); !finished) return Fail(finished.error());
  return std::optional<Stop>();
}

}  // namespace kestrel::runner
