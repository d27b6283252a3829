// Precompiled for the kestrel command's files: the heavy third-party headers
// that every cmd_*.cc includes.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
