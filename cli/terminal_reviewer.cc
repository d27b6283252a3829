#include "cli/terminal_reviewer.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/stop.h"
#include "search/mutators/reviewer.h"

namespace kestrel::cli {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Single quotes for sh: the path may hold spaces.
std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// One line of the terminal (without its newline). Polls, so that a signal
// (Ctrl-C, SIGTERM), a spent budget or an answer on the live page does not
// leave the question waiting: false when the terminal closed or the
// question is cancelled.
bool ReadLine(const ReviewRequest& request, std::string& line) {
  line.clear();
  for (;;) {
    if (StopRequested() || request.Cancelled()) return false;
    pollfd ready{STDIN_FILENO, POLLIN, 0};
    if (::poll(&ready, 1, 200) < 0 && errno != EINTR) return false;
    if ((ready.revents & (POLLIN | POLLHUP)) == 0) continue;
    char c = 0;
    const ssize_t got = ::read(STDIN_FILENO, &c, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    if (c == '\n') return true;
    if (c != '\r') line += c;
  }
}

class TerminalReviewer final : public Reviewer {
 public:
  explicit TerminalReviewer(std::string author) : author_(std::move(author)) {}

  ReviewVerdict Review(const ReviewRequest& request) override {
    std::lock_guard lock(mutex_);  // one question at a time
    // Answered on the page (or the run stopped) while the terminal was busy.
    if (request.Cancelled()) return Withdraw();
    std::cerr << fmt::format("\n=== review: {} for node {} ({}) ===\n{}", request.purpose, request.parent,
                             request.mutation, request.text);
    if (!request.text.empty() && request.text.back() != '\n') std::cerr << "\n";
    for (;;) {
      std::cerr << "=== [a]ccept, [e]dit in $EDITOR, [r]eject with a reason? " << std::flush;
      std::string answer;
      if (!ReadLine(request, answer)) return Closed(request);
      if (answer == "a" || answer == "accept") return {ReviewVerdict::Kind::kAccept, "", author_};
      if (answer == "r" || answer == "reject") {
        std::cerr << "reason: " << std::flush;
        std::string reason;
        if (!ReadLine(request, reason)) return Closed(request);
        return Reject(reason.empty() ? "no reason given" : reason);
      }
      if (answer == "e" || answer == "edit") {
        if (auto edited = Edit(request)) return {ReviewVerdict::Kind::kEdit, *edited, author_};
        continue;  // the editor failed: ask again
      }
    }
  }

 private:
  ReviewVerdict Reject(std::string reason) { return {ReviewVerdict::Kind::kReject, std::move(reason), author_}; }

  ReviewVerdict Withdraw() { return {ReviewVerdict::Kind::kWithdrawn, "the run stopped before a person answered", author_}; }

  // The terminal stopped asking: the question was closed (answered on the
  // page, which the review desk then uses, or the run is stopping), or the
  // person closed the terminal.
  ReviewVerdict Closed(const ReviewRequest& request) {
    if (StopRequested() || request.Cancelled()) {
      std::cerr << "\n=== the question is closed (answered elsewhere, or the run is stopping) ===\n";
      return Withdraw();
    }
    return Reject("the reviewer closed the terminal");
  }

  // The text after $EDITOR ran on a copy of it; nullopt when the editor failed.
  std::optional<std::string> Edit(const ReviewRequest& request) {
    const auto path = std::filesystem::temp_directory_path() /
                      fmt::format("kestrel-review-{}-{}.{}", ::getpid(), ++edits_, request.purpose == "plan" ? "txt" : "cpp");
    std::ofstream(path, std::ios::binary) << request.text;
    const char* editor = std::getenv("EDITOR");
    const std::string command = std::string(editor != nullptr && *editor != '\0' ? editor : "vi") + " " + ShellQuote(path.string());
    const int status = std::system(command.c_str());
    std::string edited = ReadFile(path);
    std::filesystem::remove(path);
    if (status != 0) {
      std::cerr << fmt::format("kestrel: the editor ({}) exited with status {}; nothing changed\n", command, status);
      return std::nullopt;
    }
    return edited;
  }

  std::string author_;
  std::mutex mutex_;
  int edits_ = 0;
};

}  // namespace

std::shared_ptr<Reviewer> MakeTerminalReviewer(std::string author) {
  return std::make_shared<TerminalReviewer>(std::move(author));
}

}  // namespace kestrel::cli
