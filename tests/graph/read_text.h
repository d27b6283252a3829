#pragma once
// ReadText: a file's whole content ("" when it cannot be read). Stands in for
// testing::ReadFile, whose istreambuf_iterator constructor trips GCC 12's
// -Wnull-dereference (a false positive inside libstdc++) at -O2.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace kestrel::testing {

inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace kestrel::testing
