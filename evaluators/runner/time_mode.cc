// RunTiming: see modes.h.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <vector>

#include "evaluators/runner/inputs.h"
#include "evaluators/runner/kernel_library.h"
#include "evaluators/runner/modes.h"
#include "evaluators/runner/seccomp_filter.h"

namespace kestrel::runner {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kWarmupSeconds = 0.05;
constexpr double kMinSampleSeconds = 1e-3;  // well above the clock's resolution
constexpr double kMaxSampleSeconds = 0.05;
constexpr std::size_t kMaxSamples = 100000;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// A buffer larger than the last-level cache, written over (every cache line
// read and written) before a sample so that the sample starts with cold
// caches: neither kernel's data is left in them. Empty: no flushing.
class CacheFlusher {
 public:
  explicit CacheFlusher(std::int64_t bytes) : lines_(static_cast<std::size_t>(std::max<std::int64_t>(bytes, 0)), 0) {}
  bool enabled() const { return !lines_.empty(); }
  void Flush() {
    for (std::size_t i = 0; i < lines_.size(); i += 64) lines_[i] = static_cast<unsigned char>(lines_[i] + 1);
    // The writes must happen: the buffer's contents are observed.
    sink_ = sink_ + lines_[lines_.size() / 2];
  }

 private:
  std::vector<unsigned char> lines_;
  volatile unsigned sink_ = 0;
};

// One kernel's side of the timing of one shape: its own rotating argument
// sets (never shared with the other kernel, so neither can reuse the
// other's outputs), its batch size and its samples.
class Timed {
 public:
  Timed(EntryFunction entry, const JobShape& shape, const Job& job, int shape_index) : entry_(entry) {
    for (int b = 0; b < job.buffer_sets; ++b) sets_.emplace_back(shape, InputKey{job.seed, shape_index, b});
  }

  // Warms up until kWarmupSeconds have passed (at least one call: a slow
  // kernel is warmed by its first call) and sizes the batch so that a sample
  // lasts about `sample_seconds`.
  void WarmUp(double sample_seconds) {
    const auto start = Clock::now();
    std::int64_t calls = 0;
    do {
      Call();
      ++calls;
    } while (Since(start) < kWarmupSeconds);
    const double per_call = Since(start) / static_cast<double>(calls);
    batch_ = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(sample_seconds / std::max(per_call, 1e-9))));
  }

  void Sample() {
    const auto start = Clock::now();
    for (std::int64_t i = 0; i < batch_; ++i) Call();
    const double seconds = Since(start);
    total_ += seconds;
    samples_.push_back(seconds / static_cast<double>(batch_));
  }

  bool Done(const Job& job) const {
    return (total_ >= job.min_time_s && static_cast<int>(samples_.size()) >= job.min_samples) ||
           samples_.size() >= kMaxSamples;
  }
  // One more call on each buffer set, outputs poisoned first, as a timed
  // call (a kernel counting its calls cannot tell it apart); appends that
  // set's outputs and inouts to `out`.
  void CallAndWriteOutputs(const JobShape& shape, std::ofstream& out) {
    for (auto& set : sets_) {
      set.PoisonOutputs(0);
      entry_(set.Pointers());
      for (std::size_t a = 0; a < set.size(); ++a) {
        if (shape.args[a].role != ArgRole::kOutput && shape.args[a].role != ArgRole::kInOut) continue;
        const auto bytes = set.Bytes(a);
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      }
    }
  }
  std::vector<double>& samples() { return samples_; }
  std::int64_t batch() const { return batch_; }

 private:
  void Call() {
    entry_(sets_[next_].Pointers());
    next_ = (next_ + 1) % sets_.size();
  }

  EntryFunction entry_;
  std::vector<ArgSet> sets_;
  std::size_t next_ = 0;
  std::int64_t batch_ = 1;
  double total_ = 0;
  std::vector<double> samples_;
};

}  // namespace

Status RunTiming(const Job& job, JobResult& result) {
  if (job.libraries.size() != 2) return Fail(Error::InvalidArgument("time mode takes two libraries"));
  std::ofstream timed_out;  // opened before the sandbox, which refuses opening files for writing
  if (!job.timed_output_file.empty()) {
    timed_out.open(job.timed_output_file, std::ios::binary | std::ios::trunc);
    if (!timed_out) return Fail(Error::Io("cannot write " + job.timed_output_file.string()));
  }
  if (auto sandboxed = EnterSandbox(job); !sandboxed) return Fail(sandboxed.error());
  auto candidate = KernelLibrary::Open(job.libraries[0]);
  if (!candidate) return Fail(candidate.error());
  auto reference = KernelLibrary::Open(job.libraries[1]);
  if (!reference) return Fail(reference.error());
  const double sample_seconds =
      std::clamp(job.min_time_s / (4.0 * job.min_samples), kMinSampleSeconds, kMaxSampleSeconds);
  CacheFlusher flusher(job.flush_bytes);

  for (int s = 0; s < static_cast<int>(job.shapes.size()); ++s) {
    Timed cand(candidate->entry(), job.shapes[s], job, s);
    Timed ref(reference->entry(), job.shapes[s], job, s);
    ref.WarmUp(sample_seconds);
    cand.WarmUp(sample_seconds);
    // Interleaved: a change of machine load hits both kernels alike.
    std::int64_t flushes = 0;
    while (!cand.Done(job) || !ref.Done(job)) {
      if (flusher.enabled()) flusher.Flush();
      ref.Sample();
      if (flusher.enabled()) {
        flusher.Flush();
        ++flushes;
      }
      cand.Sample();
    }
    if (timed_out.is_open()) cand.CallAndWriteOutputs(job.shapes[s], timed_out);
    ShapeSamples samples;
    samples.candidate = std::move(cand.samples());
    samples.reference = std::move(ref.samples());
    samples.candidate_batch = cand.batch();
    samples.reference_batch = ref.batch();
    samples.flushes = flushes;
    result.timings.push_back(std::move(samples));
  }
  if (timed_out.is_open()) {
    timed_out.close();
    if (!timed_out) return Fail(Error::Io("cannot write " + job.timed_output_file.string()));
  }
  return {};
}

}  // namespace kestrel::runner
