#pragma once
// A real browser for the report's tests: Debian's `chromium`, headless. Two
// ways to drive it: DumpDom/Screenshot (one process per page: what the page
// looks like once loaded) and DevtoolsPipe (the DevTools protocol over
// --remote-debugging-pipe: a page kept open, evaluated again and again, for
// a live page that changes while it is watched).

#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "testing.h"

namespace kestrel::testing {

// The chromium binary, or nullopt (and the reason, printed once, to skip).
inline std::optional<std::filesystem::path> FindChromium() {
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(candidate, X_OK) == 0) return std::filesystem::path(candidate);
  }
  MESSAGE("skipped: no chromium (Debian's `chromium`, installed by scripts/setup) to load the pages in");
  return std::nullopt;
}

// Flags every headless run takes: no GPU, no first-run chrome, a fresh profile;
// no sandbox when root (chromium refuses to start otherwise).
inline std::vector<std::string> HeadlessArgs(const std::filesystem::path& browser, const std::filesystem::path& profile) {
  std::vector<std::string> args = {browser.string(), "--headless", "--disable-gpu", "--no-first-run",
                                   "--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + profile.string()};
  if (geteuid() == 0) args.push_back("--no-sandbox");
  return args;
}

// Starts chromium with `args`; `in_child` arranges the child's descriptors
// before it execs (stdout and stderr go to /dev/null unless it moves them).
inline pid_t StartBrowser(std::vector<std::string> args, const std::function<void()>& in_child) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    in_child();
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// Runs chromium with `args` and returns its stdout (stderr dropped).
inline std::string RunBrowser(std::vector<std::string> args) {
  int out[2];
  REQUIRE(pipe(out) == 0);
  const pid_t pid = StartBrowser(std::move(args), [&] { dup2(out[1], STDOUT_FILENO); });
  close(out[1]);
  std::string text;
  char buffer[65536];
  for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return text;
}

// The page's DOM once loaded (scripts run), serialized.
inline std::string DumpDom(const std::filesystem::path& browser, const std::filesystem::path& profile,
                           const std::string& url) {
  auto args = HeadlessArgs(browser, profile);
  args.insert(args.end(), {"--dump-dom", url});
  return RunBrowser(args);
}

inline void Screenshot(const std::filesystem::path& browser, const std::filesystem::path& profile, const std::string& url,
                       const std::filesystem::path& png, int width = 1200, int height = 1600) {
  auto args = HeadlessArgs(browser, profile);
  args.insert(args.end(), {"--screenshot=" + png.string(), "--window-size=" + std::to_string(width) + "," +
                                                              std::to_string(height), url});
  RunBrowser(args);
}

// Where the tests keep what they show (screenshots): build/test-artifacts.
inline std::filesystem::path ArtifactDir() {
  const auto dir = KestrelPath().parent_path().parent_path() / "test-artifacts";
  std::filesystem::create_directories(dir);
  return dir;
}

// Occurrences of `part` in `text`.
inline int Count(const std::string& text, const std::string& part) {
  int count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

// One headless chromium driven over the DevTools protocol: messages are JSON
// separated by NUL bytes on fds 3 (to the browser) and 4 (from it).
class DevtoolsPipe {
 public:
  DevtoolsPipe(const std::filesystem::path& browser, const std::filesystem::path& profile) {
    int to[2], from[2];
    REQUIRE(pipe(to) == 0);
    REQUIRE(pipe(from) == 0);
    auto args = HeadlessArgs(browser, profile);
    args.insert(args.end(), {"--remote-debugging-pipe", "about:blank"});
    pid_ = StartBrowser(std::move(args), [&] {
      const int in = dup(to[0]), out = dup(from[1]);  // out of the way of 3 and 4
      dup2(in, 3);
      dup2(out, 4);
    });
    close(to[0]);
    close(from[1]);
    to_ = to[1];
    from_ = from[0];
  }
  ~DevtoolsPipe() {
    close(to_);
    close(from_);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }

  // Sends a command (to the page's session when attached) and returns its result.
  nlohmann::json Call(const std::string& method, nlohmann::json params = nlohmann::json::object()) {
    nlohmann::json reply = Send(method, std::move(params));
    INFO(method << ": " << reply.dump().substr(0, 500));
    REQUIRE(reply.contains("result"));
    return reply["result"];
  }

  // The whole reply: {"result": ...} or {"error": ...} (a page between two documents has no context to evaluate in).
  nlohmann::json Send(const std::string& method, nlohmann::json params = nlohmann::json::object()) {
    const int id = ++last_id_;
    nlohmann::json message = {{"id", id}, {"method", method}, {"params", std::move(params)}};
    if (!session_.empty() && method.rfind("Target.", 0) != 0) message["sessionId"] = session_;
    const std::string text = message.dump() + std::string(1, '\0');
    REQUIRE(write(to_, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      const nlohmann::json reply = Next(deadline);
      if (reply.value("id", 0) != id) continue;  // an event, or another reply
      return reply;
    }
    FAIL("no reply from chromium to " << method);
    return {};
  }

  // Opens `url` in a new page and attaches to it.
  void Open(const std::string& url) {
    const auto target = Call("Target.createTarget", {{"url", url}});
    const auto attached = Call("Target.attachToTarget", {{"targetId", target["targetId"]}, {"flatten", true}});
    session_ = attached["sessionId"].get<std::string>();
  }

  // The value of a JavaScript expression in the page; null when it could not be evaluated.
  nlohmann::json Evaluate(const std::string& expression) {
    const auto reply = Send("Runtime.evaluate", {{"expression", expression}, {"returnByValue", true}});
    if (!reply.contains("result") || !reply["result"].contains("result")) return nullptr;
    return reply["result"]["result"].value("value", nlohmann::json());
  }

  void Screenshot(const std::filesystem::path& png) {
    const auto shot = Call("Page.captureScreenshot", {{"format", "png"}});
    const std::string data = shot["data"].get<std::string>();
    std::string bytes(data.size(), '\0');
    const int length = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                       reinterpret_cast<const unsigned char*>(data.data()), static_cast<int>(data.size()));
    REQUIRE(length > 0);
    bytes.resize(static_cast<std::size_t>(length) - std::count(data.end() - 2, data.end(), '='));
    WriteFile(png, bytes);
  }

 private:
  nlohmann::json Next(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      if (const std::size_t end = buffer_.find('\0'); end != std::string::npos) {
        const std::string text = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return nlohmann::json::parse(text);
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd readable{from_, POLLIN, 0};
      REQUIRE(left.count() > 0);
      REQUIRE(poll(&readable, 1, static_cast<int>(left.count())) == 1);
      char chunk[65536];
      const ssize_t n = read(from_, chunk, sizeof chunk);
      REQUIRE(n > 0);
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  int last_id_ = 0;
  std::string session_;
  std::string buffer_;
};

}  // namespace kestrel::testing
