#include "evaluators/compiler_remarks.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "evaluators/compiler.h"
#include "evaluators/subprocess.h"

namespace kestrel {
namespace {

bool IsClang(std::string_view toolchain) { return toolchain.find("clang") != std::string_view::npos; }

// "kernel.cpp:12:21: optimized: loop vectorized using 32 byte vectors"
// -> {12, "optimized", "loop vectorized using 32 byte vectors"}.
struct Remark {
  int line = 0;
  std::string kind;  // "optimized", "missed" (GCC), "remark" (clang)
  std::string message;
};

std::optional<Remark> ParseRemark(std::string_view text, std::string_view file) {
  if (text.substr(0, file.size()) != file || text.size() <= file.size() || text[file.size()] != ':') return std::nullopt;
  text.remove_prefix(file.size() + 1);
  Remark remark;
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    remark.line = remark.line * 10 + (text[digits] - '0');
    ++digits;
  }
  if (digits == 0 || remark.line > 10'000'000) return std::nullopt;
  text.remove_prefix(digits);
  if (!text.empty() && text[0] == ':') {  // the column
    std::size_t column = 1;
    while (column < text.size() && text[column] >= '0' && text[column] <= '9') ++column;
    text.remove_prefix(column);
  }
  if (text.substr(0, 2) != ": ") return std::nullopt;
  text.remove_prefix(2);
  const std::size_t colon = text.find(": ");
  if (colon == std::string_view::npos) return std::nullopt;
  remark.kind = std::string(text.substr(0, colon));
  std::string_view message = text.substr(colon + 2);
  while (!message.empty() && message.front() == ' ') message.remove_prefix(1);  // GCC indents some
  remark.message = std::string(message);
  while (!remark.message.empty() && (remark.message.back() == '\r' || remark.message.back() == ' ')) {
    remark.message.pop_back();
  }
  return remark;
}

void Keep(std::vector<std::string>& out, const std::map<std::pair<int, std::string>, bool>& remarks,
          std::string_view file) {
  for (const auto& [key, unused] : remarks) {
    if (out.size() == kMaxRemarks) break;
    out.push_back(std::string(file) + ":" + std::to_string(key.first) + ": " + key.second);
  }
}

}  // namespace

std::vector<std::string> RemarkFlags(std::string_view toolchain) {
  if (IsClang(toolchain)) return {"-Rpass=loop-vectorize", "-Rpass-missed=loop-vectorize"};
  return {"-fopt-info-vec-optimized", "-fopt-info-vec-missed"};
}

CompilerRemarks ParseVectorizationRemarks(std::string_view log, std::string_view file) {
  // Ordered by line then text: the same remark of an inlined loop, printed
  // once per caller, is one.
  std::map<std::pair<int, std::string>, bool> vectorized, missed;
  while (!log.empty()) {
    const std::size_t end = log.find('\n');
    const std::string_view line = log.substr(0, end);
    log = end == std::string_view::npos ? std::string_view() : log.substr(end + 1);
    // clang names an included file as the include found it: "./kernel.cpp".
    const std::optional<Remark> remark = ParseRemark(line.substr(0, 2) == "./" ? line.substr(2) : line, file);
    if (!remark) continue;
    std::string message = remark->message;
    if (remark->kind == "remark") {  // clang: the flag that asked for it says which kind
      const bool was_missed = message.find("[-Rpass-missed=") != std::string::npos ||
                              message.find("[-Rpass-analysis=") != std::string::npos;
      message = message.substr(0, message.rfind(" [-R"));
      (was_missed ? missed : vectorized)[{remark->line, message}] = true;
    } else if (remark->kind == "optimized") {
      vectorized[{remark->line, message}] = true;
    } else if (remark->kind == "missed") {
      missed[{remark->line, message}] = true;
    }
  }
  CompilerRemarks remarks;
  Keep(remarks.vectorized, vectorized, file);
  Keep(remarks.missed, missed, file);
  return remarks;
}

Result<CompilerRemarks> CompileWithRemarks(const CompileRequest& request, const std::string& toolchain) {
  SubprocessOptions options;
  options.argv = {request.compiler, "-std=c++17"};
  options.argv.insert(options.argv.end(), request.flags.begin(), request.flags.end());
  const std::vector<std::string> remark_flags = RemarkFlags(toolchain);
  options.argv.insert(options.argv.end(), remark_flags.begin(), remark_flags.end());
  for (const char* flag : {"-fPIC", "-c", "-o", "remarks.o"}) options.argv.push_back(flag);
  options.argv.push_back(request.source.filename().string());
  options.cwd = request.source.parent_path();
  options.env = EnvironmentWith({"LC_ALL=C"});
  options.timeout_s = request.timeout_s;
  options.log_limit_bytes = 4ULL << 20;
  auto run = request.executor->Run(options, "remarks");
  if (!run) return Fail(Error::Io("cannot run " + request.compiler + " for its remarks: " + run.error().message()));
  if (!run->Succeeded()) {
    return Fail(Error::Io(request.compiler + " with " + remark_flags.front() + " " + run->Describe(options.timeout_s) +
                          ": " + FirstErrorLine(run->log)));
  }
  CompilerRemarks remarks = ParseVectorizationRemarks(run->log, "kernel.cpp");
  remarks.compiler = toolchain;
  return remarks;
}

std::vector<std::string> RemarkFileFlags(const std::string& file) {
  return {"-fopt-info-vec-optimized=" + file, "-fopt-info-vec-missed=" + file};
}

bool AcceptsRemarkFile(const std::string& compiler, const std::string& toolchain, const Executor& executor,
                       const std::filesystem::path& dir) {
  if (IsClang(toolchain)) return false;
  SubprocessOptions options;
  options.argv = {compiler};
  const std::vector<std::string> flags = RemarkFileFlags("remarks-probe.txt");
  options.argv.insert(options.argv.end(), flags.begin(), flags.end());
  for (const char* arg : {"-x", "c++", "-c", "-o", "/dev/null", "/dev/null"}) options.argv.push_back(arg);
  options.cwd = dir;
  options.env = EnvironmentWith({"LC_ALL=C"});
  options.timeout_s = 30;
  auto run = executor.Run(options, "remarks-probe");
  std::error_code ignored;
  std::filesystem::remove(dir / "remarks-probe.txt", ignored);
  return run && run->Succeeded();
}

std::optional<CompilerRemarks> ReadRemarkFile(const std::filesystem::path& file, const std::string& toolchain) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  CompilerRemarks remarks = ParseVectorizationRemarks(text.str(), "kernel.cpp");
  remarks.compiler = toolchain;
  return remarks;
}

}  // namespace kestrel
