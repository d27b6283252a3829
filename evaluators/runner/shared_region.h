#pragma once
// Memory the supervisor shares with its workers: an anonymous memfd mapped
// read-write here. A sealed region can never again be mapped writable
// (F_SEAL_FUTURE_WRITE): a worker maps it read-only and cannot change that,
// while the supervisor keeps writing through its own mapping.

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace kestrel::runner {

class SharedRegion {
 public:
  // `bytes` may be 0 (an empty region, nothing mapped).
  static Result<SharedRegion> Create(const std::string& name, std::uint64_t bytes, bool sealed);
  SharedRegion(SharedRegion&& other) noexcept;
  SharedRegion& operator=(SharedRegion&& other) noexcept;
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;
  ~SharedRegion();

  std::byte* data() const { return data_; }
  std::uint64_t size() const { return size_; }
  int fd() const { return fd_; }

 private:
  SharedRegion(int fd, std::byte* data, std::uint64_t size) : fd_(fd), data_(data), size_(size) {}
  void Reset();
  int fd_ = -1;
  std::byte* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace kestrel::runner
