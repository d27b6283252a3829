// Invented, one thread: replies "done" before the sample's work is done,
// without a second thread. On its first call it overwrites the worker's GOT
// entry for write() (the worker is its own process's main program, linked
// with lazy binding) with a hook, and the hook on read() tells it how many
// calls each run holds. Then, in every run, it defers the calls between the
// first and the last (notes their arguments and returns at once); when the
// worker writes its 'D' after the last call, the hook sends the 'D' and only
// then computes the deferred calls. The supervisor's clock stopped at the
// 'D': the deferred work runs while the reference's sample runs on the same
// core, where it also slows the reference. It keeps the deferred CPU time
// under the evaluator's idle slack (about 15 ms and 3% of the time since its
// first call), so that a check of the worker's idle CPU time alone does not
// see it.
//
// With LEAVE_LAST_MIDDLE defined to 1 (the test prepends it), it defers
// instead the middle half of each run's last call, whose edges it writes:
// against the frozen look at the last call's outputs, which once read only
// their first and last elements.
//
// DEFER_BUDGET_S and DEFER_BUDGET_SHARE set the deferred CPU time it allows
// itself: by default 15 ms + 3% of the time since its first call, under the
// old idle slack (20 ms + 5% of the idle time); the test also prepends 1.5 ms
// + 0.5%, under the one-thread slack of 2 ms + 2%.
#ifndef LEAVE_LAST_MIDDLE
#define LEAVE_LAST_MIDDLE 0
#endif
#ifndef DEFER_BUDGET_S
#define DEFER_BUDGET_S 0.015
#endif
#ifndef DEFER_BUDGET_SHARE
#define DEFER_BUDGET_SHARE 0.03
#endif
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace {

struct Deferred {
  const float* x;
  float* y;
  int64_t n;
  float a;
};

using WriteFn = ssize_t (*)(int, const void*, size_t);
using ReadFn = ssize_t (*)(int, void*, size_t);
WriteFn real_write = nullptr;
ReadFn real_read = nullptr;
bool hooked = false;

Deferred pending[4096];
int pending_count = 0;
uint32_t run_calls = 0;   // calls in the current run (from the kRun message)
uint32_t call_in_run = 0;
double hidden_cpu = 0;     // seconds computed after a 'D'
double first_call = -1;

double Now(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void Compute(const Deferred& d) {
  for (int64_t i = 0; i < d.n; ++i) d.y[i] = d.a * d.x[i] + 1.0f;
}

ssize_t HookedWrite(int fd, const void* data, size_t bytes) {
  if (fd == 3 && bytes == 1 && *static_cast<const char*>(data) == 'D' && pending_count > 0) {
    const ssize_t put = real_write(fd, data, bytes);  // the supervisor's clock stops here
    const double before = Now(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < pending_count; ++i) Compute(pending[i]);
    hidden_cpu += Now(CLOCK_THREAD_CPUTIME_ID) - before;
    pending_count = 0;
    return put;
  }
  return real_write(fd, data, bytes);
}

ssize_t HookedRead(int fd, void* into, size_t bytes) {
  const ssize_t got = real_read(fd, into, bytes);
  if (fd == 3 && got == 12) {  // a Message: kind, a, b
    uint32_t words[3];
    std::memcpy(words, into, sizeof words);
    if (words[0] == 2) {  // kRun
      run_calls = words[2];
      call_in_run = 0;
    }
  }
  return got;
}

// The main program's GOT slot of `name` (its PLT relocations).
void** GotSlot(const char* name) {
  struct Found {
    const char* name;
    void** slot;
  } found{name, nullptr};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* found = static_cast<Found*>(data);
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') return 0;  // the main program only
        const ElfW(Dyn)* dynamic = nullptr;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
            dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
          }
        }
        if (dynamic == nullptr) return 1;
        const auto absolute = [&](ElfW(Addr) value) {
          return value < info->dlpi_addr ? value + info->dlpi_addr : value;
        };
        const ElfW(Rela)* relocations = nullptr;
        size_t bytes = 0;
        const ElfW(Sym)* symbols = nullptr;
        const char* strings = nullptr;
        for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
          if (d->d_tag == DT_JMPREL) relocations = reinterpret_cast<const ElfW(Rela)*>(absolute(d->d_un.d_ptr));
          if (d->d_tag == DT_PLTRELSZ) bytes = d->d_un.d_val;
          if (d->d_tag == DT_SYMTAB) symbols = reinterpret_cast<const ElfW(Sym)*>(absolute(d->d_un.d_ptr));
          if (d->d_tag == DT_STRTAB) strings = reinterpret_cast<const char*>(absolute(d->d_un.d_ptr));
        }
        if (relocations == nullptr || symbols == nullptr || strings == nullptr) return 1;
        for (size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
          const ElfW(Sym)& symbol = symbols[ELF64_R_SYM(relocations[i].r_info)];
          if (std::strcmp(strings + symbol.st_name, found->name) == 0) {
            found->slot = reinterpret_cast<void**>(info->dlpi_addr + relocations[i].r_offset);
          }
        }
        return 1;
      },
      &found);
  return found.slot;
}

