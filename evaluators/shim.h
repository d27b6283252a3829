#pragma once
// The shim: a generated translation unit that includes the kernel source and
// exports one C entry point with a fixed ABI, so the runner can call any
// task's kernel without knowing its signature:
//
//   extern "C" void kestrel_entry(void* const* args);
//
// args[i] points at the i-th argument of the task: a buffer's first element
// for input/output/inout, an int64_t for a dim, a T for a scalar. The shim
// casts each to the type the task's signature asks for (CONTRACT.md, "Tasks")
// and calls the entry, so a kernel whose signature does not match fails to
// compile: a build_failed with the compiler's message.

#include <string>

#include "core/task.h"

namespace kestrel {

// The name of the exported symbol the runner looks up.
inline constexpr const char* kShimEntrySymbol = "kestrel_entry";

// The shim source calling `task.entry`, including `kernel_file` (a path as
// written in the #include, relative to the shim's directory or absolute).
std::string GenerateShim(const Task& task, const std::string& kernel_file);

}  // namespace kestrel
