// Helpers shared by the two wire formats (wire_format.h).

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
