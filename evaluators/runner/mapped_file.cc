#include "evaluators/runner/mapped_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace kestrel::runner {

Result<MappedFile> MappedFile::Open(const std::filesystem::path& path, std::uint64_t bytes) {
  if (path.empty() || bytes == 0) return MappedFile(nullptr, 0);
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error || size != bytes) {
    return Fail(Error::Corruption("the reference's outputs " + path.string() + " have " +
                                  (error ? error.message() : std::to_string(size) + " bytes") + " instead of " +
                                  std::to_string(bytes) + " bytes"));
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Fail(Error::Io("cannot open " + path.string()));
  void* mapped = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) return Fail(Error::Io("cannot map " + path.string()));
  return MappedFile(mapped, bytes);
}

}  // namespace kestrel::runner
