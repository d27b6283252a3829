#pragma once
// A built kernel loaded into the runner: dlopen of the shim's shared object
// and its kestrel_entry (see evaluators/shim.h).

#include <filesystem>
#include <string>

#include "core/error.h"

namespace kestrel::runner {

using EntryFunction = void (*)(void* const* args);

class KernelLibrary {
 public:
  // dlopen(RTLD_NOW | RTLD_LOCAL) and look up kestrel_entry. The error names
  // the path and dlerror().
  static Result<KernelLibrary> Open(const std::filesystem::path& path);
  KernelLibrary(KernelLibrary&& other) noexcept;
  KernelLibrary& operator=(KernelLibrary&&) = delete;
  KernelLibrary(const KernelLibrary&) = delete;
  ~KernelLibrary();

  EntryFunction entry() const { return entry_; }

 private:
  KernelLibrary(void* handle, EntryFunction entry) : handle_(handle), entry_(entry) {}
  void* handle_;
  EntryFunction entry_;
};

}  // namespace kestrel::runner
