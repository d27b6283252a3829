#pragma once
// Private to store/: the connection behind a Store, shared by store.cc
// (tasks, hosts, runs, sources, LLM calls) and store_nodes.cc (nodes, edges,
// measurements, queries). Not thread-safe, like the Store that owns it.

#include <sqlite3.h>

#include <string>
#include <string_view>

#include "store/statement.h"
#include "store/store.h"

namespace kestrel {

class Store::Impl {
 public:
  explicit Impl(sqlite3* db) : db_(db), statements_(db) {}
  ~Impl() {
    statements_.Clear();
    sqlite3_close_v2(db_);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  sqlite3* db() const { return db_; }

  // The cached statement for `sql`, on loan until the result is destroyed.
  Result<store::ScopedStatement> Prepare(std::string_view operation, std::string_view sql) {
    return statements_.Get(operation, sql);
  }
  Result<store::Transaction> BeginWrite(std::string_view operation) {
    return store::Transaction::Begin(db_, store::Transaction::Kind::kWrite, operation);
  }
  Result<store::Transaction> BeginRead(std::string_view operation) {
    return store::Transaction::Begin(db_, store::Transaction::Kind::kRead, operation);
  }
  // Rows changed by the last INSERT / UPDATE / DELETE of this connection.
  std::int64_t Changes() const { return sqlite3_changes64(db_); }
  std::int64_t LastInsertId() const { return sqlite3_last_insert_rowid(db_); }

  // Inside a write transaction: stores `text` under its SHA-256 unless it is
  // there already, and returns the hash.
  Result<std::string> PutSourceInTransaction(const std::string& text);

 private:
  sqlite3* db_;
  store::StatementCache statements_;
};

namespace store {

// Inserts a measurement and its shapes with `purpose` ("search", "confirm",
// "same_code") inside the caller's transaction (store_nodes.cc).
Result<std::int64_t> InsertMeasurement(Store::Impl& impl, std::string_view operation, std::int64_t node_id,
                                       std::int64_t run_id, std::int64_t host_id, const Measurement& measurement,
                                       std::string_view purpose, std::int64_t now);
// The node's status, reason, log and (when measured) speedup after `measurement`.
Status UpdateNodeResult(Store::Impl& impl, std::string_view operation, std::int64_t node_id,
                        const Measurement& measurement, std::int64_t now);

}  // namespace store
}  // namespace kestrel
