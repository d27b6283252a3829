#include "store/statement.h"

#include <sqlite3.h>

#include <utility>

namespace kestrel::store {

Error SqliteError(sqlite3* db, std::string_view operation) {
  const int rc = db != nullptr ? sqlite3_extended_errcode(db) : SQLITE_ERROR;
  std::string message = "DB: " + std::string(operation) + ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc) {
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_PRIMARYKEY:
      return Error::InvalidArgument(std::move(message));
    case SQLITE_CONSTRAINT_FOREIGNKEY:
      return Error::NotFound(message + " (a referenced id does not exist)");
    default:
      break;
  }
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return Error::Corruption(std::move(message));
    default:
      return Error::Io(std::move(message));
  }
}

// --- Statement ----------------------------------------------------------------

Result<Statement> Statement::Prepare(sqlite3* db, std::string_view sql, std::string_view operation) {
  sqlite3_stmt* statement = nullptr;
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                    &statement, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(statement);
    return Fail(SqliteError(db, operation));
  }
  return Statement(db, statement, operation);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      statement_(std::exchange(other.statement_, nullptr)),
      operation_(std::move(other.operation_)),
      bind_error_(other.bind_error_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(statement_);
    db_ = other.db_;
    statement_ = std::exchange(other.statement_, nullptr);
    operation_ = std::move(other.operation_);
    bind_error_ = other.bind_error_;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(statement_); }

void Statement::NoteBind(int rc) {
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
}

Statement& Statement::Bind(int index, std::int64_t value) {
  NoteBind(sqlite3_bind_int64(statement_, index, value));
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  NoteBind(sqlite3_bind_double(statement_, index, value));
  return *this;
}

Statement& Statement::Bind(int index, std::string_view text) {
  // A null pointer would bind NULL; an empty view must stay the empty text ''.
  const char* data = text.data() != nullptr ? text.data() : "";
  NoteBind(sqlite3_bind_text64(statement_, index, data, text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::Bind(int index, const std::optional<double>& value) {
  return value ? Bind(index, *value) : BindNull(index);
}

Statement& Statement::Bind(int index, const std::optional<std::string>& text) {
  return text ? Bind(index, std::string_view(*text)) : BindNull(index);
}

Statement& Statement::Bind(int index, const std::optional<std::int64_t>& value) {
  return value ? Bind(index, *value) : BindNull(index);
}

Statement& Statement::BindNull(int index) {
  NoteBind(sqlite3_bind_null(statement_, index));
  return *this;
}

Statement& Statement::BindId(int index, std::int64_t id) { return id == 0 ? BindNull(index) : Bind(index, id); }

Result<bool> Statement::Step() {
  if (bind_error_ != 0) {
    return Fail(Error::Internal("DB: " + operation_ + ": binding a parameter failed: " + sqlite3_errstr(bind_error_)));
  }
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Fail(SqliteError(db_, operation_));
}

Status Statement::Run() {
  for (;;) {
    auto row = Step();
    if (!row) return Fail(row.error());
    if (!*row) return {};
  }
}

std::int64_t Statement::Int(int column) const { return sqlite3_column_int64(statement_, column); }

double Statement::Double(int column) const { return sqlite3_column_double(statement_, column); }

std::string Statement::Text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
  if (text == nullptr) return "";
  return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)));
}

std::string_view Statement::TextView(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
  if (text == nullptr) return {};
  return {text, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column))};
}

bool Statement::IsNull(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

std::optional<double> Statement::OptionalDouble(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Double(column);
}

void Statement::Reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
  bind_error_ = 0;
}

// --- StatementCache -------------------------------------------------------------

Result<ScopedStatement> StatementCache::Get(std::string_view operation, std::string_view sql) {
  auto found = statements_.find(std::string(sql));
  if (found == statements_.end()) {
    auto prepared = Statement::Prepare(db_, sql, operation);
    if (!prepared) return Fail(prepared.error());
    found = statements_.emplace(std::string(sql), std::make_unique<Statement>(std::move(*prepared))).first;
  }
  found->second->set_operation(operation);
  return ScopedStatement(found->second.get());
}

// --- Transaction ------------------------------------------------------------------

// Inside another transaction (Store::Atomically) a transaction is a
// savepoint: it commits with the outer one, and a failed inner step rolls
// back only to where it began.
Result<Transaction> Transaction::Begin(sqlite3* db, Kind kind, std::string_view operation) {
  const bool nested = sqlite3_get_autocommit(db) == 0;
  const char* sql = nested ? "SAVEPOINT kestrel_nested" : kind == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN";
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return Fail(SqliteError(db, operation));
  return Transaction(db, operation, nested);
}

Transaction::Transaction(Transaction&& other) noexcept
    : db_(other.db_),
      operation_(std::move(other.operation_)),
      nested_(other.nested_),
      active_(std::exchange(other.active_, false)) {}

Transaction::~Transaction() {
  if (!active_ || sqlite3_get_autocommit(db_) != 0) return;
  const char* sql = nested_ ? "ROLLBACK TO kestrel_nested; RELEASE kestrel_nested" : "ROLLBACK";
  sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
}

Status Transaction::Commit() {
  const char* sql = nested_ ? "RELEASE kestrel_nested" : "COMMIT";
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return Fail(SqliteError(db_, operation_));
  active_ = false;
  return {};
}

Status ExecScript(sqlite3* db, std::string_view sql, std::string_view operation) {
  const std::string text(sql);
  if (sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    return Fail(SqliteError(db, operation));
  }
  return {};
}

}  // namespace kestrel::store
