// The live server's access rules as pure functions: which binds are
// loopback, where a token may come from, how it is compared, which paths are
// refused.
#include <doctest.h>

#include "serve/access.h"

namespace kestrel::serve {
namespace {

TEST_SUITE("serve_access") {
  TEST_CASE("loopback addresses are this machine's only") {
    CHECK(IsLoopback("127.0.0.1"));
    CHECK(IsLoopback("127.1.2.3"));
    CHECK(IsLoopback("::1"));
    CHECK(IsLoopback("localhost"));
    CHECK_FALSE(IsLoopback("0.0.0.0"));
    CHECK_FALSE(IsLoopback("::"));
    CHECK_FALSE(IsLoopback("192.168.1.4"));
    CHECK_FALSE(IsLoopback("128.0.0.1"));
    CHECK_FALSE(IsLoopback("localhost.example.com"));
  }

  TEST_CASE("a server on loopback answers requests for loopback names only (DNS rebinding)") {
    CHECK(IsLoopbackHost("127.0.0.1:8765"));
    CHECK(IsLoopbackHost("127.0.0.1"));
    CHECK(IsLoopbackHost("localhost:8765"));
    CHECK(IsLoopbackHost("[::1]:8765"));
    CHECK(IsLoopbackHost("[::1]"));
    CHECK(IsLoopbackHost(""));
    CHECK_FALSE(IsLoopbackHost("attacker.example:8765"));
    CHECK_FALSE(IsLoopbackHost("attacker.example"));
    CHECK_FALSE(IsLoopbackHost("localhost.attacker.example:8765"));
    CHECK_FALSE(IsLoopbackHost("127.0.0.1.attacker.example"));
    CHECK_FALSE(IsLoopbackHost("192.168.1.4:8765"));
    CHECK_FALSE(IsLoopbackHost("[::1"));
    CHECK_FALSE(IsLoopbackHost("[::1]x"));
    CHECK_FALSE(IsLoopbackHost("localhost:"));
    CHECK_FALSE(IsLoopbackHost("localhost:80x"));
    CHECK_FALSE(IsLoopbackHost("::1"));
  }

  TEST_CASE("a token matches only itself, and no token matches nothing") {
    CHECK(TokenMatches("s3cret", "s3cret"));
    CHECK_FALSE(TokenMatches("s3cret", "s3cre"));
    CHECK_FALSE(TokenMatches("s3cret", "s3cret!"));
    CHECK_FALSE(TokenMatches("s3cret", "S3cret"));
    CHECK_FALSE(TokenMatches("s3cret", ""));
    CHECK_FALSE(TokenMatches("", ""));
  }

  TEST_CASE("the token comes from a header") {
    CHECK(RequestToken("Bearer abc", "") == "abc");
    CHECK(RequestToken("", "xyz") == "xyz");
    CHECK(RequestToken("Basic abc", "") == "");
    CHECK(RequestToken("", "") == "");
  }

  TEST_CASE("paths that leave the routes are refused") {
    CHECK(IsTraversal("/../etc/passwd"));
    CHECK(IsTraversal("/api/../../x"));
    CHECK(IsTraversal("/a\\b"));
    CHECK(IsTraversal(std::string_view("/a\0b", 4)));
    CHECK(IsTraversal("relative"));
    CHECK_FALSE(IsTraversal("/"));
    CHECK_FALSE(IsTraversal("/api/version"));
  }
}

}  // namespace
}  // namespace kestrel::serve
