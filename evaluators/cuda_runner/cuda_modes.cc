// RunCudaOutputs and RunCudaTiming: see cuda_modes.h.

#include "evaluators/cuda_runner/cuda_modes.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <vector>

#include "evaluators/runner/inputs.h"
#include "evaluators/runner/kernel_library.h"

namespace kestrel::cuda_runner {
namespace {

using runner::ArgSet;
using runner::EntryFunction;
using runner::InputKey;
using runner::KernelLibrary;
using Clock = std::chrono::steady_clock;

constexpr double kWarmupSeconds = 0.05;
constexpr double kMinSampleSeconds = 1e-4;  // events resolve ~0.5 us; a kernel above this is timed call by call
constexpr std::size_t kMaxSamples = 100000;

void Check(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) throw CudaFailure(what + ": " + cudaGetErrorString(status));
}

bool IsBuffer(ArgRole role) { return role == ArgRole::kInput || role == ArgRole::kOutput || role == ArgRole::kInOut; }
bool IsInput(ArgRole role) { return role == ArgRole::kInput || role == ArgRole::kInOut; }
bool IsResult(ArgRole role) { return role == ArgRole::kOutput || role == ArgRole::kInOut; }

// One call of the entry, its launch errors and its completion checked.
void CallAndSync(EntryFunction entry, void* const* args) {
  entry(args);
  Check(cudaGetLastError(), "the kernel's launch failed");
  Check(cudaDeviceSynchronize(), "the kernel failed");
}

// The device copy of an ArgSet: one device buffer per buffer argument, and
// the pointer array for kestrel_entry (device pointers for buffers, the
// host ArgSet's pointers for dims and scalars).
class DeviceArgs {
 public:
  DeviceArgs(const JobShape& shape, const InputKey& key) : shape_(&shape), host_(shape, key) {
    buffers_.assign(host_.size(), nullptr);
    pointers_.assign(host_.size(), nullptr);
    for (std::size_t a = 0; a < host_.size(); ++a) {
      if (IsBuffer(shape.args[a].role)) {
        const std::size_t bytes = host_.Bytes(a).size();
        if (bytes > 0) Check(cudaMalloc(&buffers_[a], bytes), "cudaMalloc of " + shape.args[a].name);
        pointers_[a] = buffers_[a];
      } else {
        pointers_[a] = host_.Bytes(a).data();
      }
    }
    Upload(IsBuffer);
  }
  DeviceArgs(const DeviceArgs&) = delete;
  DeviceArgs& operator=(const DeviceArgs&) = delete;
  ~DeviceArgs() {
    for (void* buffer : buffers_) {
      if (buffer != nullptr) cudaFree(buffer);
    }
  }

  void* const* Pointers() const { return pointers_.data(); }
  std::size_t size() const { return host_.size(); }
  ArgRole role(std::size_t a) const { return shape_->args[a].role; }
  const std::string& name(std::size_t a) const { return shape_->args[a].name; }
  ArgSet& host() { return host_; }

