#include "core/stop.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

namespace kestrel {
namespace {

std::atomic<int> g_stop_requests{0};
static_assert(std::atomic<int>::is_always_lock_free, "the stop flag is used from a signal handler");

extern "C" void OnStopSignal(int /*signal*/) {
  if (g_stop_requests.fetch_add(1) >= 1) _exit(130);
  constexpr char kMessage[] = "\nkestrel: stopping: finishing work in flight (press Ctrl-C again to quit now)\n";
  [[maybe_unused]] const auto written = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
}

}  // namespace

void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void RequestStop() { g_stop_requests.fetch_add(1); }
bool StopRequested() { return g_stop_requests.load() > 0; }
void ResetStop() { g_stop_requests.store(0); }

}  // namespace kestrel
