#include "evaluators/runner/shared_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace kestrel::runner {

Result<SharedRegion> SharedRegion::Create(const std::string& name, std::uint64_t bytes, bool sealed) {
  const int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return Fail(Error::Io("memfd_create: " + std::string(std::strerror(errno))));
  const auto fail = [&](const std::string& what) {
    const int error = errno;
    ::close(fd);
    return Fail(Error::Io(what + ": " + std::strerror(error)));
  };
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) return fail("cannot size a shared region of " + std::to_string(bytes) + " bytes");
  std::byte* data = nullptr;
  if (bytes > 0) {
    // Populated at once: hundreds of megabytes faulted in 4 KiB page by
    // page cost seconds on a virtual machine (shared memory gets no huge
    // pages by default).
    void* mapped = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (mapped == MAP_FAILED) return fail("cannot map a shared region of " + std::to_string(bytes) + " bytes");
    data = static_cast<std::byte*>(mapped);
  }
  if (sealed && ::fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    if (data != nullptr) ::munmap(data, bytes);
    return fail("cannot seal a shared region");
  }
  return SharedRegion(fd, data, bytes);
}

SharedRegion::SharedRegion(SharedRegion&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

SharedRegion& SharedRegion::operator=(SharedRegion&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

SharedRegion::~SharedRegion() { Reset(); }

void SharedRegion::Reset() {
  if (data_ != nullptr) ::munmap(data_, size_);
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  fd_ = -1;
  size_ = 0;
}

}  // namespace kestrel::runner
