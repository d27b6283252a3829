#include "evaluators/profile_sources.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "evaluators/compiler_remarks.h"
#include "evaluators/event_counters.h"
#include "evaluators/subprocess.h"

namespace kestrel {
namespace {

std::optional<std::string> InPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    const std::filesystem::path candidate = std::filesystem::path(std::string(dirs.substr(0, colon))) / program;
    std::error_code error;
    if (!dirs.substr(0, colon).empty() && std::filesystem::is_regular_file(candidate, error) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
  }
  return std::nullopt;
}

// The first line a program prints for `argv`, or nullopt when it fails.
std::optional<std::string> FirstLine(const std::vector<std::string>& argv) {
  SubprocessOptions options;
  options.argv = argv;
  options.env = EnvironmentWith({"LC_ALL=C"});
  options.timeout_s = 20;
  auto run = RunSubprocess(options);
  if (!run || !run->Succeeded()) return std::nullopt;
  return run->log.substr(0, run->log.find('\n'));
}

}  // namespace

std::string PmuUnavailableReason() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_INSTRUCTIONS;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) {
    ::close(static_cast<int>(fd));
    return "";
  }
  return "pmu: perf_event_open(PERF_TYPE_HARDWARE) failed: " + PerfOpenFailure(errno);
}

std::optional<std::string> CachegrindValgrind() {
  const std::optional<std::string> valgrind = InPath("valgrind");
  if (!valgrind) return std::nullopt;
  // The tool is a separate file of the package (Debian: /usr/libexec/valgrind).
  for (const char* dir : {"/usr/libexec/valgrind", "/usr/lib/x86_64-linux-gnu/valgrind", "/usr/lib/valgrind"}) {
    std::error_code error;
    for (const char* tool : {"cachegrind-amd64-linux", "cachegrind-arm64-linux"}) {
      if (std::filesystem::exists(std::filesystem::path(dir) / tool, error)) return valgrind;
    }
  }
  return std::nullopt;
}

std::string NcuUnavailableReason() {
  const std::optional<std::string> ncu = InPath("ncu");
  std::error_code error;
  const bool gpu = std::filesystem::exists("/dev/nvidia0", error) || std::filesystem::exists("/dev/nvidiactl", error);
  if (!ncu && !gpu) return "ncu: no GPU (/dev/nvidia0) and no Nsight Compute (ncu) in $PATH";
  if (!ncu) return "ncu: Nsight Compute (ncu) is not in $PATH";
  if (!gpu) return "ncu: no GPU (/dev/nvidia0)";
  return "";
}

std::vector<ProfileSource> DetectProfileSources(const std::string& compiler) {
  std::vector<ProfileSource> sources;
  const std::string pmu = PmuUnavailableReason();
  sources.push_back({"pmu", pmu.empty(), pmu.empty() ? "hardware counters readable (perf_event_open)" : pmu});
  if (const auto valgrind = CachegrindValgrind()) {
    sources.push_back({"cachegrind", true, FirstLine({*valgrind, "--version"}).value_or(*valgrind)});
  } else {
    sources.push_back({"cachegrind", false, "cachegrind: valgrind is not installed (Debian: apt-get install valgrind)"});
  }
  if (const auto objdump = FirstLine({"objdump", "--version"})) {
    sources.push_back({"objdump", true, *objdump});
  } else {
    sources.push_back({"objdump", false, "objdump: not in $PATH (Debian: binutils)"});
  }
  if (const auto version = FirstLine({compiler, "--version"})) {
    sources.push_back({"compiler remarks", true, *version + " (" + RemarkFlags(*version).front() + ")"});
  } else {
    sources.push_back({"compiler remarks", false, "compiler remarks: " + compiler + " --version fails"});
  }
  const std::string ncu = NcuUnavailableReason();
  sources.push_back({"ncu", ncu.empty(), ncu.empty() ? "Nsight Compute and a GPU" : ncu});
  return sources;
}

namespace {

// Counts of one "LINE count count ..." line into `totals` (missing trailing
// counts are zeros); false when a field is not a number.
bool AddCounts(std::string_view line, const std::vector<std::string>& events, std::map<std::string, double>& totals) {
  std::size_t column = 0;
  while (!line.empty()) {
    const std::size_t space = line.find(' ');
    const std::string value(line.substr(0, space));
    line = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    if (value.empty()) continue;  // a doubled or trailing space
    char* stop = nullptr;
    const double count = std::strtod(value.c_str(), &stop);
    if (stop == nullptr || *stop != '\0' || !(count >= 0)) return false;
    if (column > 0 && column <= events.size()) totals[events[column - 1]] += count;
    ++column;
  }
  return true;
}

// What valgrind's own file always holds: lines that add up to its summary,
// and no level of the cache missing more often than it is accessed. The
// kernel runs in valgrind's process and may write the file itself (or keep
// valgrind from writing it): a forgery that gets these wrong is refused.
// One that gets them right is not caught here, which is why simulated counts
// steer prompts and are never a verdict (docs/PROFILES.md).
Status CheckCachegrindTotals(const std::map<std::string, double>& lines, const std::map<std::string, double>& summary) {
  for (const auto& [event, total] : lines) {
    const auto said = summary.find(event);
    if (said == summary.end() || said->second != total) {
      return Fail(Error::InvalidArgument(
          "cachegrind output: its lines add up to " + std::to_string(static_cast<long long>(total)) + " " + event +
          " but its summary says " +
          (said == summary.end() ? std::string("nothing") : std::to_string(static_cast<long long>(said->second))) +
          ": not valgrind's file (did the kernel write it?)"));
    }
  }
  const auto get = [&](const char* event) {
    const auto found = summary.find(event);
    return found == summary.end() ? 0.0 : found->second;
  };
  const std::pair<const char*, const char*> nested[] = {{"I1mr", "Ir"},   {"ILmr", "I1mr"}, {"D1mr", "Dr"},
                                                        {"DLmr", "D1mr"}, {"D1mw", "Dw"},   {"DLmw", "D1mw"}};
  for (const auto& [misses, accesses] : nested) {
    if (get(misses) > get(accesses)) {
      return Fail(Error::InvalidArgument(std::string("cachegrind output: more ") + misses + " than " + accesses +
                                         ": not valgrind's file (did the kernel write it?)"));
    }
  }
  return {};
}

}  // namespace

