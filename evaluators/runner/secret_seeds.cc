#include "evaluators/runner/secret_seeds.h"

#include <sys/random.h>

#include <cerrno>
#include <system_error>

namespace kestrel::runner {

SecretSeeds::result_type SecretSeeds::operator()() {
  if (next_ == block_.size()) {
    auto* bytes = reinterpret_cast<unsigned char*>(block_.data());
    std::size_t filled = 0;
    while (filled < sizeof block_) {
      const ssize_t got = getrandom(bytes + filled, sizeof block_ - filled, 0);
      if (got < 0) {
        if (errno == EINTR) continue;
        throw std::system_error(errno, std::generic_category(), "getrandom (the fresh inputs' seeds)");
      }
      filled += static_cast<std::size_t>(got);
    }
    next_ = 0;
  }
  return block_[next_++];
}

}  // namespace kestrel::runner