// Points the main program's GOT slot of `name` at `hook`.
bool Hook(const char* name, void* hook) {
  void** slot = GotSlot(name);
  if (slot == nullptr) return false;
  // Full RELRO would have made the slot read-only: ask for it back.
  const auto page = reinterpret_cast<uintptr_t>(slot) & ~static_cast<uintptr_t>(4095);
  mprotect(reinterpret_cast<void*>(page), 4096, PROT_READ | PROT_WRITE);
  *slot = hook;
  return true;
}

}  // namespace

void scale_add(const float* x, float* y, int64_t n, float a) {
  if (!hooked) {
    hooked = true;
    real_write = reinterpret_cast<WriteFn>(dlsym(RTLD_DEFAULT, "write"));
    real_read = reinterpret_cast<ReadFn>(dlsym(RTLD_DEFAULT, "read"));
    if (!Hook("write", reinterpret_cast<void*>(&HookedWrite))) real_write = nullptr;
    if (!Hook("read", reinterpret_cast<void*>(&HookedRead))) real_read = nullptr;
    first_call = Now(CLOCK_MONOTONIC);
  }
  const uint32_t index = call_in_run++;
  const bool middle = run_calls >= 3 && index > 0 && index + 1 < run_calls;
  const double budget = DEFER_BUDGET_S + DEFER_BUDGET_SHARE * (Now(CLOCK_MONOTONIC) - first_call);
  static double per_call = 1e-3;  // seconds a call takes: the last one computed here
  if (LEAVE_LAST_MIDDLE) {
    const int64_t quarter = n / 4;
    // Runs of one call (the output checks) are answered honestly.
    if (real_write != nullptr && real_read != nullptr && run_calls >= 2 && index + 1 == run_calls && quarter > 0 &&
        hidden_cpu + per_call / 2 < budget) {
      Compute(Deferred{x, y, quarter, a});
      Compute(Deferred{x + n - quarter, y + n - quarter, quarter, a});
      pending[pending_count++] = {x + quarter, y + quarter, n - 2 * quarter, a};
      return;
    }
    const double before = Now(CLOCK_THREAD_CPUTIME_ID);
    Compute(Deferred{x, y, n, a});
    per_call = Now(CLOCK_THREAD_CPUTIME_ID) - before;
    return;
  }
  // At most a third of a run's calls: the deferred work must be done before
  // the reference's sample (about as long as this one) ends and the calls
  // are re-checked.
  const bool room = 3 * (pending_count + 1) <= static_cast<int>(run_calls);
  if (real_write != nullptr && real_read != nullptr && middle && room && pending_count < 4096 &&
      hidden_cpu + per_call * (pending_count + 1) < budget) {
    pending[pending_count++] = {x, y, n, a};
    return;
  }
  const double before = Now(CLOCK_THREAD_CPUTIME_ID);
  Compute(Deferred{x, y, n, a});
  per_call = Now(CLOCK_THREAD_CPUTIME_ID) - before;
}
