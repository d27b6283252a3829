#include "evaluators/event_counters.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace kestrel {
namespace {

constexpr std::uint64_t HwCache(std::uint64_t cache, std::uint64_t op, std::uint64_t result) {
  return cache | (op << 8) | (result << 16);
}

const char* ErrnoName(int error) {
  switch (error) {
    case ENOENT: return "ENOENT";
    case ENODEV: return "ENODEV";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOSYS: return "ENOSYS";
    case EINVAL: return "EINVAL";
    case ESRCH: return "ESRCH";
    case EMFILE: return "EMFILE";
    default: return "errno";
  }
}

}  // namespace

const std::vector<CounterEvent>& CounterEvents() {
  static const std::vector<CounterEvent> events = {
      {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
      {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
      {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
      {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
      {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
      {"L1-dcache-loads", PERF_TYPE_HW_CACHE,
       HwCache(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS)},
      {"L1-dcache-load-misses", PERF_TYPE_HW_CACHE,
       HwCache(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)},
      {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
      {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
      {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
  };
  return events;
}

const CounterEvent* FindCounterEvent(std::string_view name) {
  for (const CounterEvent& event : CounterEvents()) {
    if (event.name == name) return &event;
  }
  return nullptr;
}

const std::vector<std::string>& PmuEvents() {
  static const std::vector<std::string> events = {"cycles",          "instructions",         "cache-misses",
                                                  "branch-misses",   "L1-dcache-loads",      "L1-dcache-load-misses"};
  return events;
}

std::string PerfOpenFailure(int error) {
  std::string why;
  switch (error) {
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP:
      why = "this machine exposes no hardware counters (a VM without a virtual PMU?)";
      break;
    case EACCES:
    case EPERM:
      why = "not permitted (kernel.perf_event_paranoid, or a container's seccomp policy)";
      break;
    case ENOSYS:
      why = "the kernel has no perf events";
      break;
    case ESRCH:
      why = "the process is gone";
      break;
    default:
      why = "unexpected";
  }
  return std::string(std::strerror(error)) + " (" + ErrnoName(error) + "): " + why;
}

Result<EventCounters> EventCounters::Open(pid_t pid, const std::vector<std::string>& names) {
  EventCounters counters;
  for (const std::string& name : names) {
    const CounterEvent* event = FindCounterEvent(name);
    if (event == nullptr) return Fail(Error::InvalidArgument("unknown counter event '" + name + "'"));
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = event->type;
    attr.config = event->config;
    attr.disabled = 1;
    attr.inherit = 1;  // threads the kernel starts while counted
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    const long fd = ::syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
      return Fail(Error::Unsupported("perf_event_open(" + name + "): " + PerfOpenFailure(errno)));
    }
    counters.fds_.push_back(static_cast<int>(fd));
    counters.names_.push_back(name);
  }
  return counters;
}

EventCounters::EventCounters(EventCounters&& other) noexcept
    : names_(std::move(other.names_)), fds_(std::exchange(other.fds_, {})) {}

EventCounters& EventCounters::operator=(EventCounters&& other) noexcept {
  if (this != &other) {
    Close();
    names_ = std::move(other.names_);
    fds_ = std::exchange(other.fds_, {});
  }
  return *this;
}

EventCounters::~EventCounters() { Close(); }

void EventCounters::Close() {
  for (int fd : fds_) ::close(fd);
  fds_.clear();
}

Status EventCounters::Enable() {
  for (std::size_t i = 0; i < fds_.size(); ++i) {
    if (::ioctl(fds_[i], PERF_EVENT_IOC_ENABLE, 0) != 0) {
      return Fail(Error::Io("enabling the counter of " + names_[i] + ": " + std::strerror(errno)));
    }
  }
  return {};
}

Status EventCounters::Disable() {
  for (std::size_t i = 0; i < fds_.size(); ++i) {
    if (::ioctl(fds_[i], PERF_EVENT_IOC_DISABLE, 0) != 0) {
      return Fail(Error::Io("disabling the counter of " + names_[i] + ": " + std::strerror(errno)));
    }
  }
  return {};
}

Result<std::vector<EventCount>> EventCounters::Read() const {
  std::vector<EventCount> counts;
  for (std::size_t i = 0; i < fds_.size(); ++i) {
    std::uint64_t values[3] = {0, 0, 0};  // value, time enabled, time running (ns)
    const ssize_t got = ::read(fds_[i], values, sizeof values);
    if (got != static_cast<ssize_t>(sizeof values)) {
      return Fail(Error::Io("reading the counter of " + names_[i] + ": " +
                            (got < 0 ? std::string(std::strerror(errno)) : "short read")));
    }
    EventCount count;
    count.name = names_[i];
    count.raw = static_cast<double>(values[0]);
    count.enabled_s = static_cast<double>(values[1]) * 1e-9;
    count.running_s = static_cast<double>(values[2]) * 1e-9;
    count.value = values[2] > 0 && values[2] < values[1]
                      ? count.raw * static_cast<double>(values[1]) / static_cast<double>(values[2])
                      : count.raw;
    counts.push_back(std::move(count));
  }
  return counts;
}

}  // namespace kestrel