  // Host bytes -> device for every buffer argument whose role `select` keeps.
  void Upload(bool (*select)(ArgRole)) {
    for (std::size_t a = 0; a < host_.size(); ++a) {
      if (!IsBuffer(role(a)) || !select(role(a)) || buffers_[a] == nullptr) continue;
      const auto bytes = host_.Bytes(a);
      Check(cudaMemcpy(buffers_[a], bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "copying " + name(a) + " to the device");
    }
  }
  // Poisons the outputs (the host poison of `variant`, copied over them).
  void Poison(int variant) {
    host_.PoisonOutputs(variant);
    Upload([](ArgRole r) { return r == ArgRole::kOutput; });
  }
  // The device bytes of buffer argument a.
  std::vector<std::byte> Download(std::size_t a) const {
    std::vector<std::byte> bytes(host_.Bytes(a).size());
    if (!bytes.empty()) {
      Check(cudaMemcpy(bytes.data(), buffers_[a], bytes.size(), cudaMemcpyDeviceToHost), "copying " + name(a) + " from the device");
    }
    return bytes;
  }

 private:
  const JobShape* shape_;
  ArgSet host_;
  std::vector<void*> buffers_;
  std::vector<void*> pointers_;
};

bool Same(std::span<const std::byte> bytes, const std::vector<std::byte>& copy) {
  return bytes.size() == copy.size() && (bytes.empty() || std::memcmp(bytes.data(), copy.data(), copy.size()) == 0);
}

// A device buffer written over before each sample, so that neither kernel
// finds its data in the L2.
class L2Flusher {
 public:
  explicit L2Flusher(std::int64_t requested) {
    if (requested <= 0) return;
    int device = 0;
    Check(cudaGetDevice(&device), "cudaGetDevice");
    cudaDeviceProp prop{};
    Check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    bytes_ = static_cast<std::size_t>(std::max<std::int64_t>(requested, 2 * static_cast<std::int64_t>(prop.l2CacheSize)));
    Check(cudaMalloc(&buffer_, bytes_), "cudaMalloc of the L2 flush buffer");
  }
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  ~L2Flusher() {
    if (buffer_ != nullptr) cudaFree(buffer_);
  }
  bool enabled() const { return buffer_ != nullptr; }
  void Flush() {
    Check(cudaMemsetAsync(buffer_, ++value_, bytes_, 0), "flushing the L2");
  }

