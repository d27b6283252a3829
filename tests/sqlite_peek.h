#pragma once
// A raw SQLite peek at a Kestrel file, with a connection of its own: for what
// the Store API does not expose, such as row counts, or to change it behind
// the Store's back.

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace kestrel::testing {

// The first column of the first row of `sql` on the file, read with a
// connection of its own; -1 on any failure.
inline std::int64_t QueryInt(const std::filesystem::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::int64_t value = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 30000);  // a writer's lock is waited for, not a failure
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
      value = sqlite3_column_int64(statement, 0);
    }
    sqlite3_finalize(statement);
  }
  sqlite3_close(db);
  return value;
}

// The same as text; "<none>" on any failure or a NULL.
inline std::string QueryText(const std::filesystem::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string value = "<none>";
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 30000);
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW && sqlite3_column_type(statement, 0) != SQLITE_NULL) {
      value = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    }
    sqlite3_finalize(statement);
  }
  sqlite3_close(db);
  return value;
}

// Runs `sql` on a connection of its own to the file (creating it): an
// empty string when it succeeded, else SQLite's message.
inline std::string ExecSql(const std::filesystem::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string message;
  if (sqlite3_open(db_path.c_str(), &db) != SQLITE_OK) {
    message = "cannot open " + db_path.string();
  } else {
    char* error = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      message = error != nullptr ? error : "sqlite3_exec failed";
    }
    sqlite3_free(error);
  }
  sqlite3_close(db);
  return message;
}

}  // namespace kestrel::testing
