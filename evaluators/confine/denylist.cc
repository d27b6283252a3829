#include "evaluators/confine/denylist.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>

namespace kestrel::confine {
namespace {

constexpr const char* kDenied[] = {
    // namespaces and mounts
    "unshare", "setns", "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr",
    // other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    // kernel surface a kernel never needs
    "add_key", "request_key", "keyctl", "open_by_handle_at", "name_to_handle_at", "bpf", "perf_event_open",
    "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    // the machine itself
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "acct", "quotactl", "syslog", "iopl", "ioperm",
    "vhangup", "uselib", "lookup_dcookie", nullptr};

constexpr unsigned long kNewNamespaces[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,   CLONE_NEWNET,
                                           CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP};

}  // namespace

const char* const* DeniedCalls() { return kDenied; }

int InstallDenylist() {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
  scmp_filter_ctx filter = ::seccomp_init(SCMP_ACT_ALLOW);
  if (filter == nullptr) return -ENOMEM;
  int status = 0;
  for (const char* const* name = kDenied; *name != nullptr && status == 0; ++name) {
    const int call = ::seccomp_syscall_resolve_name(*name);
    if (call == __NR_SCMP_ERROR) continue;  // not on this architecture or libseccomp
    status = ::seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), call, 0);
  }
  // clone asking for any new namespace (one rule per flag: rules of one
  // call are or-ed); clone3 (whose flags sit in memory a filter cannot
  // read) as if the kernel had none, so that libc falls back to clone.
  for (const unsigned long flag : kNewNamespaces) {
    if (status == 0) {
      status = ::seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
    }
  }
  if (status == 0) status = ::seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  if (status == 0) status = ::seccomp_load(filter);
  ::seccomp_release(filter);
  return status;
}

}  // namespace kestrel::confine
