#pragma once
// Who may reach `kestrel serve` and change what: the bind address rule and
// the token check, pure functions (serve_access_test holds them).

#include <string>
#include <string_view>

namespace kestrel::serve {

// 127.0.0.0/8, ::1 and "localhost": reachable from this machine only.
bool IsLoopback(std::string_view address);

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
