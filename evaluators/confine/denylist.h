#pragma once
// The seccomp denylist for programs that load a kernel themselves and run
// arbitrary code of their own besides (a command evaluator's harness, the
// CUDA runner and its driver), where no allowlist fits (sandbox_args.h,
// ProgramSandboxArgs). Everything is allowed except what reaches past the
// sandbox or into the kernel's rarely needed surface, which fails with EPERM
// (a program that probes for a feature carries on without it):
//   namespaces and mounts (unshare, setns, clone with CLONE_NEW*, clone3,
//   mount and the new mount API, pivot_root), other processes' memory and
//   descriptors (ptrace, process_vm_*, pidfd_getfd, kcmp), kernel keyrings,
//   file handles (open_by_handle_at), eBPF, perf events, userfaultfd,
//   io_uring, modules, kexec, reboot, swap, clocks, accounting and quotas.
// Flatpak and Docker's default profile deny the same families.

namespace kestrel::confine {

// Installs the filter on this thread (inherited by children and kept across
// exec), with no_new_privs. 0, or -errno when it could not be installed.
int InstallDenylist();

// The names of the denied calls, for messages and tests.
const char* const* DeniedCalls();

}  // namespace kestrel::confine
