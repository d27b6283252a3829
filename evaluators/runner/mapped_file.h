#pragma once
// A file the supervisor reads (the reference's outputs), mapped read-only
// after its size is checked and opened O_NOFOLLOW: an empty path maps
// nothing (data() is null).

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <utility>

#include "core/error.h"

namespace kestrel::runner {

class MappedFile {
 public:
  // A Corruption error when the file does not have `bytes` bytes.
  static Result<MappedFile> Open(const std::filesystem::path& path, std::uint64_t bytes);
  MappedFile(MappedFile&& other) noexcept : data_(std::exchange(other.data_, nullptr)), bytes_(other.bytes_) {}
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(data_, bytes_);
  }
  const std::byte* data() const { return static_cast<const std::byte*>(data_); }

 private:
  MappedFile(void* data, std::uint64_t bytes) : data_(data), bytes_(bytes) {}
  void* data_ = nullptr;
  std::uint64_t bytes_ = 0;
};

}  // namespace kestrel::runner
