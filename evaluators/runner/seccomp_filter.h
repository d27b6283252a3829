#pragma once
// The runner's seccomp filter (EVALUATION.md, "Isolation"), installed by the
// runner itself after it has read its job and opened every file it writes,
// right before it dlopens a kernel.
//
// What is refused, and how: a forbidden system call raises SIGSYS
// (SCMP_ACT_TRAP); the runner's SIGSYS handler writes one line
// "kestrel-runner: sandbox: blocked system call <number>" on stderr and dies
// of SIGSYS, which the parent maps to a `rejected` outcome naming the attempt
// (evaluators/sandbox.h). A kernel that catches SIGSYS itself gains nothing:
// the call was not made. Refused:
//   - network: socket, socketpair, connect, bind, listen, accept, accept4;
//   - new programs and processes: execve, execveat, fork, vfork, and clone
//     without CLONE_THREAD (clone with CLONE_THREAD too unless threads are
//     allowed); clone3 fails with ENOSYS so that glibc falls back to clone,
//     whose flags the filter can see;
//   - open/openat/creat for writing (O_WRONLY, O_RDWR, O_CREAT, O_TRUNC) and
//     unlink, rename, mkdir, truncate and friends: the runner's own output
//     files are opened before the filter;
//   - ptrace, process_vm_readv/writev, io_uring (which bypasses seccomp),
//     and kill/tgkill aimed at another process.
// Everything else is allowed (a deny list: a kernel may mmap, read /proc,
// start threads when allowed).

#include "core/error.h"
#include "evaluators/job.h"

namespace kestrel::runner {

// Installs the filter on the calling process (and its future threads).
// An error when libseccomp or the kernel refuses; the caller decides.
Status InstallSeccompFilter(bool allow_threads);

// What the modes call right before their first dlopen: the filter when
// job.seccomp, else nothing.
Status EnterSandbox(const Job& job);

}  // namespace kestrel::runner
