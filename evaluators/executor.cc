#include "evaluators/executor.h"

#include <stdlib.h>

namespace kestrel {
namespace {

class Local final : public Executor {
 public:
  Result<SubprocessResult> Run(const SubprocessOptions& process, const std::string& /*stem*/) const override {
    return RunSubprocess(process);
  }
  bool RunsHere() const override { return true; }
  std::filesystem::path ScratchRoot() const override { return std::filesystem::temp_directory_path(); }
};

}  // namespace

std::shared_ptr<const Executor> LocalExecutor() {
  static const auto local = std::make_shared<const Local>();
  return local;
}

Result<WorkDir> PrepareWorkDir(const std::filesystem::path& requested, const Executor& executor,
                               const std::string& prefix) {
  WorkDir dir;
  if (!requested.empty()) {
    dir.path = std::filesystem::absolute(requested);
    std::error_code error;
    std::filesystem::create_directories(dir.path, error);
    if (error) return Fail(Error::Io("cannot create " + dir.path.string() + ": " + error.message()));
    return dir;
  }
  std::string pattern = (std::filesystem::absolute(executor.ScratchRoot()) / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) return Fail(Error::Io("cannot create a directory like " + pattern));
  dir.path = pattern;
  dir.owned = true;
  return dir;
}

}  // namespace kestrel
