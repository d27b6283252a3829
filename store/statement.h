#pragma once
// Private to store/: a thin RAII layer over the SQLite C API. Statement owns
// one prepared statement; StatementCache keeps one per SQL text for the life
// of a connection; Transaction rolls back unless committed. Every SQLite
// failure becomes an Error through SqliteError(), in this one place.
//
// Thread-safety: none; these objects belong to one connection (one Store).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kestrel::store {

// The last error of `db` as an Error whose message reads
// "DB: <operation>: <sqlite3_errmsg>". The code follows the SQLite result:
// a UNIQUE / PRIMARY KEY violation is kInvalidArgument, a FOREIGN KEY
// violation kNotFound (a referenced id does not exist), SQLITE_NOTADB and
// SQLITE_CORRUPT are kCorruption, anything else kIo.
Error SqliteError(sqlite3* db, std::string_view operation);

class Statement {
 public:
  // Prepares `sql` (one statement) on `db`; `operation` names the Store call
  // in error messages.
  static Result<Statement> Prepare(sqlite3* db, std::string_view sql, std::string_view operation);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds parameter `index` (1-based, as in SQLite). A failed bind (a bug:
  // an index out of range) is reported by the next Step().
  Statement& Bind(int index, std::int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, static_cast<std::int64_t>(value)); }
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view text);  // copied
  Statement& Bind(int index, const std::string& text) { return Bind(index, std::string_view(text)); }
  Statement& Bind(int index, const char* text) { return Bind(index, std::string_view(text)); }
  Statement& Bind(int index, const std::optional<double>& value);
  Statement& Bind(int index, const std::optional<std::string>& text);
  Statement& Bind(int index, const std::optional<std::int64_t>& value);
  Statement& BindNull(int index);
  // Binds a row id, with 0 (the records' "none") as NULL.
  Statement& BindId(int index, std::int64_t id);

  // Steps once: true when a row is ready to read, false when done.
  Result<bool> Step();
  // Steps to the end, ignoring rows (for INSERT / UPDATE / DDL / PRAGMA).
  Status Run();

  // Column getters, 0-based as in SQLite; NULL reads as 0 / "" / nullopt.
  std::int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;
  // The same without a copy: valid until the next Step, Reset or read of the column.
  std::string_view TextView(int column) const;
  bool IsNull(int column) const;
  std::optional<double> OptionalDouble(int column) const;

  // Resets the statement and clears its bindings, so that it holds no
  // snapshot open and can run again.
  void Reset();
  void set_operation(std::string_view operation) { operation_ = operation; }

 private:
  Statement(sqlite3* db, sqlite3_stmt* statement, std::string_view operation)
      : db_(db), statement_(statement), operation_(operation) {}
  void NoteBind(int rc);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* statement_ = nullptr;
  std::string operation_;
  int bind_error_ = 0;  // the first failed bind's result code, 0 when none
};

// A cached Statement on loan: reset (and unbound) when the loan ends.
class ScopedStatement {
 public:
  explicit ScopedStatement(Statement* statement) : statement_(statement) {}
  ScopedStatement(ScopedStatement&& other) noexcept : statement_(other.statement_) { other.statement_ = nullptr; }
  ScopedStatement& operator=(ScopedStatement&&) = delete;
  ScopedStatement(const ScopedStatement&) = delete;
  ScopedStatement& operator=(const ScopedStatement&) = delete;
  ~ScopedStatement() {
    if (statement_ != nullptr) statement_->Reset();
  }
  Statement* operator->() const { return statement_; }
  Statement& operator*() const { return *statement_; }

 private:
  Statement* statement_;
};

// One prepared statement per SQL text, prepared on first use. A loan must end
// before the same SQL is borrowed again (no nesting of one statement).
class StatementCache {
 public:
  explicit StatementCache(sqlite3* db) : db_(db) {}
  Result<ScopedStatement> Get(std::string_view operation, std::string_view sql);
  // Finalizes every cached statement (before the connection closes).
  void Clear() { statements_.clear(); }

 private:
  sqlite3* db_;
  std::unordered_map<std::string, std::unique_ptr<Statement>> statements_;
};

// BEGIN IMMEDIATE (kWrite: takes the write lock at once, waiting up to the
// busy_timeout, so a writer never fails half-way on a lock upgrade) or BEGIN
// (kRead: one consistent snapshot for a multi-statement read). Rolls back on
// destruction unless Commit() succeeded. Begun inside another transaction it
// is a savepoint of that one (Store::Atomically).
class Transaction {
 public:
  enum class Kind { kRead, kWrite };
  static Result<Transaction> Begin(sqlite3* db, Kind kind, std::string_view operation);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  Status Commit();

 private:
  Transaction(sqlite3* db, std::string_view operation, bool nested)
      : db_(db), operation_(operation), nested_(nested) {}
  sqlite3* db_;
  std::string operation_;
  bool nested_ = false;
  bool active_ = true;
};

// Runs one SQL text that may hold several statements and returns no rows
// (the migration scripts).
Status ExecScript(sqlite3* db, std::string_view sql, std::string_view operation);

}  // namespace kestrel::store
