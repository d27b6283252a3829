#pragma once
// A loopback HTTP server (cpp-httplib) that answers POST /v1/... with a reply
// chosen by a function of the request body, for searches whose requests
// arrive in an order that depends on timing (an expansion can overtake a fix).

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "tests/llm/scripted_server.h"

namespace kestrel::testing {

class RoutedServer {
 public:
  // `route` is called under the server's lock, so it may keep state.
  explicit RoutedServer(std::function<Reply(const std::string& body)> route) : route_(std::move(route)) {
    server_.Post(R"(/v1/.*)", [this](const httplib::Request& request, httplib::Response& response) {
      Reply reply;
      {
        std::lock_guard lock(mutex_);
        bodies_.push_back(request.body);
        reply = route_(request.body);
      }
      response.status = reply.status;
      response.set_content(reply.body, "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~RoutedServer() {
    server_.stop();
    thread_.join();
  }
  RoutedServer(const RoutedServer&) = delete;
  RoutedServer& operator=(const RoutedServer&) = delete;

  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::vector<std::string> bodies() const {
    std::lock_guard lock(mutex_);
    return bodies_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mutex_;
  std::function<Reply(const std::string&)> route_;
  std::vector<std::string> bodies_;
};

}  // namespace kestrel::testing
