#include "evaluators/worker/allowlist.h"

#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <initializer_list>

namespace kestrel::worker {
namespace {

// A libseccomp context whose first failing rule is remembered.
class Filter {
 public:
  Filter() : context_(::seccomp_init(SCMP_ACT_KILL_PROCESS)) {}
  ~Filter() {
    if (context_ != nullptr) ::seccomp_release(context_);
  }
  Filter(const Filter&) = delete;
  Filter& operator=(const Filter&) = delete;

  int error() const { return context_ == nullptr ? -ENOMEM : error_; }
  scmp_filter_ctx get() const { return context_; }

  template <class... Compare>
  void Add(std::uint32_t action, int syscall, Compare... compare) {
    if (context_ == nullptr || error_ != 0 || syscall < 0) return;
    const int added = ::seccomp_rule_add(context_, action, syscall, sizeof...(Compare), compare...);
    if (added != 0) error_ = added;
  }
  void Allow(std::initializer_list<int> syscalls) {
    for (int syscall : syscalls) Add(SCMP_ACT_ALLOW, syscall);
  }

 private:
  scmp_filter_ctx context_;
  int error_ = 0;
};

// O_TMPFILE without O_DIRECTORY (glibc's __O_TMPFILE includes it, and
// opendir's O_DIRECTORY is a read).
constexpr scmp_datum_t kTmpFile = 020000000;
constexpr scmp_datum_t kWriteFlags = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | kTmpFile;
constexpr scmp_datum_t kWriteExec = PROT_WRITE | PROT_EXEC;

// arch_prctl's AMX requests (<asm/prctl.h>, Linux 5.16).
constexpr scmp_datum_t kArchGetXcompSupp = 0x1021;
constexpr scmp_datum_t kArchGetXcompPerm = 0x1022;
constexpr scmp_datum_t kArchReqXcompPerm = 0x1023;

// `syscall` allowed when no write flag is set in argument `arg`, named otherwise.
void OpenReadOnly(Filter& filter, int syscall, unsigned arg, std::uint32_t named) {
  filter.Add(SCMP_ACT_ALLOW, syscall, scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, kWriteFlags, 0});
  for (scmp_datum_t bit : {scmp_datum_t{O_WRONLY}, scmp_datum_t{O_RDWR}, scmp_datum_t{O_CREAT},
                           scmp_datum_t{O_TRUNC}, scmp_datum_t{O_APPEND}, kTmpFile}) {
    filter.Add(named, syscall, scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, bit, bit});
  }
}

// `syscall` allowed unless its protection argument `arg` asks for writable
// and executable memory at once.
void NeverWriteExec(Filter& filter, int syscall, unsigned arg, std::uint32_t named) {
  for (scmp_datum_t prot : {scmp_datum_t{0}, scmp_datum_t{PROT_WRITE}, scmp_datum_t{PROT_EXEC}}) {
    filter.Add(SCMP_ACT_ALLOW, syscall, scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, kWriteExec, prot});
  }
  filter.Add(named, syscall, scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, kWriteExec, kWriteExec});
}

}  // namespace

