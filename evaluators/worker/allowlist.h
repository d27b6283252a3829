#pragma once
// The seccomp allowlist a kernel runs under (EVALUATION.md, "Isolation").
// Installed by kestrel-worker before it loads a kernel; inherited by every
// thread the kernel starts; no handler can intercept it.
//
// Allowed: what a compute kernel and the loader need — memory management
// without memory that is writable and executable at once, futex, clocks and
// sleeps, reads and writes on descriptors it already holds, opening files
// read-only (the loader), its own signals, threads (when allowed), exit.
// Named calls (sockets, new processes, exec, tracing, signals to others,
// opening for writing, mounts, namespaces, descriptors of other processes,
// ...) stop the calling thread and notify the supervisor, which names the
// call in the verdict and kills the worker (SECCOMP_RET_USER_NOTIF).
// Anything else kills the worker at once (SECCOMP_RET_KILL_PROCESS).

namespace kestrel::worker {

// Returns the notification descriptor (>= 0), -1 when the kernel cannot
// notify (then named calls kill as well), or -errno when the filter could
// not be installed. `allow_jit` also allows memory that is writable and
// executable at once (Job::allow_jit: a task's expert baseline built on a
// JIT-compiling library, oneDNN; never a candidate).
int InstallAllowlist(bool allow_threads, bool allow_jit = false);

}  // namespace kestrel::worker
