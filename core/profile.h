#pragma once
// A profile of a measured candidate (issue 18, docs/PROFILES.md): where it
// sits on the host's roofline, what counters (hardware or simulated) say,
// what the compiler did with its loops, what instructions the built code is
// made of, and how its time per element scales across the timed shapes.
// Plain data, the same for every evaluator; a source that is not available
// on this machine leaves its part empty and says why in `unavailable`.
//
// The digest (ProfileDigest) is the few hundred tokens of plain text that
// prompts, `kestrel show --profile` and the report quote: one function, so
// they always agree.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/error.h"

namespace kestrel {

// The largest timed shape's position on the host's roofline (core/roofline.h).
struct RooflinePosition {
  std::string shape;            // "n=4194304"
  double intensity = 0.0;       // flops per byte; 0 when the task has no formulas
  double gflops = 0.0;          // achieved
  double gbps = 0.0;            // achieved
  double peak_gflops = 0.0;     // the host's, calibrated
  double bandwidth_gbps = 0.0;  // of `level`, calibrated
  std::string level;            // "L1", "L2", "L3", "DRAM": the smallest that holds the working set
  std::string bound;            // "compute" or "memory"; "" when unknown
  double fraction = 0.0;        // of the roofline reached (1: at the hardware's limit)
};

// Counters per element of the profiled shape (elements: the task's largest
// output), from the PMU (`source` "pmu") or from cachegrind ("cachegrind").
// A field the source does not give is nullopt.
struct CounterProfile {
  std::string source;  // "pmu" | "cachegrind"
  std::string shape;   // the shape counted
  std::optional<double> cycles;        // per element
  std::optional<double> instructions;  // per element
  std::optional<double> ipc;
  std::optional<double> d1_miss_rate;    // misses per data access (0..1)
  std::optional<double> ll_miss_rate;    // last-level misses per data access
  std::optional<double> cache_misses;    // per element
  std::optional<double> branch_misses;   // per element
};

// What the built code's instructions are (objdump -d of the kernel's own symbols).
struct InstructionMix {
  int total = 0;        // instructions in the kernel's functions
  int packed_fp = 0;    // packed (SIMD) floating-point arithmetic
  int scalar_fp = 0;    // scalar floating-point arithmetic
  int vector_bits = 0;  // widest vector register used: 0, 128 (xmm), 256 (ymm), 512 (zmm)
  int isa_vector_bits = 0;  // widest the host's ISA offers
  int divisions = 0;    // div/sqrt instructions (fp and integer)
  int gathers = 0;
  int fma = 0;
  std::vector<std::string> calls;  // functions called outside the kernel (libm: expf, ...)
};

// Vectorization remarks of the compiler for the kernel's own lines.
struct CompilerRemarks {
  std::string compiler;             // "g++ 12.2.0"
  std::vector<std::string> vectorized;  // "kernel.cpp:12: loop vectorized using 32 byte vectors"
  std::vector<std::string> missed;      // "kernel.cpp:20: not vectorized: ..."
};

// Time per element of each timed shape, smallest first.
struct ShapeScalingPoint {
  std::string shape;
  double elements = 0.0;
  double ns_per_element = 0.0;
};

// What one source cost while profiling (wall clock): where `seconds` went.
struct ProfileCost {
  std::string source;  // "objdump", "compiler remarks", "cachegrind", ...
  double seconds = 0.0;
};

struct Profile {
  std::optional<RooflinePosition> roofline;
  std::optional<CounterProfile> counters;
  std::optional<InstructionMix> mix;
  std::optional<CompilerRemarks> remarks;
  std::vector<ShapeScalingPoint> scaling;
  std::vector<std::string> unavailable;  // "pmu: this machine exposes no hardware counters"
  double seconds = 0.0;                  // what profiling cost (wall clock)
  std::vector<ProfileCost> costs;        // per source, in the order taken
};

nlohmann::json ProfileToJson(const Profile& profile);
// A malformed document is InvalidArgument naming the field.
Result<Profile> ProfileFromJson(const nlohmann::json& json);

// A few hundred tokens of plain text with the numbers above, for prompts,
// `show --profile` and the report. Deterministic.
std::string ProfileDigest(const Profile& profile);

}  // namespace kestrel
