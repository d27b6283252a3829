#pragma once
// The sources a profile (core/profile.h, docs/PROFILES.md) is made from, and
// whether each works on this machine: hardware counters (the PMU, through
// perf_event_open), valgrind's cachegrind, objdump, the compiler's
// vectorization remarks and Nsight Compute (ncu). `kestrel doctor` lists
// them; a profile names the ones it lacked in `unavailable`.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/profile.h"
#include "evaluators/event_counters.h"

namespace kestrel {

struct ProfileSource {
  std::string name;    // "pmu", "cachegrind", "objdump", "compiler remarks", "ncu"
  bool works = false;
  std::string detail;  // what it is when it works ("valgrind-3.19.0"), why not otherwise
};

// Why this machine's hardware counters cannot be read ("" when they can):
// perf_event_open of PERF_TYPE_HARDWARE instructions on this process, e.g.
// "pmu: perf_event_open(PERF_TYPE_HARDWARE) failed: No such file or
// directory (ENOENT: this machine exposes no hardware counters; a VM
// without a virtual PMU)".
std::string PmuUnavailableReason();

// valgrind's absolute path when it is installed with its cachegrind tool.
std::optional<std::string> CachegrindValgrind();

// Nsight Compute's ncu and a GPU ("" when both are present), else why not.
std::string NcuUnavailableReason();

// Every source, in the order above; `compiler` is the configured one.
std::vector<ProfileSource> DetectProfileSources(const std::string& compiler);

// What a cachegrind output file (cachegrind.out.*) counts for `functions`
// (symbol names as objdump prints them, unmangled by valgrind's
// --demangle=no): event name ("Ir", "Dr", "D1mr", ...) -> total. Pure; an
// InvalidArgument naming the line when the file is not cachegrind's.
Result<std::map<std::string, double>> ParseCachegrind(std::string_view text, const std::set<std::string>& functions);

// Counters per element from those totals, over `calls` calls of a shape of
// `elements` elements: instructions, D1 and LL miss rates per data access.
CounterProfile CachegrindCounters(const std::map<std::string, double>& totals, double calls, double elements,
                                  const std::string& shape);

// Counters per element from a counting job's PMU counts (PmuEvents) over
// `calls` calls of a shape of `elements` elements: cycles, instructions and
// IPC; L1 data load misses per element and per L1 data load; last-level
// misses (perf's cache-misses) per L1 data load; branch misses per
// element. An event missing from `counts`, or never given a counter
// (running_s 0), leaves its figures out.
CounterProfile PmuCounters(const std::vector<EventCount>& counts, double calls, double elements,
                           const std::string& shape);

}  // namespace kestrel
