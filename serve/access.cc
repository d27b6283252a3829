#include "serve/access.h"

#include <arpa/inet.h>

namespace kestrel::serve {

bool IsLoopback(std::string_view address) {
  if (address == "localhost" || address == "::1") return true;
  const std::string text(address);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return false;
}

bool IsLoopbackHost(std::string_view host) {
  if (host.empty()) return true;
  std::string_view address = host;
  std::string_view port;
  if (host.front() == '[') {
    const std::size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    address = host.substr(1, close - 1);
    port = host.substr(close + 1);
    if (!port.empty() && port.front() != ':') return false;
  } else if (const std::size_t colon = host.find(':'); colon != std::string_view::npos) {
    address = host.substr(0, colon);
    port = host.substr(colon);
  }
  if (!port.empty()) {
    port.remove_prefix(1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) return false;
  }
  return IsLoopback(address);
}

bool TokenMatches(std::string_view expected, std::string_view given) {
  if (expected.empty()) return false;
  unsigned char difference = expected.size() == given.size() ? 0 : 1;
  // Walk the expected token whatever the given one is, so the time says nothing of where they differ.
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const unsigned char other = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    difference |= static_cast<unsigned char>(static_cast<unsigned char>(expected[i]) ^ other);
  }
  return difference == 0;
}

std::string RequestToken(std::string_view authorization, std::string_view x_kestrel_token) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.substr(0, kBearer.size()) == kBearer) return std::string(authorization.substr(kBearer.size()));
  return std::string(x_kestrel_token);
}

bool IsTraversal(std::string_view decoded_path) {
  return decoded_path.empty() || decoded_path.front() != '/' || decoded_path.find("..") != std::string_view::npos ||
         decoded_path.find('\\') != std::string_view::npos || decoded_path.find('\0') != std::string_view::npos;
}

}  // namespace kestrel::serve
