#pragma once
// The control protocol between the supervisor (kestrel-runner) and a
// kestrel-worker, over a stream socket that is the worker's fd 3. The
// worker's fd 4 is the read-write arena, fd 5 the read-only inputs (both
// memfds the supervisor owns; either may be empty).
//
//   worker -> supervisor: Hello (its seccomp notification fd attached as
//                         SCM_RIGHTS when it has one), then kReady or
//                         kFailed + text once the kernel is loaded.
//   supervisor -> worker: a kLayout message: slots * args words, each an
//                         argument's place in one call slot: kInputsRegion
//                         | offset into the inputs, or an offset into the
//                         arena (untimed);
//                         a kTouch message: read one byte of every 4 KiB
//                         page of the first b pages of the inputs, and
//                         write one byte of the first a pages of the arena
//                         back unchanged (untimed; a page's first access
//                         in a process costs a fault, on a virtual machine
//                         microseconds, which must not land in a sample);
//                         a kRun message: call the slots first ..
//                         first + count - 1 in order (timed);
//   worker -> supervisor: kDone once every call of the run returned, or
//                         the pages were touched.
// End of file on the socket ends the worker.
//
// Everything after kReady is written by a process that runs a kernel:
// the supervisor believes none of it but the timing of kDone, and checks
// the outputs itself.

#include <cstdint>

namespace kestrel::worker {

inline constexpr int kControlFd = 3;
inline constexpr int kArenaFd = 4;
inline constexpr int kInputsFd = 5;

inline constexpr std::uint64_t kInputsRegion = std::uint64_t{1} << 63;

inline constexpr char kReady = 'R';
inline constexpr char kFailed = 'F';
inline constexpr char kDone = 'D';

struct Hello {
  std::uint32_t magic = 0x4b57524b;  // "KWRK"
  std::int32_t has_notify_fd = 0;
};

enum : std::uint32_t { kLayout = 1, kRun = 2, kTouch = 3 };
inline constexpr std::uint64_t kPageBytes = 4096;

struct Message {
  std::uint32_t kind = 0;
  std::uint32_t a = 0;  // kLayout: slots; kRun: first slot; kTouch: arena pages
  std::uint32_t b = 0;  // kLayout: args per call; kRun: calls; kTouch: inputs pages
};

inline constexpr std::uint32_t kMaxSlots = 1u << 20;
inline constexpr std::uint32_t kMaxArgs = 256;

}  // namespace kestrel::worker
