#include "evaluators/syscall_names.h"

#include <seccomp.h>

#include <cstdlib>
#include <map>

namespace kestrel {

std::string SyscallName(int number) {
  char* name = ::seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, number);
  std::string text = name != nullptr ? name : "system call " + std::to_string(number);
  std::free(name);
  return text;
}

std::string SyscallAttempt(const std::string& name) {
  static const std::map<std::string, std::string> kAttempts = {
      {"socket", "open a socket"},
      {"socketpair", "open a socket"},
      {"connect", "connect a socket"},
      {"bind", "bind a socket"},
      {"listen", "listen on a socket"},
      {"accept", "accept a connection"},
      {"accept4", "accept a connection"},
      {"execve", "execute a program"},
      {"execveat", "execute a program"},
      {"fork", "start a process"},
      {"vfork", "start a process"},
      {"clone", "start a process or thread"},
      {"ptrace", "trace a process"},
      {"process_vm_readv", "read another process's memory"},
      {"process_vm_writev", "write another process's memory"},
      {"kill", "signal another process"},
      {"tgkill", "signal another process"},
      {"tkill", "signal a thread directly"},
      {"rt_sigqueueinfo", "signal another process"},
      {"rt_tgsigqueueinfo", "signal another process"},
      {"pidfd_open", "reach another process"},
      {"pidfd_getfd", "take another process's descriptors"},
      {"pidfd_send_signal", "signal another process"},
      {"open", "open a file for writing"},
      {"openat", "open a file for writing"},
      {"open_by_handle_at", "open a file by handle"},
      {"name_to_handle_at", "look up a file handle"},
      {"creat", "create a file"},
      {"mount", "mount a file system"},
      {"umount2", "unmount a file system"},
      {"pivot_root", "change the root file system"},
      {"chroot", "change the root directory"},
      {"unshare", "create namespaces"},
      {"setns", "enter a namespace"},
      {"mknod", "create a device node"},
      {"mknodat", "create a device node"},
      {"memfd_create", "create an in-memory file"},
      {"prlimit64", "change resource limits"},
      {"setrlimit", "change resource limits"},
      {"setpriority", "change a process's priority"},
      {"sched_setscheduler", "change a process's scheduling"},
      {"setitimer", "start a timer"},
      {"timer_create", "start a timer"},
      {"bpf", "load a BPF program"},
      {"perf_event_open", "open a performance counter"},
      {"userfaultfd", "handle page faults"},
      {"seccomp", "change its seccomp filter"},
      {"prctl", "change its process attributes"},
      {"mprotect", "make memory writable and executable"},
      {"mmap", "map memory writable and executable"},
      {"pkey_mprotect", "make memory writable and executable"},
      {"setuid", "change its user"},
      {"setgid", "change its group"},
      {"keyctl", "use the kernel keyring"},
      {"getdents64", "list a directory"},
      {"getdents", "list a directory"},
      {"chdir", "change its directory"},
      {"fchdir", "change its directory"},
      {"statfs", "inspect a file system"},
      {"fstatfs", "inspect a file system"},
      {"getpriority", "read a process's priority"},
      {"pipe", "create a pipe"},
      {"pipe2", "create a pipe"},
      {"ftruncate", "change the file system"},
      {"fcntl", "change a descriptor (fcntl)"},
      {"sendto", "send a message"},
      {"recvfrom", "receive a message"},
      {"recvmsg", "receive a message"},
      {"shmget", "use shared memory"},
      {"shmat", "use shared memory"},
      {"msgget", "use message queues"},
      {"semget", "use semaphores"},
      {"inotify_init1", "watch files"},
      {"fanotify_init", "watch files"},
      {"timerfd_create", "start a timer"},
      {"eventfd2", "create an event descriptor"},
      {"kcmp", "compare processes' resources"},
      {"sched_getscheduler", "read a process's scheduling"},
      {"sched_setparam", "change a process's scheduling"},
      {"ioprio_set", "change a process's I/O priority"},
      {"move_pages", "move another process's memory"},
      {"migrate_pages", "move another process's memory"},
      {"syslog", "read the kernel log"},
      {"acct", "change process accounting"},
      {"quotactl", "change disk quotas"},
      {"swapon", "change swap"},
      {"reboot", "reboot the machine"},
      {"kexec_load", "load a kernel"},
      {"init_module", "load a kernel module"},
      {"finit_module", "load a kernel module"},
      {"delete_module", "remove a kernel module"},
      {"fsopen", "mount a file system"},
      {"fsmount", "mount a file system"},
      {"move_mount", "mount a file system"},
      {"open_tree", "mount a file system"},
      {"utimensat", "change the file system"},
      {"setxattr", "change the file system"},
      {"lsetxattr", "change the file system"},
      {"fsetxattr", "change the file system"},
      {"add_key", "use the kernel keyring"},
      {"request_key", "use the kernel keyring"},
  };
  if (auto found = kAttempts.find(name); found != kAttempts.end()) return found->second;
  if (name.rfind("io_uring", 0) == 0) return "use io_uring";
  return "make a forbidden system call";
}

}  // namespace kestrel
