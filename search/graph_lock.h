#pragma once
// One search per graph at a time. Two processes expanding the same graph
// would each hold an in-memory graph the other's nodes are missing from,
// and two sessions of one run would both write its state and spend its
// budget. A session takes its graph's lock for as long as it runs: an
// open-file-description lock (F_OFD_SETLK) on the byte at the graph's id in
// `DB-lock`, a file beside the database. The kernel drops it when the
// process ends however it ends (SIGKILL included), so a killed run never
// leaves its graph locked. Readers (`best`, `report`, `serve`) and a
// person's actions (`note`, `add`, ...) take no lock.

#include <cstdint>
#include <filesystem>
#include <optional>

#include "core/error.h"

namespace kestrel {

class GraphLock {
 public:
  // The lock of `graph_id` in the database at `db`; nullopt while another
  // process holds it; Io when the lock file cannot be opened.
  static Result<std::optional<GraphLock>> Take(const std::filesystem::path& db, std::int64_t graph_id);
  // The same for a suite (search/suite/suite_runner.h), whose session holds
  // it: a byte of its own past every graph's, so that two processes never
  // run one suite's tasks (each twice, and the live one's marked failed).
  static Result<std::optional<GraphLock>> TakeSuite(const std::filesystem::path& db, std::int64_t suite_id);

  // Whether a process holds the lock of `graph_id` now (F_OFD_GETLK: the
  // lock is only looked at, so a run starting meanwhile is not refused);
  // false when the lock file does not exist.
  static bool Held(const std::filesystem::path& db, std::int64_t graph_id);

  GraphLock(GraphLock&& other) noexcept;
  GraphLock& operator=(GraphLock&& other) noexcept;
  GraphLock(const GraphLock&) = delete;
  GraphLock& operator=(const GraphLock&) = delete;
  ~GraphLock();

 private:
  static Result<std::optional<GraphLock>> TakeByte(const std::filesystem::path& db, std::int64_t byte);
  explicit GraphLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// The lock file of the database at `db`: "DB-lock".
std::filesystem::path GraphLockFile(const std::filesystem::path& db);

}  // namespace kestrel
