#include "evaluators/profile_sources.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "evaluators/compiler_remarks.h"
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

const char* ErrnoName(int error) {
  switch (error) {
    case ENOENT: return "ENOENT";
    case ENODEV: return "ENODEV";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOSYS: return "ENOSYS";
    case EINVAL: return "EINVAL";
    default: return "errno";
  }
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
  const int error = errno;
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
    default:
      why = "unexpected";
  }
  return "pmu: perf_event_open(PERF_TYPE_HARDWARE) failed: " + std::string(std::strerror(error)) + " (" +
         ErrnoName(error) + "): " + why;
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

Result<std::map<std::string, double>> ParseCachegrind(std::string_view text, const std::set<std::string>& functions) {
  std::vector<std::string> events;
  std::map<std::string, double> totals;
  bool counting = false;  // inside an fn= block of one of `functions`
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
      for (const auto& event : events) totals[event] = 0;
    } else if (line.substr(0, 3) == "fn=") {
      counting = functions.count(std::string(line.substr(3))) > 0;
    } else if (line.substr(0, 3) == "fl=" || line.find(':') != std::string_view::npos) {
      continue;  // a file, or desc:/cmd:/summary: lines
    } else if (counting) {
      if (events.empty()) {
        return Fail(Error::InvalidArgument("cachegrind output line " + std::to_string(number) + ": counts before events:"));
      }
      // "LINE count count ...": missing trailing counts are zeros.
      std::size_t column = 0;
      std::string_view rest = line;
      while (!rest.empty()) {
        const std::size_t space = rest.find(' ');
        const std::string value(rest.substr(0, space));
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
        char* stop = nullptr;
        const double count = std::strtod(value.c_str(), &stop);
        if (value.empty() || stop == nullptr || *stop != '\0') {
          return Fail(Error::InvalidArgument("cachegrind output line " + std::to_string(number) + ": not a count: " +
                                             value));
        }
        if (column > 0 && column <= events.size()) totals[events[column - 1]] += count;
        ++column;
      }
    }
  }
  if (events.empty()) return Fail(Error::InvalidArgument("cachegrind output: no events: line"));
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

}  // namespace kestrel
