#include "evaluators/runner/kernel_library.h"

#include <dlfcn.h>

#include <utility>

#include "evaluators/shim.h"

namespace kestrel::runner {

Result<KernelLibrary> KernelLibrary::Open(const std::filesystem::path& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    return Fail(Error::Io("cannot load " + path.string() + ": " + (error ? error : "unknown error")));
  }
  void* symbol = ::dlsym(handle, kShimEntrySymbol);
  if (symbol == nullptr) {
    ::dlclose(handle);
    return Fail(Error::Io(path.string() + " has no " + kShimEntrySymbol));
  }
  return KernelLibrary(handle, reinterpret_cast<EntryFunction>(symbol));
}

KernelLibrary::KernelLibrary(KernelLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), entry_(std::exchange(other.entry_, nullptr)) {}

// Never dlclose'd: a kernel may leave threads or atexit handlers behind, and
// the runner exits right after the job anyway.
KernelLibrary::~KernelLibrary() = default;

}  // namespace kestrel::runner
