#include "evaluators/build_cache.h"

#include <exception>

namespace kestrel {

BuildResult BuildCache::Get(const std::string& identity, const std::function<BuildResult()>& build) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard lock(mutex_);
    auto& entry = slots_[identity];
    if (!entry) entry = std::make_shared<Slot>();
    slot = entry;
  }
  std::lock_guard lock(slot->mutex);
  if (slot->result) return *slot->result;
  try {
    BuildResult result = build();
    if (!result.withdrawn) slot->result = result;  // a withdrawn job built nothing: a later call builds
    return result;
  } catch (const std::exception& e) {
    BuildResult failed;
    failed.log = std::string("error: cannot build: ") + e.what() + "\n";
    return failed;
  } catch (...) {
    BuildResult failed;
    failed.log = "error: cannot build: unknown exception\n";
    return failed;
  }
}

}  // namespace kestrel
