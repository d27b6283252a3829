#pragma once
// What a system call that the sandbox refuses was an attempt at, in words
// ("open a socket"), for verdicts. Shared by the supervisor (kestrel-runner),
// which names the calls its workers were stopped at, and the evaluator.

#include <string>

namespace kestrel {

// The call's name for its number on this architecture ("socket"), or
// "system call N".
std::string SyscallName(int number);

// "open a socket" for "socket", "change the file system (rename)", ...
std::string SyscallAttempt(const std::string& name);

}  // namespace kestrel
