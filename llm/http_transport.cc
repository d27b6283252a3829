// One HTTP POST over libcurl (http_transport.h).

#include "llm/http_transport.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <string_view>

#include <curl/curl.h>

#include "llm/retry_policy.h"

namespace kestrel::llm {
namespace {

// No low-speed cut: a non-streamed reply sends nothing until the model is
// done, so a stall cannot be told from a slow model, and a cut shorter than
// the attempt's timeout would end (and retry, and pay twice for) a reply
// that was coming. The timeout is the bound; TCP keepalive notices a peer
// that vanished.
constexpr long kKeepAliveIdleS = 30;
constexpr long kKeepAliveIntervalS = 15;

struct Received {
  std::string body;
  std::optional<double> retry_after_s;
  std::optional<double> retry_after_ms_s;
};

std::size_t OnBody(char* data, std::size_t size, std::size_t count, void* user) {
  static_cast<Received*>(user)->body.append(data, size * count);
  return size * count;
}

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  return std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
}

std::size_t OnHeader(char* data, std::size_t size, std::size_t count, void* user) {
  auto* received = static_cast<Received*>(user);
  const std::string_view line(data, size * count);
  if (StartsWithNoCase(line, "HTTP/")) {  // a new response (after a 100 or a redirect)
    received->retry_after_s.reset();
    received->retry_after_ms_s.reset();
  } else if (StartsWithNoCase(line, "retry-after:")) {
    received->retry_after_s = ParseRetryAfter(line.substr(12));
  } else if (StartsWithNoCase(line, "retry-after-ms:")) {
    if (const auto ms = ParseRetryAfter(line.substr(15))) received->retry_after_ms_s = *ms / 1000.0;
  }
  return size * count;
}

// CURLOPT_XFERINFOFUNCTION: a non-zero return aborts the transfer.
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancelled = static_cast<const std::function<bool()>*>(user);
  return (*cancelled)() ? 1 : 0;
}

struct CurlDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

long Millis(double seconds) { return std::max(1L, static_cast<long>(seconds * 1000.0)); }

LlmErrorKind KindOfCurlCode(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return LlmErrorKind::kTimeout;
    case CURLE_ABORTED_BY_CALLBACK:
      return LlmErrorKind::kCancelled;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return LlmErrorKind::kBadRequest;
    default:
      return LlmErrorKind::kConnection;
  }
}

}  // namespace

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

HttpResult HttpPost(const WireRequest& request, double timeout_s, double connect_timeout_s,
                    const std::function<bool()>& cancelled) {
  InitCurlOnce();
  HttpResult result;
  const std::unique_ptr<CURL, CurlDeleter> handle(curl_easy_init());
  if (!handle) {
    result.transport_kind = LlmErrorKind::kConnection;
    result.transport_error = "curl_easy_init failed";
    return result;
  }
  curl_slist* raw_headers = nullptr;
  for (const std::string& header : request.headers) {
    raw_headers = curl_slist_append(raw_headers, header.c_str());
  }
  raw_headers = curl_slist_append(raw_headers, "Expect:");  // no 100-continue round trip
  const std::unique_ptr<curl_slist, SlistDeleter> headers(raw_headers);

  Received received;
  char error_buffer[CURL_ERROR_SIZE] = {0};
  CURL* curl = handle.get();
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &received);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &received);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, Millis(timeout_s));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, Millis(std::min(connect_timeout_s, timeout_s)));
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPIDLE, kKeepAliveIdleS);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPINTVL, kKeepAliveIntervalS);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);  // a redirect would resend the key
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode

  if (cancelled) {
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &cancelled);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  }

  const CURLcode code = curl_easy_perform(curl);
  if (code != CURLE_OK) {
    result.transport_kind = KindOfCurlCode(code);
    result.transport_error = std::string(curl_easy_strerror(code));
    if (error_buffer[0] != '\0') result.transport_error += ": " + std::string(error_buffer);
    return result;
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  result.http_status = static_cast<int>(status);
  result.body = std::move(received.body);
  // Both headers may come; wait at least what either asks for.
  result.retry_after_s = received.retry_after_s;
  if (received.retry_after_ms_s) {
    result.retry_after_s = std::max(result.retry_after_s.value_or(0.0), *received.retry_after_ms_s);
  }
  return result;
}

}  // namespace kestrel::llm
