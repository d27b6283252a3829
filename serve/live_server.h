#pragma once
// LiveServer: `kestrel serve`, the report's views over a database while runs
// write to it (cpp-httplib; its header stays in live_server.cc).
//
//   GET  /                 the live report page (?task=T, ?run=ID) and a list of every run
//   GET  /api/version      {"measurement", "node", "run_event"}: the newest ids; the page polls it
//   GET  /api/runs         every run with its status (JSON)
//   GET  /api/reviews      the review mode's open questions (JSON); the page shows them
//   POST /api/reviews/N/{accept,edit,reject}  a person's answer to question N (token
//                          required; body: the edited version, or the reason; 409
//                          when it was answered first elsewhere)
//   POST /api/nodes/N/{note,label,ban,pin}  a person's action on the node (store_human.cc),
//                          after the token check (401 without it); body: the text, the
//                          label word, or empty / "undo"; X-Kestrel-Author: the author
//
// Every read opens its own read-only connection (WAL: a reader never
// blocks the run that writes; a write opens a read-write one for its one row); a page is rendered once per data version and
// scope and shared by the requests that ask for it meanwhile. Bad requests
// get a 4xx with a JSON message; a handler's exception a 500, never a crash.
//
// Thread-safety: Start once, then Stop from any thread.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "core/error.h"

namespace kestrel::serve {

struct ServeOptions {
  std::filesystem::path db;
  std::string bind = "127.0.0.1";
  int port = 8765;  // 0: any free port (Port() tells which)
  // Required by every write route, and to bind anything but loopback.
  std::string token;
  std::size_t max_request_bytes = 64 * 1024;  // larger bodies get 413
};

class LiveServer {
 public:
  // InvalidArgument for a non-loopback bind without a token.
  static Status CheckAccess(const ServeOptions& options);
  // CheckAccess, then binds; Io when the address cannot be bound.
  static Result<std::unique_ptr<LiveServer>> Bind(const ServeOptions& options);
  ~LiveServer();
  int Port() const;
  // Serves until Stop(); returns then.
  Status Serve();
  void Stop();

  class Impl;

 private:
  explicit LiveServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kestrel::serve
