#pragma once
// Compiling a kernel (with its shim) into a shared object, and making the
// compiler's verdict short enough for a log and an LLM fix prompt.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "evaluators/evaluator.h"
#include "evaluators/executor.h"

namespace kestrel {

struct CompileRequest {
  std::string compiler = "c++";    // a name looked up in $PATH, or a path
  std::vector<std::string> flags;  // user flags and -DKNOB=value defines
  std::filesystem::path source;    // the shim, which includes the kernel
  std::filesystem::path library;   // the shared object to produce
  double timeout_s = 120;
  std::vector<std::string> libs;   // linked after the source: "openblas" -> -lopenblas
  // When set (a name in the source's folder), the build also writes its
  // vectorization remarks there (compiler_remarks.h, RemarkFileFlags).
  std::string remarks_file;
  // Where the compiler runs (a Slurm job: its folder must be shared).
  std::shared_ptr<const Executor> executor = LocalExecutor();
  // The bwrap binary the compiler runs under (CompilerSandboxArgs); empty:
  // unsandboxed (no bwrap here, the user's evaluator.sandbox "none", or a
  // build on other machines).
  std::string bwrap;
};

// The sandbox a compiler of a candidate's source runs in: a kernel's source
// is the attacker's too (EVALUATION.md), and `#include "/etc/secret"` or
// `.incbin` read any file of this user into the build log (stored, and sent
// to the LLM's fix prompt) or into the kernel. The compiler sees /usr and the
// loader's files read-only, its build folder `dir` writable (as its working
// directory), a fresh /tmp, the folder of a compiler installed outside /usr
// read-only, and an environment of PATH, HOME, TMPDIR, LANG and LC_ALL=C; no
// network, no other process, no other file. Append the compiler's argv.
std::vector<std::string> CompilerSandboxArgs(const std::string& bwrap, const std::string& compiler,
                                             const std::filesystem::path& dir);

// One compiler invocation:
//   <compiler> -std=c++17 <flags> -fPIC -shared -Wl,-z,defs -Wl,-Bsymbolic
//              -o <library> <source> [-l<lib>...]
// run in the source's directory (so messages name files relatively) with
// LC_ALL=C. The library is written under a temporary name and renamed, so
// it exists only when complete. Never throws; a failure (including a
// compiler that cannot be started or times out) is !ok with the trimmed log.
BuildResult CompileSharedLibrary(const CompileRequest& request);

// The compiler output cut after its first `max_errors` errors (with the
// context lines around them), at most `max_lines` lines of at most 300
// characters, with a note of what was cut.
std::string TrimCompilerLog(std::string_view log, int max_lines = 50, int max_errors = 3);

// The first line that reports an error ("kernel.cpp:3:5: error: ..."), or
// the first non-empty line; at most 200 characters.
std::string FirstErrorLine(std::string_view log);

// Runs one compiler invocation (`options`, whose output is
// <library>.tmp in options.cwd) on `executor` and turns how it ended into a BuildResult: on success the library
// renamed into place and any warnings; else the trimmed log, ending with
// "error: <name> timed out ..." or "... exited with status N" when the
// compiler printed no error of its own. Never throws.
BuildResult RunCompiler(const SubprocessOptions& options, const std::string& name,
                        const std::filesystem::path& library, const Executor& executor);

// The first line of `<compiler> --version`, run by `executor` in `dir`
// (under Slurm: the compiler of the nodes that build).
Result<std::string> CompilerVersion(const std::string& compiler, const Executor& executor = *LocalExecutor(),
                                    const std::filesystem::path& dir = {});

}  // namespace kestrel