int InstallAllowlist(bool allow_threads, bool allow_jit) {
  const bool notify = ::seccomp_api_get() >= 6;
  const std::uint32_t named = notify ? SCMP_ACT_NOTIFY : SCMP_ACT_KILL_PROCESS;
  Filter filter;
  filter.Allow({SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(pread64),
                SCMP_SYS(pwrite64), SCMP_SYS(lseek), SCMP_SYS(close), SCMP_SYS(fstat), SCMP_SYS(newfstatat),
                SCMP_SYS(statx), SCMP_SYS(stat), SCMP_SYS(lstat), SCMP_SYS(access), SCMP_SYS(faccessat),
                SCMP_SYS(faccessat2), SCMP_SYS(readlink), SCMP_SYS(readlinkat), SCMP_SYS(getcwd), SCMP_SYS(dup),
                SCMP_SYS(dup2), SCMP_SYS(dup3), SCMP_SYS(sendmsg), SCMP_SYS(brk), SCMP_SYS(munmap),
                SCMP_SYS(mremap), SCMP_SYS(madvise), SCMP_SYS(futex), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
                SCMP_SYS(set_tid_address), SCMP_SYS(sched_yield), SCMP_SYS(sched_getaffinity), SCMP_SYS(getcpu),
                SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep),
                SCMP_SYS(gettimeofday), SCMP_SYS(time), SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getppid),
                SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(getrusage),
                SCMP_SYS(getrlimit), SCMP_SYS(sysinfo), SCMP_SYS(uname), SCMP_SYS(times), SCMP_SYS(rt_sigaction),
                SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack), SCMP_SYS(exit),
                SCMP_SYS(exit_group), SCMP_SYS(getrandom),
                // A sleep or timed wait stopped and continued (with threads, the
                // supervisor freezes the worker after each sample: Timed::Freeze)
                // resumes through it; it can only resume the call that was stopped.
                SCMP_SYS(restart_syscall),
                // NUMA placement of its own memory (OpenBLAS binds its buffers).
                SCMP_SYS(mbind), SCMP_SYS(get_mempolicy), SCMP_SYS(set_mempolicy)});
  // Terminal queries by stdio answer "not a terminal"; nothing else.
  filter.Add(SCMP_ACT_ERRNO(ENOTTY), SCMP_SYS(ioctl));
  for (scmp_datum_t command : {scmp_datum_t{F_GETFD}, scmp_datum_t{F_SETFD}, scmp_datum_t{F_GETFL},
                               scmp_datum_t{F_DUPFD_CLOEXEC}}) {
    filter.Add(SCMP_ACT_ALLOW, SCMP_SYS(fcntl), scmp_arg_cmp{1, SCMP_CMP_EQ, command, 0});
  }
  for (scmp_datum_t command : {scmp_datum_t{F_SETFL}, scmp_datum_t{F_SETOWN}, scmp_datum_t{F_SETSIG},
                               scmp_datum_t{F_SETLK}, scmp_datum_t{F_SETLKW}, scmp_datum_t{F_SETLEASE},
                               scmp_datum_t{F_NOTIFY}, scmp_datum_t{F_ADD_SEALS}}) {
    filter.Add(named, SCMP_SYS(fcntl), scmp_arg_cmp{1, SCMP_CMP_EQ, command, 0});
  }
  OpenReadOnly(filter, SCMP_SYS(openat), 2, named);
  OpenReadOnly(filter, SCMP_SYS(open), 1, named);
  filter.Add(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2));  // the loader falls back to openat
  if (allow_jit) {
    filter.Allow({SCMP_SYS(mmap), SCMP_SYS(mprotect), SCMP_SYS(pkey_mprotect)});
  } else {
    NeverWriteExec(filter, SCMP_SYS(mmap), 2, named);
    NeverWriteExec(filter, SCMP_SYS(mprotect), 2, named);
    NeverWriteExec(filter, SCMP_SYS(pkey_mprotect), 2, named);
  }
  // AMX (Sapphire Rapids and later): a process asks the kernel for the tile
  // state before its first tile instruction (oneDNN's baselines do, through
  // arch_prctl), and may ask what it has. Nothing else of arch_prctl.
  for (scmp_datum_t code : {kArchGetXcompSupp, kArchGetXcompPerm, kArchReqXcompPerm}) {
    filter.Add(SCMP_ACT_ALLOW, SCMP_SYS(arch_prctl), scmp_arg_cmp{0, SCMP_CMP_EQ, code, 0});
  }
  // Reading its own limits (new_limit NULL) only.
  filter.Add(SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), scmp_arg_cmp{2, SCMP_CMP_EQ, 0, 0});
  filter.Add(named, SCMP_SYS(prlimit64), scmp_arg_cmp{2, SCMP_CMP_NE, 0, 0});
  // Its own threads' affinity only (pid 0: the caller).
  filter.Add(SCMP_ACT_ALLOW, SCMP_SYS(sched_setaffinity), scmp_arg_cmp{0, SCMP_CMP_EQ, 0, 0});
  // Signals to itself only (raise, abort, pthread_kill).
  const auto self = static_cast<scmp_datum_t>(::getpid());
  filter.Add(SCMP_ACT_ALLOW, SCMP_SYS(kill), scmp_arg_cmp{0, SCMP_CMP_EQ, self, 0});
  filter.Add(named, SCMP_SYS(kill), scmp_arg_cmp{0, SCMP_CMP_NE, self, 0});
  filter.Add(SCMP_ACT_ALLOW, SCMP_SYS(tgkill), scmp_arg_cmp{0, SCMP_CMP_EQ, self, 0});
  filter.Add(named, SCMP_SYS(tgkill), scmp_arg_cmp{0, SCMP_CMP_NE, self, 0});
  // Threads when allowed; a new process never. glibc falls back from clone3.
  filter.Add(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3));
  filter.Add(named, SCMP_SYS(clone), scmp_arg_cmp{0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0});
  filter.Add(allow_threads ? SCMP_ACT_ALLOW : named, SCMP_SYS(clone),
             scmp_arg_cmp{0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD});
  // What an attack reaches for is named in the verdict.
  for (int syscall :
       {SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind), SCMP_SYS(listen),
        SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(fork), SCMP_SYS(vfork),
        SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(tkill),
        SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo), SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_getfd),
        SCMP_SYS(pidfd_send_signal), SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at), SCMP_SYS(creat),
        SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(pivot_root), SCMP_SYS(chroot), SCMP_SYS(unshare),
        SCMP_SYS(setns), SCMP_SYS(mknod), SCMP_SYS(mknodat), SCMP_SYS(memfd_create), SCMP_SYS(setrlimit),
        SCMP_SYS(setpriority), SCMP_SYS(sched_setscheduler), SCMP_SYS(setitimer), SCMP_SYS(timer_create),
        SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(userfaultfd), SCMP_SYS(seccomp), SCMP_SYS(prctl),
        SCMP_SYS(setuid), SCMP_SYS(setgid), SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key),
        SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register), SCMP_SYS(unlink),
        SCMP_SYS(unlinkat), SCMP_SYS(rename), SCMP_SYS(renameat), SCMP_SYS(renameat2), SCMP_SYS(mkdir),
        SCMP_SYS(mkdirat), SCMP_SYS(rmdir), SCMP_SYS(truncate), SCMP_SYS(ftruncate), SCMP_SYS(link),
        SCMP_SYS(linkat), SCMP_SYS(symlink), SCMP_SYS(symlinkat), SCMP_SYS(chmod), SCMP_SYS(fchmod),
        SCMP_SYS(fchmodat), SCMP_SYS(chown), SCMP_SYS(fchown), SCMP_SYS(fchownat), SCMP_SYS(getdents64),
        SCMP_SYS(getdents), SCMP_SYS(chdir), SCMP_SYS(fchdir), SCMP_SYS(statfs), SCMP_SYS(fstatfs),
        SCMP_SYS(getpriority), SCMP_SYS(pipe), SCMP_SYS(pipe2), SCMP_SYS(sendto), SCMP_SYS(recvfrom),
        SCMP_SYS(recvmsg), SCMP_SYS(shmget), SCMP_SYS(shmat), SCMP_SYS(msgget), SCMP_SYS(semget),
        SCMP_SYS(inotify_init1), SCMP_SYS(fanotify_init), SCMP_SYS(timerfd_create), SCMP_SYS(eventfd2),
        SCMP_SYS(kcmp), SCMP_SYS(sched_getscheduler), SCMP_SYS(sched_setparam), SCMP_SYS(ioprio_set),
        SCMP_SYS(move_pages), SCMP_SYS(migrate_pages), SCMP_SYS(syslog), SCMP_SYS(acct), SCMP_SYS(quotactl),
        SCMP_SYS(swapon), SCMP_SYS(reboot), SCMP_SYS(kexec_load), SCMP_SYS(init_module), SCMP_SYS(finit_module),
        SCMP_SYS(delete_module), SCMP_SYS(fsopen), SCMP_SYS(fsmount), SCMP_SYS(move_mount), SCMP_SYS(open_tree),
        SCMP_SYS(utimensat), SCMP_SYS(setxattr), SCMP_SYS(lsetxattr), SCMP_SYS(fsetxattr)}) {
    filter.Add(named, syscall);
  }
  if (filter.error() != 0) return filter.error();
  if (const int loaded = ::seccomp_load(filter.get()); loaded != 0) return loaded;
  if (!notify) return -1;
  const int fd = ::seccomp_notify_fd(filter.get());
  return fd >= 0 ? fd : -1;
}

}  // namespace kestrel::worker
