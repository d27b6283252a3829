#pragma once
// Content-addressed builds, each made once (ARCHITECTURE.md, "Build"): the
// evaluators' Build(candidate) is thread-safe, and two workers that ask for
// the same candidate at once get one compile. Shared by the cpu, cuda and
// command evaluators.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "evaluators/evaluator.h"

namespace kestrel {

class BuildCache {
 public:
  // build() for `identity` the first time; its result every time after.
  // Callers for the same identity wait for the first; others do not. An
  // exception from build() is a failed BuildResult ("error: cannot build:
  // ..."), not kept, so a later call tries again; nor is a withdrawn
  // result (BuildResult::withdrawn).
  BuildResult Get(const std::string& identity, const std::function<BuildResult()>& build);

 private:
  struct Slot {
    std::mutex mutex;
    std::optional<BuildResult> result;
  };
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Slot>> slots_;  // guarded by mutex_
};

}  // namespace kestrel
