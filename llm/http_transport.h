#pragma once
// Private to llm/: one HTTP POST over libcurl with a fresh easy handle,
// a total timeout, a connect timeout, no signals and TCP keepalive; no
// low-speed cut (a non-streamed reply is silent until it is done).
// Thread-safe (no shared handle).

#include <functional>
#include <optional>
#include <string>

#include "llm/llm_client.h"
#include "llm/wire_format.h"

namespace kestrel::llm {

struct HttpResult {
  int http_status = 0;  // 0: no HTTP reply (see transport_kind)
  std::string body;
  std::optional<double> retry_after_s;  // `retry-after-ms` or `retry-after` of the reply
  // kOk when a reply came; else kTimeout, kConnection, kCancelled or kBadRequest (bad URL).
  LlmErrorKind transport_kind = LlmErrorKind::kOk;
  std::string transport_error;  // curl's message; names the host, never headers
};

// libcurl's process-wide init, once, before the first handle.
void InitCurlOnce();

// POSTs `request`; never throws. `timeout_s` bounds the whole attempt;
// `cancelled` (may be empty) is polled during the transfer.
HttpResult HttpPost(const WireRequest& request, double timeout_s, double connect_timeout_s,
                    const std::function<bool()>& cancelled);

}  // namespace kestrel::llm
