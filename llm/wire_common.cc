// Helpers shared by the two wire formats (wire_format.h).

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>
#include <string_view>

#include "llm/wire_format.h"

namespace kestrel::llm {

LlmErrorKind KindOfStatus(int http_status) {
  if (http_status >= 200 && http_status < 300) return LlmErrorKind::kOk;
  switch (http_status) {
    case 401:
    case 403:
      return LlmErrorKind::kAuth;
    case 402:
      return LlmErrorKind::kQuota;
    case 408:
      return LlmErrorKind::kTimeout;
    case 409:
      return LlmErrorKind::kServer;
    case 413:  // the request is too large: its prompt, not the endpoint
      return LlmErrorKind::kContextLength;
    case 429:
      return LlmErrorKind::kRateLimit;
    case 529:
      return LlmErrorKind::kOverloaded;
    default:
      break;
  }
  if (http_status >= 500) return LlmErrorKind::kServer;
  return LlmErrorKind::kBadRequest;
}

bool SaysContextLength(std::string_view body) {
  static constexpr std::string_view kMarkers[] = {
      "context length",  "context_length",     "context window",    "context size",      "context_size",
      "too many tokens", "prompt is too long", "input is too long", "request too large", "request_too_large"};
  std::string lower(body);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::any_of(std::begin(kMarkers), std::end(kMarkers),
                     [&](std::string_view marker) { return lower.find(marker) != std::string::npos; });
}

std::string JoinUrl(std::string_view base_url, std::string_view path) {
  while (!base_url.empty() && base_url.back() == '/') base_url.remove_suffix(1);
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  return std::string(base_url) + "/" + std::string(path);
}

std::string Clip(std::string_view text, std::size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  return std::string(text.substr(0, max_chars)) + "...[" +
         std::to_string(text.size() - max_chars) + " more bytes]";
}

}  // namespace kestrel::llm
