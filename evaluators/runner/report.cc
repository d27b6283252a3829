#include "evaluators/runner/report.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace kestrel::runner {
namespace {

constexpr int kResultFd = 3;

}  // namespace

bool WriteResult(const std::string& text) {
  const int fd = ::fcntl(kResultFd, F_GETFD) >= 0 ? kResultFd : STDOUT_FILENO;
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t wrote = ::write(fd, text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    done += static_cast<std::size_t>(wrote);
  }
  return true;
}

}  // namespace kestrel::runner
