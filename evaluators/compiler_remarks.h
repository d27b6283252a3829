#pragma once
// What the compiler did with a kernel's loops (the profile's
// CompilerRemarks, core/profile.h): the candidate's shim compiled once more,
// with the same flags, to an object with the compiler's vectorization
// remarks on (GCC -fopt-info-vec-optimized -fopt-info-vec-missed, clang
// -Rpass=loop-vectorize -Rpass-missed=loop-vectorize), trimmed to the
// kernel's own file.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/profile.h"

namespace kestrel {

struct CompileRequest;
class Executor;

// Remarks a compiler of this `--version` line understands.
std::vector<std::string> RemarkFlags(std::string_view toolchain);

// The remarks of `file` ("kernel.cpp") in a compiler's output, each
// "kernel.cpp:LINE: message", deduplicated, in line order, at most
// kMaxRemarks of each kind. Pure.
constexpr std::size_t kMaxRemarks = 12;
CompilerRemarks ParseVectorizationRemarks(std::string_view log, std::string_view file);

// Compiles request.source again (request.flags, request.timeout_s, on
// request.executor) into remarks.o next to it and parses the remarks of
// the file the shim includes ("kernel.cpp"). An Error when the compiler
// fails or times out.
Result<CompilerRemarks> CompileWithRemarks(const CompileRequest& request, const std::string& toolchain);

// Remarks written by the build itself, so that a profile need not compile
// again: GCC's -fopt-info-vec-optimized=FILE -fopt-info-vec-missed=FILE
// (one file, appended to: remove it before each build).
std::vector<std::string> RemarkFileFlags(const std::string& file);

// Whether `compiler` (run by `executor` in `dir`) accepts RemarkFileFlags:
// one compile of an empty file. False for clang, which has no such flags.
bool AcceptsRemarkFile(const std::string& compiler, const std::string& toolchain, const Executor& executor,
                       const std::filesystem::path& dir);

// The remarks a build wrote to `file` (RemarkFileFlags), parsed as
// CompileWithRemarks parses its log; nullopt when there is no such file.
std::optional<CompilerRemarks> ReadRemarkFile(const std::filesystem::path& file, const std::string& toolchain);

}  // namespace kestrel
