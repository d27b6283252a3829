#include "evaluators/runner/prepared_inputs.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "evaluators/runner/inputs.h"
#include "evaluators/runner/supervisor.h"

namespace kestrel::runner {
namespace {

struct Header {
  char magic[8];
  std::uint64_t layout_hash;
  std::uint64_t bytes;
};
static_assert(sizeof(Header) <= kPreparedHeaderBytes);

std::size_t MaxArgs(const Job& job) {
  std::size_t most = 0;
  for (const auto& shape : job.shapes) most = std::max(most, shape.args.size());
  return most;
}

std::string Errno() { return std::strerror(errno); }

}  // namespace

PreparedInputs::PreparedInputs(PreparedLayout layout, std::byte* data, int sets, std::size_t args_per_shape)
    : layout_(std::move(layout)), data_(data), sets_(sets), max_args_(args_per_shape) {
  std::size_t shapes = 0;
  for (const auto& segment : layout_.segments) shapes = std::max(shapes, static_cast<std::size_t>(segment.shape_index) + 1);
  index_.assign(shapes * static_cast<std::size_t>(sets_) * max_args_, -1);
  for (std::size_t i = 0; i < layout_.segments.size(); ++i) {
    const auto& segment = layout_.segments[i];
    index_[(static_cast<std::size_t>(segment.shape_index) * static_cast<std::size_t>(sets_) +
            static_cast<std::size_t>(segment.input_set)) * max_args_ + static_cast<std::size_t>(segment.arg_index)] =
        static_cast<std::int64_t>(i);
  }
}

PreparedInputs::PreparedInputs(PreparedInputs&& other) noexcept
    : layout_(std::move(other.layout_)),
      data_(std::exchange(other.data_, nullptr)),
      sets_(other.sets_),
      index_(std::move(other.index_)),
      max_args_(other.max_args_) {}

PreparedInputs::~PreparedInputs() {
  if (data_ != nullptr) ::munmap(data_, layout_.bytes);
}

const std::byte* PreparedInputs::Arg(int shape, int set, int arg) const {
  const std::size_t at = (static_cast<std::size_t>(shape) * static_cast<std::size_t>(sets_) +
                          static_cast<std::size_t>(set)) * max_args_ + static_cast<std::size_t>(arg);
  if (at >= index_.size() || index_[at] < 0) return nullptr;
  return data_ + layout_.segments[static_cast<std::size_t>(index_[at])].offset;
}

Result<PreparedInputs> PreparedInputs::For(const Job& job) {
  PreparedLayout layout = PrepareLayout(job);
  if (job.inputs_file.empty() || job.prepare_inputs) return Draw(job, std::move(layout));
  return Map(job, std::move(layout));
}

Result<PreparedInputs> PreparedInputs::Draw(const Job& job, PreparedLayout layout) {
  void* mapped = ::mmap(nullptr, layout.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) {
    return Fail(Error::Io("cannot allocate " + std::to_string(layout.bytes) + " bytes of inputs: " + Errno()));
  }
  auto* data = static_cast<std::byte*>(mapped);
  Header header{};
  std::memcpy(header.magic, kPreparedMagic, sizeof header.magic);
  header.layout_hash = layout.layout_hash;
  header.bytes = layout.bytes;
  std::memcpy(data, &header, sizeof header);
  for (const auto& segment : layout.segments) {
    const JobArg& arg = job.shapes[static_cast<std::size_t>(segment.shape_index)].args[static_cast<std::size_t>(segment.arg_index)];
    FillInput(arg, {job.seed, segment.shape_index, segment.input_set}, segment.arg_index, data + segment.offset);
  }
  if (job.prepare_inputs) {
    auto file = OutputFile::Create(job.inputs_file);
    if (!file) {
      ::munmap(mapped, layout.bytes);
      return Fail(file.error());
    }
    auto written = file->Write(data, layout.bytes);
    if (written) written = file->Close();
    if (!written) {
      ::munmap(mapped, layout.bytes);
      ::unlink(job.inputs_file.c_str());
      return Fail(written.error());
    }
  }
  (void)::mprotect(mapped, layout.bytes, PROT_READ);
  return PreparedInputs(std::move(layout), data, job.input_sets, MaxArgs(job));
}

Result<PreparedInputs> PreparedInputs::Map(const Job& job, PreparedLayout layout) {
  const std::string name = "the prepared inputs " + job.inputs_file.string();
  const int fd = ::open(job.inputs_file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Fail(Error::NotFound("cannot open " + name + ": " + Errno()));
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    return Fail(Error::Corruption(name + " is not a regular file"));
  }
  if (static_cast<std::uint64_t>(status.st_size) != layout.bytes) {
    ::close(fd);
    return Fail(Error::Corruption(name + " has " + std::to_string(status.st_size) + " bytes instead of " +
                                  std::to_string(layout.bytes) + " (truncated, or made for another task)"));
  }
  void* mapped = ::mmap(nullptr, layout.bytes, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  const int error = errno;
  ::close(fd);
  if (mapped == MAP_FAILED) return Fail(Error::Io("cannot map " + name + ": " + std::strerror(error)));
  Header header{};
  std::memcpy(&header, mapped, sizeof header);
  if (std::memcmp(header.magic, kPreparedMagic, sizeof header.magic) != 0 || header.layout_hash != layout.layout_hash ||
      header.bytes != layout.bytes) {
    ::munmap(mapped, layout.bytes);
    return Fail(Error::Corruption(name + " were prepared for another job (their header does not match)"));
  }
  return PreparedInputs(std::move(layout), static_cast<std::byte*>(mapped), job.input_sets, MaxArgs(job));
}

}  // namespace kestrel::runner
