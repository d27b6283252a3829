#pragma once
// Loopback servers for LLM client tests: an HTTP server (cpp-httplib) that
// answers from a script and records what it was sent, and a raw socket that
// accepts connections and never writes.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <httplib.h>

namespace kestrel::testing {

// One scripted reply.
struct Reply {
  using Headers = std::vector<std::pair<std::string, std::string>>;
  Reply() = default;
  Reply(int status_code, std::string body_text, Headers extra_headers = {}, double delay = 0.0)
      : status(status_code), body(std::move(body_text)), headers(std::move(extra_headers)),
        delay_s(delay) {}
  int status = 200;
  std::string body;
  Headers headers;
  double delay_s = 0.0;  // sleep before answering
};

// What the server was sent.
struct Seen {
  std::string path, body, authorization, x_api_key, anthropic_version;
};

// Answers POST /v1/... with the script's replies in order; the last repeats.
// Counts requests in flight to check a client's concurrency cap.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::vector<Reply> script) : script_(std::move(script)) {
    server_.new_task_queue = [] { return new httplib::ThreadPool(16); };
    server_.Post(R"(/v1/.*)", [this](const httplib::Request& request, httplib::Response& response) {
      Reply reply;
      {
        std::lock_guard lock(mutex_);
        seen_.push_back({request.path, request.body, request.get_header_value("Authorization"),
                         request.get_header_value("x-api-key"),
                         request.get_header_value("anthropic-version")});
        reply = script_[std::min(next_++, script_.size() - 1)];
        max_in_flight_ = std::max(max_in_flight_, ++in_flight_);
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(reply.delay_s));
      response.status = reply.status;
      for (const auto& [name, value] : reply.headers) response.set_header(name, value);
      response.set_content(reply.body, "application/json");
      std::lock_guard lock(mutex_);
      --in_flight_;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ScriptedServer() {
    server_.stop();
    thread_.join();
  }
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::vector<Seen> seen() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  std::size_t requests() const { return seen().size(); }
  int max_in_flight() const {
    std::lock_guard lock(mutex_);
    return max_in_flight_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mutex_;
  std::vector<Reply> script_;
  std::size_t next_ = 0;
  std::vector<Seen> seen_;
  int in_flight_ = 0;
  int max_in_flight_ = 0;
};

// Listens on 127.0.0.1, accepts every connection and never writes a byte.
class SilentServer {
 public:
  SilentServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    ::listen(listener_, 16);
    socklen_t length = sizeof(address);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd poll_fd{listener_, POLLIN, 0};
        if (::poll(&poll_fd, 1, 20) > 0) {
          const int connection = ::accept(listener_, nullptr, nullptr);
          if (connection >= 0) accepted_.push_back(connection);
        }
      }
    });
  }
  ~SilentServer() {
    stop_ = true;
    thread_.join();
    for (int connection : accepted_) ::close(connection);
    ::close(listener_);
  }
  SilentServer(const SilentServer&) = delete;
  SilentServer& operator=(const SilentServer&) = delete;

  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<int> accepted_;  // touched by thread_ only until it is joined
};

}  // namespace kestrel::testing
