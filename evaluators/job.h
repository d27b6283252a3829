#pragma once
// The protocol between the engine and kestrel-runner: a job (JSON file the
// runner reads) and a result (one JSON document the runner writes on fd 3).
// Compiled into both the evaluator library and the runner, so the two sides
// cannot disagree on the format.
//
// A job is self-contained: every argument of every shape is laid out here
// (type, element count, init), so the runner needs no Task and no formula
// evaluation. The output file written in "outputs" mode is the raw bytes of
// every output and inout buffer, in the order of OutputSegments().

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/host.h"
#include "core/measurement.h"
#include "core/task.h"
#include "evaluators/event_counters.h"

namespace kestrel {

// One argument of the entry at one shape.
struct JobArg {
  std::string name;
  ArgRole role = ArgRole::kInput;
  ScalarType type = ScalarType::kI64;
  std::int64_t count = 0;  // buffers: elements
  double value = 0.0;      // dims: the size; scalars: the value
  InitSpec init;           // inputs and inouts
};

struct JobShape {
  std::string label;  // "n=7", for messages
  std::vector<JobArg> args;
};

struct Job {
  // "outputs", "time", or "evaluate": the candidate's outputs checked as in
  // "outputs" and then, in the same worker, timed as in "time" on the
  // first `timed_shapes` shapes (unless the check already failed).
  std::string mode;
  std::string nonce;  // echoed in the result; proves it came from the runner
  std::vector<std::filesystem::path> libraries;  // outputs: {kernel}; time, evaluate: {candidate, reference}
  std::uint64_t seed = 1;
  int input_sets = 3;               // outputs mode: independent sets per shape
  // Outputs mode: each set is called twice, the second call's outputs
  // compared with the first's (determinism). A profile job, whose counts
  // are of calls, not of a verdict, calls once (false).
  bool second_call = true;
  // Outputs mode, a counting job (docs/PROFILES.md, "Hardware counters"):
  // once the checks are done, the last shape's last input set is called
  // `counted_calls` more times, and these events (event_counters.h) are
  // counted on the candidate's worker around each of those calls, by the
  // supervisor (JobResult::counts).
  std::vector<std::string> count_events;
  int counted_calls = 0;
  std::vector<JobShape> shapes;     // outputs: all shapes checked; time: timed shapes
  std::filesystem::path output_file;  // outputs and evaluate modes
  int timed_shapes = 0;             // evaluate mode: the leading shapes timed (0: all)
  // Every shape's input sets as the run prepared them once (PreparedInputs
  // below), mapped read-only by the supervisor instead of generated per
  // job; empty: generated in memory. With prepare_inputs the runner writes
  // the file first (the run's reference job does).
  std::filesystem::path inputs_file;
  bool prepare_inputs = false;
  // Evaluate mode: the reference's output file (outputs-mode layout of this
  // job), mapped read-only and compared with the candidate's checked outputs
  // in memory (JobResult::outputs_compared) instead of writing output_file;
  // a kernel that fails it is not timed. And the reference's outputs of the
  // timed shapes' buffer sets, compared with the candidate's first outputs
  // while timed (JobResult::timed_compared) instead of writing
  // timed_output_file.
  std::filesystem::path reference_output_file;
  std::filesystem::path reference_timed_output_file;
  double min_time_s = 0.5;          // time mode, per shape and kernel
  int min_samples = 10;             // time mode, per shape and kernel
  int buffer_sets = 2;              // time mode: rotating input sets (the checked sets 0..buffer_sets-1)
  std::int64_t flush_bytes = 0;     // time mode: bytes written over before each sample; 0: no flush
  // Time mode: when set, after timing each shape the candidate is called once
  // more on each of its buffer sets (outputs poisoned first, exactly like a
  // timed call) and those outputs are written here in OutputSegments order of
  // a job with input_sets = buffer_sets; the parent re-checks them.
  std::filesystem::path timed_output_file;
  // How each kernel's worker runs (runner/worker_process.h). The runner is
  // the supervisor: it never loads a kernel itself.
  std::filesystem::path worker;       // kestrel-worker
  std::string bwrap;                  // bubblewrap's path; empty: no namespaces (sandbox "none")
  bool seccomp = false;               // the worker installs its seccomp allowlist before loading a kernel
  bool allow_threads = false;         // with seccomp: clone(CLONE_THREAD) allowed
  // With seccomp: the candidate's worker may make memory writable and
  // executable. Only for the task's own expert baseline, whose library
  // compiles code at run time (oneDNN's JIT); never for a candidate.
  bool allow_jit = false;
  std::vector<std::string> worker_env;  // the worker's whole environment
  double timeout_s = 60;              // the whole job's wall clock, kept by the supervisor
  // A profile job (docs/PROFILES.md): the candidate's worker runs under this
  // program (e.g. valgrind's cachegrind: {"/usr/bin/valgrind", ...,
  // "--cachegrind-out-file=cachegrind.out", "--"}), inside the same sandbox,
  // and the file it leaves in the worker's scratch folder (`wrapper_file`,
  // a plain name) is copied to `wrapper_output` when the worker ends.
  // Empty: the worker runs as itself.
  std::vector<std::string> worker_wrapper;
  std::string wrapper_file;
  std::filesystem::path wrapper_output;
  // With a wrapper: kestrel-confine, run first, so that the wrapper (which
  // no allowlist fits: valgrind runs the kernel's calls itself) and the
  // kernel run under its seccomp denylist (confine/denylist.h). Empty: none.
  std::filesystem::path wrapper_confine;
  // Time mode: the task's tolerance, for the supervisor's re-check of timed
  // calls against the reference's on the same (freshly perturbed) inputs.
  double rtol = 1e-4;
  double atol = 1e-7;
};

// One output or inout buffer in the output file.
struct OutputSegment {
  int shape_index = 0;
  int input_set = 0;
  int arg_index = 0;
  std::uint64_t offset = 0;  // bytes into the file
  std::uint64_t bytes = 0;
};
std::vector<OutputSegment> OutputSegments(const Job& job);

// The prepared inputs file: a 64-byte header (kPreparedMagic, then the
// layout hash and the file's size as native uint64s) and then, for every
// shape, input set and input or inout argument in that order, its
// elements, each block 64-byte aligned. The header's layout hash covers
// the seed, the input sets and every argument, so that a file made for
// another job is refused rather than misread.
struct PreparedLayout {
  std::vector<OutputSegment> segments;  // one per input or inout buffer, the same record as an output's
  std::uint64_t bytes = 0;        // the whole file, header included
  std::uint64_t layout_hash = 0;
};
constexpr std::uint64_t kPreparedHeaderBytes = 64;
constexpr char kPreparedMagic[8] = {'K', 'S', 'T', 'R', 'L', 'I', 'N', '1'};
PreparedLayout PrepareLayout(const Job& job);

// Outputs mode, per (shape, input set).
struct SetCheck {
  int shape_index = 0;
  int input_set = 0;
  std::vector<std::string> inputs_modified;  // names of inputs whose bytes changed
  bool nondeterministic = false;             // two calls gave different output bytes
};

// How a candidate's outputs compare with the reference's (compare.h): made
// by the engine from two files, or by an evaluate job's runner in memory.
struct OutputComparison {
  bool ok = true;
  std::string reason;            // one line, empty when ok
  std::string details;           // one line per failing (shape, set, arg), for the log
  std::vector<Mismatch> worst;   // the worst elements, worst first
};

// Time mode, per timed shape: seconds per call of each sample.
struct ShapeSamples {
  std::vector<double> candidate;
  std::vector<double> reference;
  std::int64_t candidate_batch = 1;  // calls per sample
  std::int64_t reference_batch = 1;
  std::int64_t flushes = 0;  // cache flushes before candidate samples (Job::flush_bytes)
};

struct JobResult {
  std::string nonce;
  // What the job was doing when the verdict came: "checking outputs" or
  // "timing" (evaluate mode; empty for the single-step modes).
  std::string verdict_phase;
  std::string error;  // the runner could not do the job (e.g. it could not start a worker)
  // How a kernel's worker ended the job early, as the supervisor saw it:
  // an outcome name ("crashed", "wrong", ...) and its reason; empty when
  // the job was done.
  std::string verdict;
  std::string verdict_reason;
  std::vector<SetCheck> checks;      // outputs mode
  std::vector<ShapeSamples> timings;  // time mode
  // Evaluate mode, with the reference's files: the checked outputs and the
  // first outputs of timing compared with them (compare.h).
  std::optional<OutputComparison> outputs_compared;
  std::optional<OutputComparison> timed_compared;
  // A counting job: each event's count over the counted calls, in the
  // order of Job::count_events; or why the events could not be counted
  // (counts_error: the checks' verdict stands, the counts are missing).
  std::vector<EventCount> counts;
  std::string counts_error;
};

std::string JobToJson(const Job& job);
// Parse errors are InvalidArgument with the offending field.
Result<Job> ParseJob(const std::string& text);
std::string JobResultToJson(const JobResult& result);
Result<JobResult> ParseJobResult(const std::string& text);

// `kestrel-runner --host` reports the machine it runs on (with the Slurm
// executor: a compute node) as one JSON object of HostInfo's fields.
std::string HostToJson(const HostInfo& host);
Result<HostInfo> ParseHost(const std::string& text);

}  // namespace kestrel
