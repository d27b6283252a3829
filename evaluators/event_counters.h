#pragma once
// Counting another process's events with perf_event_open, as `perf stat -p`
// does: the hardware counters of a profile (docs/PROFILES.md, "Hardware
// counters"), and the kernel's software events that every Linux has (what
// the tests count on a machine without a PMU).
//
// The supervisor (kestrel-runner) opens the counters on its candidate's
// worker and switches them on around each counted call, so the kernel never
// holds a counter's descriptor: it cannot reset, stop or read them, and
// perf_event_open is outside its allowlist. Only user-space events are
// counted (exclude_kernel), which is also all that perf_event_paranoid 2
// lets an unprivileged process count.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace kestrel {

// A countable event by the name `perf list` gives it.
struct CounterEvent {
  std::string_view name;     // "cycles", "L1-dcache-load-misses", "page-faults"
  std::uint32_t type = 0;    // PERF_TYPE_HARDWARE, PERF_TYPE_HW_CACHE, PERF_TYPE_SOFTWARE
  std::uint64_t config = 0;
};

// The events a job may name: cycles, instructions, cache-references,
// cache-misses, branch-misses, L1-dcache-loads, L1-dcache-load-misses
// (hardware); task-clock, page-faults, context-switches (software).
const std::vector<CounterEvent>& CounterEvents();
// nullptr for a name not in that list.
const CounterEvent* FindCounterEvent(std::string_view name);

// The events a profile counts where the machine has a PMU.
const std::vector<std::string>& PmuEvents();

// One event's count over the time it was switched on. When the kernel had
// more events than counters it counted each for part of that time
// (multiplexing): `value` is then scaled up by enabled / running, as perf
// stat does.
struct EventCount {
  std::string name;
  double value = 0;      // scaled
  double raw = 0;        // as read
  double enabled_s = 0;  // seconds switched on
  double running_s = 0;  // seconds actually on a counter
};

// Why perf_event_open failed, in words, from its errno: "No such file or
// directory (ENOENT): this machine exposes no hardware counters (a VM
// without a virtual PMU?)".
std::string PerfOpenFailure(int error);

class EventCounters {
 public:
  // Opens every event on `pid` (0: this process) and its threads started
  // from now on, switched off. An error names the first event that could
  // not be opened and why ("perf_event_open(cycles): ...").
  static Result<EventCounters> Open(pid_t pid, const std::vector<std::string>& names);
  EventCounters(EventCounters&& other) noexcept;
  EventCounters& operator=(EventCounters&& other) noexcept;
  EventCounters(const EventCounters&) = delete;
  EventCounters& operator=(const EventCounters&) = delete;
  ~EventCounters();

  // Switch every counter on or off (ioctl); an error says which failed.
  Status Enable();
  Status Disable();
  // Every event's count so far, in the order opened.
  Result<std::vector<EventCount>> Read() const;

 private:
  EventCounters() = default;
  void Close();
  std::vector<std::string> names_;
  std::vector<int> fds_;
};

}  // namespace kestrel
