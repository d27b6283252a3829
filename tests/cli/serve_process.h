#pragma once
// `kestrel serve --port 0` started in a workspace: the port it chose (from
// its "serving ... at http://ADDR:PORT/" line) and a clean stop.

#include <signal.h>

#include <chrono>
#include <thread>
#include <vector>

#include "cli/cli_workspace.h"

namespace kestrel::testing {

struct Served {
  Process process;
  int port = 0;
};

// Starts the server with `extra` flags and waits (up to 20 s) for its port.
inline Served StartServe(Workspace& workspace, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"serve", "--port", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  Served served{workspace.Spawn(args), 0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string err = ReadFile(served.process.err);
    if (const std::size_t at = err.find("http://"); at != std::string::npos) {
      const std::size_t colon = err.find(':', at + 7);
      const std::size_t slash = err.find('/', colon);
      if (colon != std::string::npos && slash != std::string::npos) {
        served.port = std::stoi(err.substr(colon + 1, slash - colon - 1));
        return served;
      }
    }
    if (auto exited = Workspace::Poll(served.process)) FAIL("serve exited with " << exited->code << ": " << exited->err);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  FAIL("serve printed no address");
  return served;
}

// SIGTERM, then its exit.
inline Exec StopServe(const Served& served) {
  kill(served.process.pid, SIGTERM);
  return Workspace::Wait(served.process);
}

}  // namespace kestrel::testing
