#pragma once
// A folder (an evaluation's or a check's scratch) removed, with everything
// in it, when the scope that made it ends, however it ends.

#include <filesystem>

namespace kestrel {

struct RemovedAtEnd {
  std::filesystem::path dir;
  ~RemovedAtEnd() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

}  // namespace kestrel
