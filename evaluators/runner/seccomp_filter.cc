#include "evaluators/runner/seccomp_filter.h"

#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace kestrel::runner {
namespace {

// Async-signal-safe: formats the number by hand and writes once.
void OnSigsys(int, siginfo_t* info, void*) {
  char line[96] = "kestrel-runner: sandbox: blocked system call ";
  std::size_t length = std::strlen(line);
  char digits[16];
  int count = 0;
  unsigned number = static_cast<unsigned>(info->si_syscall);
  do {
    digits[count++] = static_cast<char>('0' + number % 10);
    number /= 10;
  } while (number != 0 && count < 15);
  while (count > 0) line[length++] = digits[--count];
  line[length++] = '\n';
  [[maybe_unused]] ssize_t ignored = ::write(STDERR_FILENO, line, length);
  // SA_RESETHAND | SA_NODEFER: the default action is back and SIGSYS is not
  // blocked, so this kills the runner by SIGSYS now.
  ::raise(SIGSYS);
  ::_exit(128 + SIGSYS);  // not reached
}

class Filter {
 public:
  Filter() : context_(::seccomp_init(SCMP_ACT_ALLOW)) {}
  ~Filter() {
    if (context_ != nullptr) ::seccomp_release(context_);
  }
  Filter(const Filter&) = delete;
  Filter& operator=(const Filter&) = delete;

  bool ok() const { return context_ != nullptr && error_ == 0; }
  int error() const { return error_ != 0 ? error_ : -ENOMEM; }
  scmp_filter_ctx get() const { return context_; }

  template <class... Compare>
  void Add(std::uint32_t action, int syscall, Compare... compare) {
    if (context_ == nullptr || error_ != 0) return;
    const int added = ::seccomp_rule_add(context_, action, syscall, sizeof...(Compare), compare...);
    if (added != 0) error_ = added;
  }

 private:
  scmp_filter_ctx context_;
  int error_ = 0;
};

void AddOpenForWriting(Filter& filter, int syscall, unsigned flags_arg) {
  for (const scmp_datum_t bit : {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC}) {
    filter.Add(SCMP_ACT_TRAP, syscall, scmp_arg_cmp{flags_arg, SCMP_CMP_MASKED_EQ, bit, bit});
  }
}

}  // namespace

Status InstallSeccompFilter(bool allow_threads) {
  struct sigaction action {};
  action.sa_sigaction = OnSigsys;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
  ::sigemptyset(&action.sa_mask);
  if (::sigaction(SIGSYS, &action, nullptr) != 0) return Fail(Error::Io("sigaction(SIGSYS) failed"));

  Filter filter;
  for (int syscall : {SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind), SCMP_SYS(listen),
                      SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(fork),
                      SCMP_SYS(vfork), SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev),
                      SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register),
                      SCMP_SYS(creat), SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(rename), SCMP_SYS(renameat),
                      SCMP_SYS(renameat2), SCMP_SYS(mkdir), SCMP_SYS(mkdirat), SCMP_SYS(rmdir), SCMP_SYS(truncate),
                      SCMP_SYS(link), SCMP_SYS(linkat), SCMP_SYS(symlink), SCMP_SYS(symlinkat)}) {
    filter.Add(SCMP_ACT_TRAP, syscall);
  }
  filter.Add(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3));
  filter.Add(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2));
  // clone: a new process (no CLONE_THREAD) never; a thread only when allowed.
  filter.Add(SCMP_ACT_TRAP, SCMP_SYS(clone), scmp_arg_cmp{0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0});
  if (!allow_threads) {
    filter.Add(SCMP_ACT_TRAP, SCMP_SYS(clone), scmp_arg_cmp{0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD});
  }
  AddOpenForWriting(filter, SCMP_SYS(open), 1);
  AddOpenForWriting(filter, SCMP_SYS(openat), 2);
  // Signals only to this process (raise, abort, pthread_kill).
  const auto self = static_cast<scmp_datum_t>(::getpid());
  filter.Add(SCMP_ACT_TRAP, SCMP_SYS(kill), scmp_arg_cmp{0, SCMP_CMP_NE, self, 0});
  filter.Add(SCMP_ACT_TRAP, SCMP_SYS(tgkill), scmp_arg_cmp{0, SCMP_CMP_NE, self, 0});
  filter.Add(SCMP_ACT_TRAP, SCMP_SYS(tkill));
  if (!filter.ok()) {
    return Fail(Error::Internal(std::string("seccomp rule: ") + std::strerror(-filter.error())));
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Fail(Error::Io("prctl(NO_NEW_PRIVS) failed"));
  if (const int loaded = ::seccomp_load(filter.get()); loaded != 0) {
    return Fail(Error::Io(std::string("seccomp_load: ") + std::strerror(-loaded)));
  }
  return {};
}

Status EnterSandbox(const Job& job) {
  if (!job.seccomp) return {};
  return InstallSeccompFilter(job.allow_threads);
}

}  // namespace kestrel::runner
