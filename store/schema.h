#pragma once
// Private to store/: the on-disk format. The file is marked as Kestrel's by
// PRAGMA application_id and versioned by PRAGMA user_version; the schema is
// built by an ordered list of migrations, migration i taking v(i) to v(i+1)
// in one transaction. docs/SCHEMA.md describes every table.

#include <cstdint>
#include <filesystem>

#include "core/error.h"

struct sqlite3;

namespace kestrel::store {

// PRAGMA application_id of a Kestrel database: "KSTR" in ASCII.
inline constexpr std::int32_t kApplicationId = 0x4B535452;

// Busy handler wait before a locked database is an error.
inline constexpr int kBusyTimeoutMillis = 10000;

// Checks that the file at `path` (already opened as `db`) is a Kestrel
// database this build can read, sets the connection's pragmas, and (unless
// read_only) migrates it to kSchemaVersion. Returns the schema version.
//
// Refusals (kCorruption, each naming `path`): not an SQLite file; an SQLite
// file of another application (another application_id, or tables without
// ours); user_version above kSchemaVersion ("created by a newer Kestrel");
// in read_only mode, a schema older than kSchemaVersion ("open it read-write
// once"). Concurrent openers are safe: each migration re-reads the version
// under the write lock.
Result<int> PrepareSchema(sqlite3* db, const std::filesystem::path& path, bool read_only);

}  // namespace kestrel::store
