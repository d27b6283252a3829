#include "evaluators/compiler.h"

#include <chrono>
#include <system_error>

#include "core/text_lines.h"
#include "evaluators/compiler_remarks.h"
#include "evaluators/sandbox_args.h"
#include "evaluators/subprocess.h"

namespace kestrel {
namespace {

constexpr std::size_t kMaxLineChars = 300;
constexpr std::uint64_t kCompilerMemoryBytes = 16ULL << 30;
constexpr std::uint64_t kCompilerFileBytes = 1ULL << 30;

bool IsErrorLine(std::string_view line) {
  return line.find("error:") != std::string_view::npos || line.find("undefined reference") != std::string_view::npos;
}

}  // namespace

std::string TrimCompilerLog(std::string_view log, int max_lines, int max_errors) {
  const auto lines = SplitLines(log);
  std::size_t keep = lines.size();
  int errors = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (IsErrorLine(lines[i]) && ++errors > max_errors) {
      keep = i;
      break;
    }
  }
  keep = std::min(keep, static_cast<std::size_t>(std::max(max_lines, 1)));
  std::string out;
  for (std::size_t i = 0; i < keep; ++i) {
    out.append(lines[i].substr(0, kMaxLineChars));
    if (lines[i].size() > kMaxLineChars) out += " [...]";
    out += '\n';
  }
  if (keep < lines.size()) {
    int more_errors = 0;
    for (std::size_t i = keep; i < lines.size(); ++i) more_errors += IsErrorLine(lines[i]) ? 1 : 0;
    out += "[... " + std::to_string(lines.size() - keep) + " more lines";
    if (more_errors > 0) out += ", " + std::to_string(more_errors) + " more errors";
    out += " ...]\n";
  }
  return out;
}

std::string FirstErrorLine(std::string_view log) {
  std::string_view first;
  for (std::string_view line : SplitLines(log)) {
    if (IsErrorLine(line)) {
      first = line;
      break;
    }
    if (first.empty() && line.find_first_not_of(" \t\r") != std::string_view::npos) first = line;
  }
  return std::string(first.substr(0, 200));
}

BuildResult RunCompiler(const SubprocessOptions& options, const std::string& name,
                        const std::filesystem::path& library, const Executor& executor) {
  BuildResult build;
  const auto start = std::chrono::steady_clock::now();
  try {
    auto run = executor.Run(options, "build");
    if (!run) {
      build.log = "error: cannot run " + name + " (" + options.argv.front() + "): " + run.error().message() + "\n";
    } else if (run->withdrawn) {
      build.withdrawn = true;
      build.log = run->lost + "\n";
    } else if (run->timed_out) {
      build.log = "error: " + name + " " + run->Describe(options.timeout_s) + "\n" + TrimCompilerLog(run->log);
    } else if (!run->Succeeded()) {
      build.log = TrimCompilerLog(run->log);
      if (FirstErrorLine(build.log).empty()) build.log += "error: " + name + " " + run->Describe(0) + "\n";
    } else {
      std::filesystem::rename(options.cwd / (library.filename().string() + ".tmp"), library);
      build.ok = true;
      build.library = library;
      build.log = TrimCompilerLog(run->log);  // warnings, if any
    }
  } catch (const std::exception& e) {
    build.ok = false;
    build.log = std::string("error: cannot build: ") + e.what() + "\n";
  } catch (...) {
    build.ok = false;
    build.log = "error: cannot build: unknown exception\n";
  }
  build.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return build;
}

std::vector<std::string> CompilerSandboxArgs(const std::string& bwrap, const std::string& compiler,
                                             const std::filesystem::path& dir) {
  ProgramView view;
  view.writable = {dir};
  view.cwd = dir;
  // A compiler outside /usr (a toolchain in /opt, a user's own build): its
  // installation, the folder above its bin/, read-only.
  auto found = FindProgram(compiler);  // not found: it fails in the sandbox as it would outside
  std::error_code error;
  const std::filesystem::path real = found ? std::filesystem::weakly_canonical(*found, error) : "";
  if (found && !error && real.is_absolute() && real.string().rfind("/usr/", 0) != 0) {
    view.read_only.push_back(real.parent_path().parent_path());
  }
  std::vector<std::string> env = ProgramEnvironment({}, "/tmp");
  env.push_back("LC_ALL=C");
  return ProgramSandboxArgs(bwrap, env, view);
}

BuildResult CompileSharedLibrary(const CompileRequest& request) {
  SubprocessOptions options;
  if (!request.bwrap.empty()) {
    options.argv = CompilerSandboxArgs(request.bwrap, request.compiler, request.source.parent_path());
  }
  options.argv.insert(options.argv.end(), {request.compiler, "-std=c++17"});
  options.argv.insert(options.argv.end(), request.flags.begin(), request.flags.end());
  for (const char* flag : {"-fPIC", "-shared", "-Wl,-z,defs", "-Wl,-Bsymbolic", "-o"}) options.argv.push_back(flag);
  options.argv.push_back(request.library.filename().string() + ".tmp");
  options.argv.push_back(request.source.filename().string());
  for (const auto& lib : request.libs) options.argv.push_back("-l" + lib);
  if (!request.remarks_file.empty()) {
    std::error_code ignored;  // the compiler appends: no remarks of an earlier build
    std::filesystem::remove(request.source.parent_path() / request.remarks_file, ignored);
    const std::vector<std::string> flags = RemarkFileFlags(request.remarks_file);
    options.argv.insert(options.argv.end(), flags.begin(), flags.end());
  }
  options.cwd = request.source.parent_path();
  options.env = EnvironmentWith({"LC_ALL=C"});
  options.timeout_s = request.timeout_s;
  options.memory_limit_bytes = kCompilerMemoryBytes;
  options.file_size_limit_bytes = kCompilerFileBytes;
  return RunCompiler(options, "the compiler", request.library, *request.executor);
}

Result<std::string> CompilerVersion(const std::string& compiler, const Executor& executor,
                                    const std::filesystem::path& dir) {
  SubprocessOptions options;
  options.argv = {compiler, "--version"};
  options.env = EnvironmentWith({"LC_ALL=C"});
  options.timeout_s = 30;
  options.cwd = dir;
  auto run = executor.Run(options, "compiler-version");
  if (!run) return Fail(run.error());
  if (!run->Succeeded()) return Fail(Error::Io(compiler + " --version " + run->Describe(30)));
  std::string line = run->log.substr(0, run->log.find('\n'));
  if (line.empty()) return Fail(Error::Io(compiler + " --version printed nothing"));
  return line;
}

}  // namespace kestrel
