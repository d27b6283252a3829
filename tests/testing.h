#pragma once
// Shared helpers for Kestrel's tests: temporary directories, locating the
// built tools and the built-in tasks.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace kestrel::testing {

// The message of a result that failed, "" for one that holds a value. For
// REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made)): doctest makes
// a check's message when the check passes too (with -s), where
// made.error() of a value would read garbage.
template <class Result>
std::string ErrorOf(const Result& result) {
  return result ? std::string() : std::string(result.error().message());
}

// A fresh directory under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::random_device random;
    const auto base = std::filesystem::temp_directory_path();
    for (;;) {
      path_ = base / ("kestrel-test-" + std::to_string(random()));
      if (std::filesystem::create_directory(path_)) break;
    }
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline void WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// Set by tests/meson.build for every test.
inline std::filesystem::path RunnerPath() { return Env("KESTREL_RUNNER"); }
inline std::filesystem::path WorkerPath() { return Env("KESTREL_WORKER"); }
inline std::filesystem::path KestrelPath() { return Env("KESTREL_BIN"); }
inline std::filesystem::path SourceDir() { return Env("KESTREL_SOURCE_DIR"); }
inline std::filesystem::path TasksDir() { return SourceDir() / "configs" / "tasks"; }

}  // namespace kestrel::testing
