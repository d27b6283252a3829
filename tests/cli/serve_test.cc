// `kestrel serve` under attack and under load: binds beyond loopback need a
// token, writes need it in a header (401 otherwise, nothing changed), paths
// that leave the routes and oversized requests are refused with a 4xx, and
// 100 concurrent page loads while a run writes leave the run and the
// database whole.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <doctest.h>
#include <httplib.h>

#include <atomic>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cli_workspace.h"
#include "cli/serve_process.h"
#include "store/store.h"

namespace kestrel {
namespace {

using json = nlohmann::json;
using testing::Exec;
using testing::Workspace;

// Sends `request` as it is (no client normalizes it) and returns the status code of the reply.
int RawStatus(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer and close before reading everything
    sent += static_cast<std::size_t>(n);
  }
  std::string reply;
  char buffer[4096];
  for (ssize_t n; reply.find("\r\n") == std::string::npos && (n = recv(fd, buffer, sizeof buffer, 0)) > 0;) {
    reply.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  INFO("reply: " << reply.substr(0, 200));
  REQUIRE(reply.rfind("HTTP/1.1 ", 0) == 0);
  return std::stoi(reply.substr(9, 3));
}

// A workspace whose database exists and holds no run yet.
Workspace& Empty() {
  static Workspace* workspace = [] {
    auto* created = new Workspace();
    REQUIRE(Store::Open(created->db()));
    return created;
  }();
  return *workspace;
}

std::string Get(const std::string& path, const std::string& host = "127.0.0.1") {
  return "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
}

TEST_SUITE("serve") {
  TEST_CASE("binding beyond loopback needs a token") {
    Workspace& workspace = Empty();
    const Exec refused = workspace.Run({"serve", "--bind", "0.0.0.0", "--port", "0"});
    CHECK(refused.code == 2);
    CHECK(refused.err.find("--bind 0.0.0.0") != std::string::npos);
    CHECK(refused.err.find("token") != std::string::npos);
    const Exec bad_port = workspace.Run({"serve", "--port", "70000"});
    CHECK(bad_port.code == 2);
  }

  TEST_CASE("a port in use is refused, not shared with the server that holds it") {
    Workspace& workspace = Empty();
    const auto served = testing::StartServe(workspace);
    const Exec second = workspace.Run({"serve", "--port", std::to_string(served.port)});
    CHECK(second.code == 1);
    CHECK(second.err.find("in use") != std::string::npos);
    CHECK(testing::StopServe(served).code == 0);
  }

  TEST_CASE("a write needs the token in a header, and changes nothing without it") {
    Workspace& workspace = Empty();
    const auto served = testing::StartServe(workspace, {"--token", "s3cret-token"});
    httplib::Client client("127.0.0.1", served.port);
    const std::string before = client.Get("/api/version")->body;
    const auto missing = client.Post("/api/nodes/1/note", "looks fine", "text/plain");
    REQUIRE(missing);
    CHECK(missing->status == 401);
    CHECK(json::parse(missing->body)["error"].get<std::string>().find("token") != std::string::npos);
    const auto wrong = client.Post("/api/nodes/1/note", {{"Authorization", "Bearer s3cret-tokeN"}}, "x", "text/plain");
    CHECK(wrong->status == 401);
    const auto in_url = client.Post("/api/nodes/1/note?token=s3cret-token", "x", "text/plain");
    CHECK(in_url->status == 401);
    const auto unknown_route = client.Delete("/api/runs");
    CHECK(unknown_route->status == 401);
    // The right token passes the check; this database has no node 1 (404, nothing stored).
    const auto right = client.Post("/api/nodes/1/note", {{"X-Kestrel-Token", "s3cret-token"}}, "x", "text/plain");
    CHECK(right->status == 404);
    CHECK(client.Get("/api/version")->body == before);
    CHECK(testing::StopServe(served).code == 0);
  }

  TEST_CASE("a write with the token is a person's action on the node, as kestrel note, label, ban and pin write it") {
    Workspace& workspace = testing::Searched();
    const auto served = testing::StartServe(workspace, {"--token", "t0k"});
    httplib::Client client("127.0.0.1", served.port);
    const httplib::Headers token = {{"X-Kestrel-Token", "t0k"}, {"X-Kestrel-Author", "ada"}};
    const auto note = client.Post("/api/nodes/2/note", token, "the unroll looks right", "text/plain");
    REQUIRE(note);
    CHECK(note->status == 201);
    CHECK(json::parse(note->body)["kind"] == "note");
    CHECK(client.Post("/api/nodes/2/label", token, "suspicious", "text/plain")->status == 201);
    CHECK(client.Post("/api/nodes/2/label", token, "great", "text/plain")->status == 400);
    CHECK(client.Post("/api/nodes/2/note", token, "", "text/plain")->status == 400);
    CHECK(client.Post("/api/nodes/3/ban", token, "", "text/plain")->status == 201);
    CHECK(client.Post("/api/nodes/3/pin", token, "sideways", "text/plain")->status == 400);
    CHECK(client.Post("/api/nodes/999999/note", token, "x", "text/plain")->status == 404);
    CHECK(testing::StopServe(served).code == 0);
    auto store = Store::Open(workspace.db(), Store::Mode::kReadOnly);
    REQUIRE(store);
    const auto notes = (*store)->NodeNotes(2);
    REQUIRE(notes);
    REQUIRE(notes->size() == 1);
    CHECK(notes->front().text == "the unroll looks right");
    CHECK(notes->front().author == "ada");
    const auto label = (*store)->NodeLabel(2);
    REQUIRE(label);
    REQUIRE(label->has_value());
    CHECK((*label)->text == "suspicious");
    const auto node = (*store)->GetNode(3);
    REQUIRE(node);
    const auto banned = (*store)->BannedNodes(node->graph_id);
    REQUIRE(banned);
    CHECK(*banned == std::vector<std::int64_t>{3});
    // The same rows the CLI reads back.
    const Exec shown = workspace.Run({"show", "2"});
    CHECK(shown.out.find("the unroll looks right") != std::string::npos);
  }

  TEST_CASE("a server on loopback answers no page whose Host is another name (DNS rebinding)") {
    Workspace& workspace = Empty();
    const auto served = testing::StartServe(workspace, {"--token", "t"});
    const std::string port = std::to_string(served.port);
    // A page on attacker.example, its name rebound to 127.0.0.1, asks with its own Host.
    CHECK(RawStatus(served.port, Get("/api/runs", "attacker.example:" + port)) == 403);
    CHECK(RawStatus(served.port, Get("/", "attacker.example:" + port)) == 403);
    CHECK(RawStatus(served.port, Get("/api/runs", "localhost.attacker.example:" + port)) == 403);
    CHECK(RawStatus(served.port, "POST /api/nodes/1/note HTTP/1.1\r\nHost: attacker.example\r\nX-Kestrel-Token: t\r\n"
                                 "Content-Length: 2\r\n\r\nhi") == 403);
    CHECK(RawStatus(served.port, Get("/api/runs", "localhost:" + port)) == 200);
    CHECK(RawStatus(served.port, Get("/api/runs", "127.0.0.1:" + port)) == 200);
    CHECK(testing::StopServe(served).code == 0);
  }

  TEST_CASE("traversal, oversized and malformed requests get a 4xx and the server stays up") {
    Workspace& workspace = Empty();
    const auto served = testing::StartServe(workspace, {"--token", "t"});
    CHECK(RawStatus(served.port, Get("/../../etc/passwd")) == 400);
    CHECK(RawStatus(served.port, Get("/%2e%2e/%2e%2e/etc/passwd")) == 400);
    CHECK(RawStatus(served.port, Get("/api/..%2f..%2fetc/passwd")) == 400);
    CHECK(RawStatus(served.port, Get("/etc/passwd")) == 404);
    CHECK(RawStatus(served.port, Get("/?run=abc")) == 400);
    CHECK(RawStatus(served.port, Get("/?run=999")) == 404);
    CHECK(RawStatus(served.port, Get("/?task=no_such_task")) == 404);
    const std::string big(2 * 1024 * 1024, 'x');
    CHECK(RawStatus(served.port, "POST /api/nodes/1/note HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Kestrel-Token: t\r\nContent-Length: " +
                                     std::to_string(big.size()) + "\r\n\r\n" + big) == 413);
    CHECK(RawStatus(served.port, Get("/" + std::string(20000, 'a'))) == 414);
    CHECK(RawStatus(served.port, "NONSENSE\r\n\r\n") == 400);
    CHECK(RawStatus(served.port, Get("/%ff%fe%00x")) == 400);  // invalid UTF-8 and a NUL, quoted by no error
    CHECK(RawStatus(served.port, Get("/%ff%fe")) == 404);
    httplib::Client client("127.0.0.1", served.port);
    const auto waiting = client.Get("/");  // no run yet: a page that says so and waits for one
    REQUIRE(waiting);
    CHECK(waiting->status == 200);
    CHECK(waiting->body.find("no runs yet") != std::string::npos);
    CHECK(waiting->body.find("kestrel-version-url") != std::string::npos);
    const auto version = client.Get("/api/version");
    REQUIRE(version);
    CHECK(version->status == 200);
    CHECK(testing::StopServe(served).code == 0);
  }

  TEST_CASE("100 concurrent page loads during a run leave the run and the database intact") {
    Workspace workspace;
    const auto run = workspace.Spawn({"run", "--task", "affine_wide", "--max-evals", "8", "--min-time", "0.02",
                                      "--quiet"});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (workspace.Run({"runs", "--json"}).out.find("\"running\"") == std::string::npos) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const auto served = testing::StartServe(workspace);
    // Hostile requests first: the run must not notice them either.
    CHECK(RawStatus(served.port, Get("/%2e%2e/%2e%2e/etc/passwd")) == 400);
    CHECK(RawStatus(served.port, "POST /api/nodes/1/note HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\nhi") == 401);
    std::atomic<int> ok = 0, failed = 0;
    std::vector<std::thread> loads;
    const auto loads_start = std::chrono::steady_clock::now();
    for (int k = 0; k < 100; ++k) {
      loads.emplace_back([&, k] {
        httplib::Client client("127.0.0.1", served.port);
        client.set_read_timeout(60, 0);
        const auto page = client.Get(k % 4 == 0 ? "/api/version" : "/");
        const bool shown = page && page->status == 200 &&
                           (k % 4 == 0 || page->body.find("Kestrel report: affine_wide") != std::string::npos);
        (shown ? ok : failed) += 1;
      });
    }
    for (auto& load : loads) load.join();
    MESSAGE("100 page loads: " << std::chrono::duration<double>(std::chrono::steady_clock::now() - loads_start).count()
                               << " s");
    std::optional<Exec> early = Workspace::Poll(run);
    CHECK(!early);  // the loads all fell while the run was writing
    CHECK(ok == 100);
    CHECK(failed == 0);
    const Exec finished = early ? *early : Workspace::Wait(run);
    MESSAGE("the run ended " << std::chrono::duration<double>(std::chrono::steady_clock::now() - loads_start).count()
                             << " s after the loads began");
    INFO(finished.err);
    REQUIRE(finished.code == 0);
    const json runs = json::parse(workspace.Run({"runs", "--json"}).out);
    CHECK(runs[0]["status"] == "finished");
    CHECK(runs[0]["evaluations"] == 8);
    {
      auto store = Store::Open(workspace.db(), Store::Mode::kReadOnly);
      REQUIRE(store);
      auto intact = (*store)->IntegrityOk();
      REQUIRE(intact);
      CHECK(*intact);
    }
    CHECK(testing::StopServe(served).code == 0);
  }
}

}  // namespace
}  // namespace kestrel
