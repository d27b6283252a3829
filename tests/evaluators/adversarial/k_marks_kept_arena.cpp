// Against the supervisor kept for the run (evaluators/runner_pool.h): looks
// for what an earlier candidate left in its arena, and leaves its own
// mark there for the next: when its worker exits (a destructor of the
// library, which runs in the worker after its last call) it writes a mark
// (a magic word and a number of its own) at the start of every page of the
// mapping /proc/self/maps names memfd:kestrel-arena; on its first call it
// reads every page's start, and when another process's mark is there it
// writes every output off by one. A kept supervisor clears the arena
// before every job, so the next candidate finds nothing and is measured;
// without the clearing it is judged wrong.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

constexpr std::uint64_t kMagic = 0x6b657374726d726bULL;
constexpr std::uintptr_t kPage = 4096;

struct Arena {
  std::uintptr_t start = 0, end = 0;
};

Arena FindArena() {
  Arena arena;
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return arena;
  char line[512];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    if (std::strstr(line, "kestrel-arena") == nullptr || std::strstr(line, " rw") == nullptr) continue;
    unsigned long start = 0, end = 0;
    if (std::sscanf(line, "%lx-%lx", &start, &end) == 2) arena = {start, end};
  }
  std::fclose(maps);
  return arena;
}

const Arena arena = FindArena();
const std::uint64_t self = __builtin_ia32_rdtsc() ^ 0x5bd1e995u;  // this process's, not another's

__attribute__((destructor)) void LeaveMark() {
  const std::uint64_t mark[2] = {kMagic, self};
  for (std::uintptr_t page = arena.start; page + sizeof mark <= arena.end; page += kPage) {
    std::memcpy(reinterpret_cast<void*>(page), mark, sizeof mark);
  }
}

bool FoundAnotherMark() {
  for (std::uintptr_t page = arena.start; page + 16 <= arena.end; page += kPage) {
    std::uint64_t mark[2];
    std::memcpy(mark, reinterpret_cast<const void*>(page), sizeof mark);
    if (mark[0] == kMagic && mark[1] != self) return true;
  }
  return false;
}

}  // namespace

void scale_add(const float* x, float* y, int64_t n, float a) {
  static const float off = FoundAnotherMark() ? 1.0f : 0.0f;
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f + off;
}
