// kestrel-worker LIBRARY THREADS SECCOMP JIT: the only process that loads a
// kernel (EVALUATION.md, "Isolation"). It maps the supervisor's shared
// memory, installs the seccomp allowlist (worker/allowlist.h), loads the
// kernel and then calls it as told over its control socket
// (worker/protocol.h), nothing else: it holds no job, no nonce, no clock the
// judgement trusts, no reference and no result channel.
//
// THREADS, SECCOMP and JIT are 0 or 1 (JIT: the allowlist permits writable and
// executable memory, for a task's expert baseline only). Exit status: 0 at the end of the control
// stream, 2 on a bad command line or set-up, 3 when the control stream
// breaks the protocol.

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "evaluators/shim.h"
#include "evaluators/worker/allowlist.h"
#include "evaluators/worker/protocol.h"

namespace {

using namespace kestrel::worker;
using Entry = void (*)(void* const*);

struct Region {
  std::byte* data = nullptr;
  std::uint64_t size = 0;
};

[[noreturn]] void Die(int status, const std::string& message) {
  std::fprintf(stderr, "kestrel-worker: %s\n", message.c_str());
  std::fflush(stderr);
  ::_exit(status);
}

Region Map(int fd, int prot) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) Die(2, "fd " + std::to_string(fd) + " is not open");
  Region region;
  region.size = static_cast<std::uint64_t>(info.st_size);
  if (region.size > 0) {
    // Populated at once: the supervisor has the pages already; faulting
    // them in one by one costs seconds for large shapes.
    void* data = ::mmap(nullptr, region.size, prot, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (data == MAP_FAILED) Die(2, "cannot map fd " + std::to_string(fd) + ": " + std::strerror(errno));
    region.data = static_cast<std::byte*>(data);
  }
  ::close(fd);
  return region;
}

bool ReadAll(void* into, std::size_t bytes) {
  auto* at = static_cast<char*>(into);
  while (bytes > 0) {
    const ssize_t got = ::read(kControlFd, at, bytes);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    at += got;
    bytes -= static_cast<std::size_t>(got);
  }
  return true;
}

void WriteAll(const void* data, std::size_t bytes) {
  const auto* at = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t put = ::write(kControlFd, at, bytes);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) ::_exit(3);
    at += put;
    bytes -= static_cast<std::size_t>(put);
  }
}

void SendHello(int notify_fd) {
  Hello hello;
  hello.has_notify_fd = notify_fd >= 0 ? 1 : 0;
  iovec data{&hello, sizeof hello};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (notify_fd >= 0) {
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(header), &notify_fd, sizeof(int));
  }
  if (::sendmsg(kControlFd, &message, 0) != static_cast<ssize_t>(sizeof hello)) Die(2, "cannot greet the supervisor");
  if (notify_fd >= 0) ::close(notify_fd);
}

void Fail(const std::string& why) {
  WriteAll(&kFailed, 1);
  const auto length = static_cast<std::uint32_t>(why.size());
  WriteAll(&length, sizeof length);
  WriteAll(why.data(), why.size());
  ::_exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) Die(2, "usage: kestrel-worker LIBRARY THREADS SECCOMP JIT");
  const std::string library = argv[1];
  const bool threads = std::string(argv[2]) == "1";
  const bool seccomp = std::string(argv[3]) == "1";
  const bool jit = std::string(argv[4]) == "1";
  // Nothing but the control socket and the two regions is kept.
  ::syscall(SYS_close_range, 6U, ~0U, 0U);
  const Region arena = Map(kArenaFd, PROT_READ | PROT_WRITE);
  const Region inputs = Map(kInputsFd, PROT_READ);

  int notify_fd = -1;
  if (seccomp) {
    notify_fd = kestrel::worker::InstallAllowlist(threads, jit);
    if (notify_fd < -1) Die(2, std::string("cannot install the seccomp allowlist: ") + std::strerror(-notify_fd));
  }
  SendHello(notify_fd);
  // What the kernel prints reaches the log even when it crashes.
  std::setvbuf(stdout, nullptr, _IONBF, 0);

  // From here on the kernel's code runs in this process (its constructors
  // first).
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    Fail("cannot load " + library + ": " + (error ? error : "unknown error"));
  }
  void* symbol = ::dlsym(handle, kestrel::kShimEntrySymbol);
  if (symbol == nullptr) Fail(library + " has no " + kestrel::kShimEntrySymbol);
  const auto entry = reinterpret_cast<Entry>(symbol);
  WriteAll(&kReady, 1);

  std::vector<void*> pointers;  // slots * args
  std::uint32_t slots = 0;
  std::uint32_t args = 0;
  for (;;) {
    Message message;
    if (!ReadAll(&message, sizeof message)) return 0;
    if (message.kind == kLayout) {
      if (message.a > kMaxSlots || message.b > kMaxArgs) return 3;
      slots = message.a;
      args = message.b;
      const std::size_t words = static_cast<std::size_t>(slots) * args;
      std::vector<std::uint64_t> places(words);
      if (!ReadAll(places.data(), words * sizeof(std::uint64_t))) return 3;
      pointers.resize(words);
      for (std::size_t i = 0; i < words; ++i) {
        const bool in_inputs = (places[i] & kInputsRegion) != 0;
        const Region& region = in_inputs ? inputs : arena;
        const std::uint64_t offset = places[i] & ~kInputsRegion;
        if (offset >= region.size) return 3;
        pointers[i] = region.data + offset;
      }
    } else if (message.kind == kTouch) {
      const std::uint64_t arena_bytes = std::min<std::uint64_t>(std::uint64_t{message.a} * kPageBytes, arena.size);
      const std::uint64_t inputs_bytes = std::min<std::uint64_t>(std::uint64_t{message.b} * kPageBytes, inputs.size);
      for (std::uint64_t at = 0; at < inputs_bytes; at += kPageBytes) {
        (void)*static_cast<volatile const std::byte*>(inputs.data + at);
      }
      for (std::uint64_t at = 0; at < arena_bytes; at += kPageBytes) {
        volatile std::byte* byte = arena.data + at;
        *byte = *byte;
      }
      WriteAll(&kDone, 1);
    } else if (message.kind == kRun) {
      if (message.a > slots || message.b > slots - message.a) return 3;
      for (std::uint32_t slot = message.a; slot < message.a + message.b; ++slot) {
        entry(pointers.data() + static_cast<std::size_t>(slot) * args);
      }
      WriteAll(&kDone, 1);
    } else {
      return 3;
    }
  }
}
