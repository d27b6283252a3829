// What a process's first access to a page costs on this machine, however
// the page was mapped (not a Google Benchmark: each case is a fresh process,
// since the cost is per process). The evaluator's supervisor and its two
// workers are fresh processes per job, each touching the call slots of
// shared memory (runner/shared_region.h) that it uses: where a first access
// costs microseconds even on a populated mapping (a VM whose hypervisor
// builds its page tables lazily), that is a fixed cost of every job, which
// only processes kept from job to job avoid. Prints a markdown table.

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace {

constexpr std::size_t kBytes = 128ULL << 20;
constexpr std::size_t kPage = 4096;
using Clock = std::chrono::steady_clock;

// Microseconds per 4 KiB page of one write to each page of [data, data + kBytes).
double WriteEachPage(char* data) {
  const auto start = Clock::now();
  for (std::size_t at = 0; at < kBytes; at += kPage) data[at] = 2;
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / (kBytes / kPage);
}

// Runs `measure` in a child process; its figure comes back through a pipe.
double InChild(const std::function<double()>& measure) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    const double figure = measure();
    (void)!::write(fds[1], &figure, sizeof figure);
    ::_exit(0);
  }
  double figure = -1;
  (void)!::read(fds[0], &figure, sizeof figure);
  ::waitpid(pid, nullptr, 0);
  ::close(fds[0]);
  ::close(fds[1]);
  return figure;
}

char* MapShared(int fd, bool populate) {
  void* data = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
  return data == MAP_FAILED ? nullptr : static_cast<char*>(data);
}

}  // namespace

int main() {
  const int fd = ::memfd_create("first-touch", MFD_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, kBytes) != 0) return 1;
  char* shared = MapShared(fd, true);
  if (shared == nullptr) return 1;
  std::printf("## What a first access to a page costs (`bench/first_touch`)\n\n");
  std::printf("128 MiB, one write per 4 KiB page, each case in a fresh process but the first.\n\n");
  std::printf("| mapping | first write, us per page | second write, us per page |\n| --- | ---: | ---: |\n");
  const double creator = WriteEachPage(shared);
  std::printf("| shared memory, `MAP_POPULATE`, the process that made it | %.2f | %.3f |\n", creator,
              WriteEachPage(shared));
  const auto shared_case = [&](const char* name, bool populate, bool populate_write) {
    double second = 0;
    const double first = InChild([&] {
      char* data = MapShared(fd, populate);
      if (data == nullptr) return -1.0;
      if (populate_write) (void)::madvise(data, kBytes, MADV_POPULATE_WRITE);
      const double once = WriteEachPage(data);
      return once;
    });
    second = InChild([&] {
      char* data = MapShared(fd, populate);
      if (data == nullptr) return -1.0;
      WriteEachPage(data);
      return WriteEachPage(data);
    });
    std::printf("| %s | %.2f | %.3f |\n", name, first, second);
  };
  shared_case("the same shared memory mapped by another process", false, false);
  shared_case("the same, `MAP_POPULATE`", true, false);
  shared_case("the same, `MAP_POPULATE` and `MADV_POPULATE_WRITE`", true, true);
  const auto anonymous_case = [&](const char* name, bool huge) {
    const double first = InChild([&] {
      void* data = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (data == MAP_FAILED) return -1.0;
      if (huge) (void)::madvise(data, kBytes, MADV_HUGEPAGE);
      (void)::madvise(data, kBytes, MADV_POPULATE_WRITE);
      return WriteEachPage(static_cast<char*>(data));
    });
    std::printf("| %s | %.2f | - |\n", name, first);
  };
  anonymous_case("private anonymous memory, `MADV_POPULATE_WRITE`", false);
  anonymous_case("the same with `MADV_HUGEPAGE` (2 MiB pages where THP allows)", true);
  return 0;
}
