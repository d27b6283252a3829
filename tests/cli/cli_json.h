#pragma once
// Reading what the `kestrel` binary printed, for the CLI tests that share it.

#include <doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_workspace.h"

namespace kestrel::testing {

// The command's stdout as JSON; a failure naming what it printed otherwise.
inline nlohmann::json ParseJson(const Exec& exec) {
  try {
    return nlohmann::json::parse(exec.out);
  } catch (const nlohmann::json::exception& error) {
    FAIL("not JSON (" << error.what() << "): " << exec.out << "\nstderr: " << exec.err);
  }
  return {};
}

inline bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace kestrel::testing
