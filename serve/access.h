#pragma once
// Who may reach `kestrel serve` and change what: the bind address rule and
// the token check, pure functions (serve_access_test holds them).

#include <string>
#include <string_view>

namespace kestrel::serve {

// 127.0.0.0/8, ::1 and "localhost": reachable from this machine only.
bool IsLoopback(std::string_view address);

// A request's Host header names this machine's loopback: "localhost",
// 127.x.x.x or "[::1]", with or without ":PORT"; also true for no header
// (HTTP/1.0). A server on loopback answers nothing else, so that a web page
// whose own name is rebound to 127.0.0.1 (DNS rebinding) cannot read it.
bool IsLoopbackHost(std::string_view host_header);

// Compares in time that depends on the lengths only, never on where the
// first difference is. An empty expected token matches nothing.
bool TokenMatches(std::string_view expected, std::string_view given);

// The token a request carries: "Authorization: Bearer T" or
// "X-Kestrel-Token: T" (never a URL parameter); "" when neither.
std::string RequestToken(std::string_view authorization, std::string_view x_kestrel_token);

// A request path that tries to leave the routes: "..", a backslash or a NUL
// (after percent-decoding), or not starting with "/".
bool IsTraversal(std::string_view decoded_path);

}  // namespace kestrel::serve
