// Class 1, slows the reference down: finds the other kestrel kernel library
// loaded in its process (dl_iterate_phdr: a kernel.so that is not its own),
// makes its entry point writable (mprotect) and overwrites it with a jump to
// a function that computes the right answer 30 times over. Its own calls
// are honest; the reference looks 30x slower.
#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

extern "C" void kestrel_entry(void* const* args);

static void SlowReference(void* const* args) {
  const float* x = static_cast<const float*>(args[0]);
  float* y = static_cast<float*>(args[1]);
  const int64_t n = *static_cast<const int64_t*>(args[2]);
  const float a = *static_cast<const float*>(args[3]);
  for (int r = 0; r < 30; ++r) {
    for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
    asm volatile("" ::: "memory");
  }
}

static int Visit(dl_phdr_info* info, size_t, void* data) {
  std::string* found = static_cast<std::string*>(data);
  const std::string name = info->dlpi_name ? info->dlpi_name : "";
  Dl_info mine{};
  dladdr(reinterpret_cast<void*>(&SlowReference), &mine);
  if (name.size() > 9 && name.compare(name.size() - 9, 9, "kernel.so") == 0 &&
      (mine.dli_fname == nullptr || name != mine.dli_fname)) {
    *found = name;
  }
  return 0;
}

static void Patch() {
  std::string other;
  dl_iterate_phdr(Visit, &other);
  std::fprintf(stderr, "c1_patches_reference: other kernel: '%s'\n", other.c_str());
  if (other.empty()) return;
  void* handle = dlopen(other.c_str(), RTLD_NOW | RTLD_NOLOAD);
  void* entry = handle ? dlsym(handle, "kestrel_entry") : nullptr;
  if (entry == nullptr || entry == reinterpret_cast<void*>(&kestrel_entry)) return;
#if defined(__x86_64__)
  const long page = sysconf(_SC_PAGESIZE);
  auto start = reinterpret_cast<uintptr_t>(entry) & ~static_cast<uintptr_t>(page - 1);
  if (mprotect(reinterpret_cast<void*>(start), 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return;
  unsigned char jump[12] = {0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xe0};  // movabs rax, imm64; jmp rax
  const auto target = reinterpret_cast<uint64_t>(&SlowReference);
  std::memcpy(jump + 2, &target, 8);
  std::memcpy(entry, jump, sizeof jump);
  mprotect(reinterpret_cast<void*>(start), 2 * page, PROT_READ | PROT_EXEC);
  std::fprintf(stderr, "c1_patches_reference: patched\n");
#endif
}

void scale_add(const float* x, float* y, int64_t n, float a) {
  static bool tried = false;
  if (!tried) {
    tried = true;
    Patch();
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