Result<std::map<std::string, double>> ParseCachegrind(std::string_view text, const std::set<std::string>& functions) {
  std::vector<std::string> events;
  std::map<std::string, double> totals;   // the kernel's functions
  std::map<std::string, double> all;      // every line
  std::map<std::string, double> summary;  // the summary: line
  bool counting = false;                  // inside an fn= block of one of `functions`
  bool summarized = false;
  int number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    if (line.empty()) continue;
    if (line.substr(0, 8) == "events: ") {
      std::string_view names = line.substr(8);
      while (!names.empty()) {
        const std::size_t space = names.find(' ');
        if (space != 0) events.emplace_back(names.substr(0, space));
        names = space == std::string_view::npos ? std::string_view() : names.substr(space + 1);
      }
      for (const auto& event : events) totals[event] = all[event] = 0;
    } else if (line.substr(0, 9) == "summary: ") {
      if (summarized || events.empty() || !AddCounts("0 " + std::string(line.substr(9)), events, summary)) {
        return Fail(Error::InvalidArgument("cachegrind output line " + std::to_string(number) + ": a bad summary"));
      }
      summarized = true;
    } else if (line.substr(0, 3) == "fn=") {
      counting = functions.count(std::string(line.substr(3))) > 0;
    } else if (line.substr(0, 3) == "fl=" || line.find(':') != std::string_view::npos) {
      continue;  // a file, or desc:/cmd: lines
    } else {
      if (events.empty()) {
        return Fail(Error::InvalidArgument("cachegrind output line " + std::to_string(number) + ": counts before events:"));
      }
      if (!AddCounts(line, events, all) || (counting && !AddCounts(line, events, totals))) {
        return Fail(Error::InvalidArgument("cachegrind output line " + std::to_string(number) + ": not a count: " +
                                           std::string(line.substr(0, 80))));
      }
    }
  }
  if (events.empty()) return Fail(Error::InvalidArgument("cachegrind output: no events: line"));
  if (!summarized) return Fail(Error::InvalidArgument("cachegrind output: no summary: line (valgrind always writes one)"));
  if (auto checked = CheckCachegrindTotals(all, summary); !checked) return Fail(checked.error());
  return totals;
}

CounterProfile CachegrindCounters(const std::map<std::string, double>& totals, double calls, double elements,
                                  const std::string& shape) {
  const auto get = [&totals](const char* event) {
    const auto found = totals.find(event);
    return found == totals.end() ? 0.0 : found->second;
  };
  CounterProfile counters;
  counters.source = "cachegrind";
  counters.shape = shape;
  const double per = calls * elements;
  if (per > 0 && totals.count("Ir")) counters.instructions = get("Ir") / per;
  const double accesses = get("Dr") + get("Dw");
  if (accesses > 0 && totals.count("D1mr")) counters.d1_miss_rate = (get("D1mr") + get("D1mw")) / accesses;
  if (accesses > 0 && totals.count("DLmr")) counters.ll_miss_rate = (get("DLmr") + get("DLmw")) / accesses;
  if (per > 0 && totals.count("D1mr")) counters.cache_misses = (get("D1mr") + get("D1mw")) / per;
  return counters;
}

CounterProfile PmuCounters(const std::vector<EventCount>& counts, double calls, double elements,
                           const std::string& shape) {
  const auto get = [&counts](std::string_view event) -> std::optional<double> {
    for (const EventCount& count : counts) {
      if (count.name == event && count.running_s > 0) return count.value;
    }
    return std::nullopt;  // not counted, or never on a counter
  };
  CounterProfile counters;
  counters.source = "pmu";
  counters.shape = shape;
  const double per = calls * elements;
  const auto cycles = get("cycles");
  const auto instructions = get("instructions");
  const auto loads = get("L1-dcache-loads");
  const auto l1_misses = get("L1-dcache-load-misses");
  const auto ll_misses = get("cache-misses");
  const auto branch_misses = get("branch-misses");
  if (per > 0) {
    if (cycles) counters.cycles = *cycles / per;
    if (instructions) counters.instructions = *instructions / per;
    if (l1_misses) counters.cache_misses = *l1_misses / per;
    if (branch_misses) counters.branch_misses = *branch_misses / per;
  }
  if (cycles && instructions && *cycles > 0) counters.ipc = *instructions / *cycles;
  if (loads && *loads > 0) {
    if (l1_misses) counters.d1_miss_rate = *l1_misses / *loads;
    if (ll_misses) counters.ll_miss_rate = *ll_misses / *loads;
  }
  return counters;
}

}  // namespace kestrel
