#include "search/graph_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace kestrel {

std::filesystem::path GraphLockFile(const std::filesystem::path& db) { return db.string() + "-lock"; }

Result<std::optional<GraphLock>> GraphLock::Take(const std::filesystem::path& db, std::int64_t graph_id) {
  return TakeByte(db, graph_id);
}

Result<std::optional<GraphLock>> GraphLock::TakeSuite(const std::filesystem::path& db, std::int64_t suite_id) {
  constexpr std::int64_t kSuiteBytes = std::int64_t{1} << 48;  // past any graph id a database reaches
  return TakeByte(db, kSuiteBytes + suite_id);
}

Result<std::optional<GraphLock>> GraphLock::TakeByte(const std::filesystem::path& db, std::int64_t byte) {
  const std::filesystem::path file = GraphLockFile(db);
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Fail(Error::Io("cannot open " + file.string() + ": " + std::strerror(errno)));
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = static_cast<off_t>(byte);
  lock.l_len = 1;
  // Open-file-description locks: owned by this descriptor, not the process,
  // so that no other close() of the file in this process drops it.
  if (::fcntl(fd, F_OFD_SETLK, &lock) != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EAGAIN || error == EACCES) return std::optional<GraphLock>();
    return Fail(Error::Io("cannot lock " + file.string() + ": " + std::strerror(error)));
  }
  return std::optional<GraphLock>(GraphLock(fd));
}

bool GraphLock::Held(const std::filesystem::path& db, std::int64_t graph_id) {
  // Read access suffices to ask: a run's write lock conflicts with a read lock.
  const int fd = ::open(GraphLockFile(db).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock lock {};
  lock.l_type = F_RDLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = static_cast<off_t>(graph_id);
  lock.l_len = 1;
  const bool held = ::fcntl(fd, F_OFD_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
  ::close(fd);
  return held;
}

GraphLock::GraphLock(GraphLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

GraphLock& GraphLock::operator=(GraphLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

GraphLock::~GraphLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace kestrel