 private:
  void* buffer_ = nullptr;
  std::size_t bytes_ = 0;
  unsigned char value_ = 0;
};

// Resets the persisting-L2 lines (and so any access policy window a kernel
// set up to keep its data in the L2 from one sample to the next).
void ResetPersistingL2() {
  cudaCtxResetPersistingL2Cache();
  cudaGetLastError();  // unsupported on older devices: not an error here
}

class Events {
 public:
  Events() {
    Check(cudaEventCreate(&start_), "cudaEventCreate");
    Check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  ~Events() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void Start() { Check(cudaEventRecord(start_, 0), "cudaEventRecord"); }
  // Seconds since Start(), after the stop event completed.
  double Stop() {
    Check(cudaGetLastError(), "the kernel's launch failed");
    Check(cudaEventRecord(stop_, 0), "cudaEventRecord");
    Check(cudaEventSynchronize(stop_), "the kernel failed");
    float ms = 0;
    Check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

// One kernel's side of the timing of one shape (as in runner/time_mode.cc).
class Timed {
 public:
  Timed(EntryFunction entry, const JobShape& shape, const Job& job, int shape_index) : entry_(entry) {
    for (int b = 0; b < job.buffer_sets; ++b) {
      sets_.push_back(std::make_unique<DeviceArgs>(shape, InputKey{job.seed, shape_index, b}));
    }
  }

  void WarmUp() {
    Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const auto start = Clock::now();
    do {
      CallAndSync(entry_, Next());
    } while (std::chrono::duration<double>(Clock::now() - start).count() < kWarmupSeconds);
    double per_call = 1e9;
    for (int i = 0; i < 3; ++i) {
      events_.Start();
      entry_(Next());
      per_call = std::min(per_call, events_.Stop());
    }
    batch_ = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(kMinSampleSeconds / std::max(per_call, 1e-9))));
  }

  void Sample(L2Flusher& flusher) {
    if (flusher.enabled()) flusher.Flush();
    ResetPersistingL2();
    events_.Start();
    for (std::int64_t i = 0; i < batch_; ++i) entry_(Next());
    const double seconds = events_.Stop();
    total_ += seconds;
    samples_.push_back(seconds / static_cast<double>(batch_));
  }

  bool Done(const Job& job) const {
    return (total_ >= job.min_time_s && static_cast<int>(samples_.size()) >= job.min_samples) ||
           samples_.size() >= kMaxSamples;
  }

  void CallAndWriteOutputs(std::ofstream& out) {
    for (auto& set : sets_) {
      set->Poison(0);
      CallAndSync(entry_, set->Pointers());
      for (std::size_t a = 0; a < set->size(); ++a) {
        if (!IsResult(set->role(a))) continue;
        const auto bytes = set->Download(a);
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      }
    }
  }
  std::vector<double>& samples() { return samples_; }
  std::int64_t batch() const { return batch_; }

 private:
  void* const* Next() {
    void* const* pointers = sets_[next_]->Pointers();
    next_ = (next_ + 1) % sets_.size();
    return pointers;
  }

  EntryFunction entry_;
  std::vector<std::unique_ptr<DeviceArgs>> sets_;
  std::size_t next_ = 0;
  std::int64_t batch_ = 1;
  double total_ = 0;
  std::vector<double> samples_;
  Events events_;
};

}  // namespace

Status RunCudaOutputs(const Job& job, JobResult& result) {
  if (job.libraries.size() != 1) return Fail(Error::InvalidArgument("outputs mode takes one library"));
  std::ofstream out(job.output_file, std::ios::binary | std::ios::trunc);
  if (!out) return Fail(Error::Io("cannot write " + job.output_file.string()));
  auto library = KernelLibrary::Open(job.libraries[0]);
  if (!library) return Fail(library.error());

  for (int s = 0; s < static_cast<int>(job.shapes.size()); ++s) {
    const JobShape& shape = job.shapes[s];
    for (int set = 0; set < job.input_sets; ++set) {
      DeviceArgs args(shape, {job.seed, s, set});  // inputs uploaded, outputs poisoned (variant 0)
      SetCheck check{s, set, {}, false};
      CallAndSync(library->entry(), args.Pointers());
      for (std::size_t a = 0; a < args.size(); ++a) {
        if (args.role(a) == ArgRole::kInput && !Same(args.host().Bytes(a), args.Download(a))) {
          check.inputs_modified.push_back(args.name(a));
        }
      }
      std::vector<std::vector<std::byte>> first(args.size());
      for (std::size_t a = 0; a < args.size(); ++a) {
        if (IsResult(args.role(a))) first[a] = args.Download(a);
      }

      // Second call: the same inputs (inouts restored from the host copy),
      // outputs poisoned differently.
      args.Upload(IsInput);
      args.Poison(1);
      CallAndSync(library->entry(), args.Pointers());
      for (std::size_t a = 0; a < args.size(); ++a) {
        if (IsResult(args.role(a)) && args.Download(a) != first[a]) check.nondeterministic = true;
      }

      for (std::size_t a = 0; a < args.size(); ++a) {
        if (!IsResult(args.role(a))) continue;
        out.write(reinterpret_cast<const char*>(first[a].data()), static_cast<std::streamsize>(first[a].size()));
      }
      result.checks.push_back(std::move(check));
    }
  }
  out.close();
  if (!out) return Fail(Error::Io("cannot write " + job.output_file.string()));
  return {};
}

Status RunCudaTiming(const Job& job, JobResult& result) {
  if (job.libraries.size() != 2) return Fail(Error::InvalidArgument("time mode takes two libraries"));
  std::ofstream timed_out;
  if (!job.timed_output_file.empty()) {
    timed_out.open(job.timed_output_file, std::ios::binary | std::ios::trunc);
    if (!timed_out) return Fail(Error::Io("cannot write " + job.timed_output_file.string()));
  }
  auto candidate = KernelLibrary::Open(job.libraries[0]);
  if (!candidate) return Fail(candidate.error());
  auto reference = KernelLibrary::Open(job.libraries[1]);
  if (!reference) return Fail(reference.error());
  // No persisting-L2 carve-out: a kernel cannot keep data in the L2 across samples.
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  cudaGetLastError();
  L2Flusher flusher(job.flush_bytes);

  for (int s = 0; s < static_cast<int>(job.shapes.size()); ++s) {
    Timed cand(candidate->entry(), job.shapes[s], job, s);
    Timed ref(reference->entry(), job.shapes[s], job, s);
    ref.WarmUp();
    cand.WarmUp();
    std::int64_t flushes = 0;
    while (!cand.Done(job) || !ref.Done(job)) {
      ref.Sample(flusher);
      cand.Sample(flusher);
      if (flusher.enabled()) ++flushes;
    }
    if (timed_out.is_open()) cand.CallAndWriteOutputs(timed_out);
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

}  // namespace kestrel::cuda_runner
