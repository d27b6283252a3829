#include "serve/live_server.h"

#include <sys/socket.h>

#include <charconv>
#include <map>
#include <mutex>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "report/html.h"
#include "report/report_model.h"
#include "report/report_page.h"
#include "serve/access.h"
#include "serve/review_panel.h"
#include "store/store.h"

namespace kestrel::serve {
namespace {

// A path or a stop reason may quote invalid UTF-8 (JsonText).
std::string Dump(const nlohmann::json& document) { return JsonText(document); }

void SendError(httplib::Response& response, int status, const std::string& message) {
  response.status = status;
  response.set_content(Dump(nlohmann::json{{"error", message}}), "application/json");
}

// The scope a page's query names; a malformed run id is InvalidArgument.
Result<ReportScope> ScopeOf(const httplib::Request& request) {
  ReportScope scope;
  if (request.has_param("task")) scope.task = request.get_param_value("task");
  if (request.has_param("run")) {
    const std::string text = request.get_param_value("run");
    std::int64_t id = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (error != std::errc() || end != text.data() + text.size() || id <= 0) {
      return Fail(Error::InvalidArgument("run: expected a positive run id, got '" + text + "'"));
    }
    scope.run_id = id;
  }
  return scope;
}

// The id in a route's first group (a node's, a question's).
Result<std::int64_t> PathId(const httplib::Request& request, const std::string& what) {
  try {
    return std::stoll(request.matches[1].str());
  } catch (const std::exception&) {
    return Fail(Error::InvalidArgument("a " + what + " id is a number"));
  }
}

nlohmann::json VersionJson(const DataVersion& version) {
  return {{"measurement", version.measurement},
          {"node", version.node},
          {"run_event", version.run_event},
          {"human_action", version.human_action},
          {"review_opened", version.review_opened},
          {"review_answered", version.review_answered}};
}

// Every run of the database with its status, each a link to its page.
std::string RunList(const std::vector<RunRecord>& runs) {
  using report::Escape;
  std::string html = "<details class=\"all-runs\"><summary>all runs (" + std::to_string(runs.size()) +
                     ")</summary><table><tr><th>run</th><th>task</th><th>status</th><th>evaluations</th><th>best</th>"
                     "</tr>";
  for (const RunRecord& run : runs) {
    const std::string status(ToString(run.status));
    html += "<tr data-run=\"" + std::to_string(run.id) + "\"><td><a href=\"/?run=" + std::to_string(run.id) + "\">" +
            std::to_string(run.id) + "</a></td><td>" + Escape(run.task_name) + "</td><td><span class=\"status s-" +
            status + "\">" + status + "</span></td><td>" + std::to_string(run.evaluations) + "</td><td>" +
            (run.best_speedup ? report::Speedup(*run.best_speedup) : "-") + "</td></tr>";
  }
  return html + "</table></details>";
}

}  // namespace

class LiveServer::Impl {
 public:
  explicit Impl(ServeOptions options) : options_(std::move(options)) {}

  void Route() {
    server_.set_payload_max_length(options_.max_request_bytes);
    server_.set_read_timeout(10, 0);
    // The listening socket is remembered (its backlog is raised once bound:
    // BindPort). SO_REUSEADDR, not the library's SO_REUSEPORT, so that a
    // second server on a port in use fails instead of sharing it.
    server_.set_socket_options([this](int socket) {
      const int yes = 1;
      ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      listening_ = socket;
    });
    server_.set_pre_routing_handler([this](const httplib::Request& request, httplib::Response& response) {
      if (IsLoopback(options_.bind) && !IsLoopbackHost(request.get_header_value("Host"))) {
        SendError(response, 403, "refused: a server on loopback answers requests for localhost, 127.0.0.1 or [::1] only");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (IsTraversal(request.path)) {
        SendError(response, 400, "refused: the path leaves the served routes");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (request.method != "GET" && request.method != "HEAD" && !Authorized(request)) {
        SendError(response, 401, options_.token.empty()
                                     ? "this server was started without --token: it takes no writes"
                                     : "a write needs the token in an Authorization: Bearer or X-Kestrel-Token header");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    server_.set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr error) {
      std::string message = "internal error";
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        message += std::string(": ") + e.what();
      } catch (...) {
      }
      SendError(response, 500, message);
    });
    server_.set_error_handler([](const httplib::Request& request, httplib::Response& response) {
      if (!response.body.empty()) return;
      const std::string what = response.status == 404   ? "no such page: " + request.path
                               : response.status == 413 ? "refused: the request is larger than this server takes"
                                                        : "bad request";
      SendError(response, response.status, what);
    });
    server_.Get("/", [this](const httplib::Request& request, httplib::Response& response) { Page(request, response); });
    server_.Get("/api/version", [this](const httplib::Request&, httplib::Response& response) { Version(response); });
    server_.Get("/api/runs", [this](const httplib::Request&, httplib::Response& response) { Runs(response); });
    // The write routes: a person's action on a node (store_human.cc), the
    // same rows `kestrel note|label|ban|pin` writes. The token is checked
    // before any route (above). The body is the note's text or the label's
    // word; for ban and pin, empty or "undo". X-Kestrel-Author names the
    // author (default "web").
    server_.Post(R"(/api/nodes/(\d+)/(note|label|ban|pin))",
                 [this](const httplib::Request& request, httplib::Response& response) { Act(request, response); });
    // The review mode's questions (kestrel run --review): the open ones, and
    // a person's answer. The body of an edit is the edited version; of a
    // rejection, the reason. The first answer wins (the terminal may be
    // first): a question no longer open gets 409.
    server_.Get("/api/reviews", [this](const httplib::Request&, httplib::Response& response) { Reviews(response); });
    server_.Post(R"(/api/reviews/(\d+)/(accept|edit|reject))",
                 [this](const httplib::Request& request, httplib::Response& response) { Answer(request, response); });
  }

  Status BindPort() {
    if (options_.port == 0) {
      port_ = server_.bind_to_any_port(options_.bind);
      if (port_ <= 0) return Fail(Error::Io("cannot bind " + options_.bind + " to any port"));
    } else {
      if (!server_.bind_to_port(options_.bind, options_.port)) {
        return Fail(Error::Io("cannot bind " + options_.bind + ":" + std::to_string(options_.port) +
                              " (in use, or not an address of this machine)"));
      }
      port_ = options_.port;
    }
    // The library listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG,
    // fixed when Debian built it): a burst of connections beyond it has its
    // SYNs dropped and retried after 1, 3, 7, 15, 31 s, so 100 page loads at
    // once took up to a minute while the server sat idle. Listening again
    // on the bound socket raises the backlog.
    if (listening_ >= 0) ::listen(listening_, SOMAXCONN);
    return {};
  }

  int port() const { return port_; }
  httplib::Server& server() { return server_; }

 private:
  bool Authorized(const httplib::Request& request) const {
    const std::string given =
        RequestToken(request.get_header_value("Authorization"), request.get_header_value("X-Kestrel-Token"));
    return TokenMatches(options_.token, given);
  }

  Result<std::unique_ptr<Store>> Open() const { return Store::Open(options_.db, Store::Mode::kReadOnly); }

  void Act(const httplib::Request& request, httplib::Response& response) {
    const auto node_id = PathId(request, "node");
    if (!node_id) return SendError(response, 400, node_id.error().message());
    const std::string verb = request.matches[2].str();
    const std::string& body = request.body;
    std::string author = request.get_header_value("X-Kestrel-Author");
    if (author.empty()) author = "web";
    HumanActionKind kind = HumanActionKind::kNote;
    std::string text = body;
    if (verb == "note") {
      if (body.empty()) return SendError(response, 400, "a note needs its text as the request's body");
    } else if (verb == "label") {
      kind = HumanActionKind::kLabel;
      if (!IsLabelWord(body)) {
        std::string words;
        for (std::string_view word : kLabelWords) words += (words.empty() ? "" : ", ") + std::string(word);
        return SendError(response, 400, "a label is one of " + words);
      }
    } else {
      if (!body.empty() && body != "undo") return SendError(response, 400, "the body of a " + verb + " is empty or \"undo\"");
      const bool undo = body == "undo";
      kind = verb == "ban" ? (undo ? HumanActionKind::kUnban : HumanActionKind::kBan)
                           : (undo ? HumanActionKind::kUnpin : HumanActionKind::kPin);
      text.clear();
    }
    // One short write per request, on a connection of its own; a run writing
    // meanwhile is waited for (SQLite's busy timeout), never blocked long.
    auto store = Store::Open(options_.db, Store::Mode::kExisting);
    if (!store) return SendError(response, 503, store.error().message());
    auto node = (*store)->GetNode(*node_id);
    if (!node) {
      return SendError(response, node.error().code() == ErrorCode::kNotFound ? 404 : 503, node.error().message());
    }
    auto id = (*store)->AddHumanAction({0, node->graph_id, node->id, 0, kind, text, author, 0});
    if (!id) return SendError(response, id.error().IsInvalidArgument() ? 400 : 503, id.error().message());
    response.status = 201;
    response.set_content(Dump(nlohmann::json{{"action", *id}, {"node", *node_id}, {"kind", ToString(kind)}, {"author", author}}),
                         "application/json");
  }

  void Reviews(httplib::Response& response) {
    auto store = Open();
    if (!store) return SendError(response, 503, store.error().message());
    auto questions = (*store)->OpenReviewQuestions();
    if (!questions) return SendError(response, 503, questions.error().message());
    nlohmann::json list = nlohmann::json::array();
    for (const ReviewQuestionRecord& question : *questions) {
      list.push_back({{"id", question.id}, {"run", question.run_id}, {"parent", question.parent_id},
                      {"purpose", question.purpose}, {"mutation", question.mutation}, {"text", question.text},
                      {"created_at", question.created_at}});
    }
    response.set_header("Cache-Control", "no-store");
    response.set_content(Dump(list), "application/json");
  }

  void Answer(const httplib::Request& request, httplib::Response& response) {
    const auto question_id = PathId(request, "question");
    if (!question_id) return SendError(response, 400, question_id.error().message());
    const std::int64_t id = *question_id;
    const std::string verb = request.matches[2].str();
    std::string author = request.get_header_value("X-Kestrel-Author");
    if (author.empty()) author = "web";
    ReviewState state = ReviewState::kAccepted;
    std::string text;
    if (verb == "edit") {
      if (request.body.empty()) return SendError(response, 400, "an edit needs the edited version as the request's body");
      state = ReviewState::kEdited;
      text = request.body;
    } else if (verb == "reject") {
      state = ReviewState::kRejected;
      text = request.body.empty() ? "no reason given" : request.body;
    }
    auto store = Store::Open(options_.db, Store::Mode::kExisting);
    if (!store) return SendError(response, 503, store.error().message());
    auto first = (*store)->AnswerReviewQuestion(id, state, text, author);
    if (!first) {
      return SendError(response, first.error().code() == ErrorCode::kNotFound ? 404 : 503, first.error().message());
    }
    if (!*first) {
      auto question = (*store)->GetReviewQuestion(id);
      if (!question) return SendError(response, 503, question.error().message());
      return SendError(response, 409, "question " + std::to_string(id) + " is already " +
                                          std::string(ToString(question->state)) + " (by " + question->author + ")");
    }
    response.status = 200;
    response.set_content(Dump(nlohmann::json{{"question", id}, {"state", ToString(state)}, {"author", author}}),
                         "application/json");
  }

  void Version(httplib::Response& response) {
    auto store = Open();
    if (!store) return SendError(response, 503, store.error().message());
    auto version = (*store)->ReadDataVersion();
    if (!version) return SendError(response, 503, version.error().message());
    response.set_header("Cache-Control", "no-store");
    response.set_content(VersionJson(*version).dump(), "application/json");
  }

  void Runs(httplib::Response& response) {
    auto store = Open();
    if (!store) return SendError(response, 503, store.error().message());
    auto runs = (*store)->ListRuns();
    if (!runs) return SendError(response, 503, runs.error().message());
    nlohmann::json list = nlohmann::json::array();
    for (const RunRecord& run : *runs) {
      list.push_back({{"id", run.id}, {"task", run.task_name}, {"status", ToString(run.status)},
                      {"stop_reason", run.stop_reason}, {"evaluations", run.evaluations},
                      {"best_speedup", run.best_speedup ? nlohmann::json(*run.best_speedup) : nlohmann::json()}});
    }
    response.set_content(Dump(list), "application/json");
  }

  void Page(const httplib::Request& request, httplib::Response& response) {
    auto scope = ScopeOf(request);
    if (!scope) return SendError(response, 400, scope.error().message());
    auto store = Open();
    if (!store) return SendError(response, 503, store.error().message());
    auto version = (*store)->ReadDataVersion();
    if (!version) return SendError(response, 503, version.error().message());
    const std::string key = (scope->task ? *scope->task : "") + "\n" +
                            (scope->run_id ? std::to_string(*scope->run_id) : "");
    // One render per data version and scope; requests meanwhile wait for it.
    std::lock_guard lock(pages_mutex_);
    if (!(*version == pages_version_)) {
      pages_.clear();
      pages_version_ = *version;
    }
    if (auto cached = pages_.find(key); cached != pages_.end()) {
      response.set_header("Cache-Control", "no-store");
      response.set_content(cached->second, "text/html; charset=utf-8");
      return;
    }
    auto runs = (*store)->ListRuns();
    if (!runs) return SendError(response, 503, runs.error().message());
    report::PageOptions options;
    options.version_url = "/api/version";
    options.version = VersionJson(*version).dump();
    auto questions = (*store)->OpenReviewQuestions(scope->run_id.value_or(0));
    if (!questions) return SendError(response, 503, questions.error().message());
    options.preface_html = ReviewPanelHtml(*questions) + RunList(*runs);
    std::string page;
    if (runs->empty() && !scope->task && !scope->run_id) {
      page = report::NoRunsHtml(options);  // it follows the first run when it starts
    } else {
      auto model = LoadReport(**store, *scope);
      if (!model) return SendError(response, model.error().IsInvalidArgument() ? 404 : 503, model.error().message());
      page = report::ReportHtml(*model, options);
    }
    const std::string& html = pages_[key] = std::move(page);
    response.set_header("Cache-Control", "no-store");
    response.set_content(html, "text/html; charset=utf-8");
  }

  ServeOptions options_;
  httplib::Server server_;
  int listening_ = -1;  // the listening socket, once bound
  int port_ = 0;
  std::mutex pages_mutex_;
  DataVersion pages_version_;
  std::map<std::string, std::string> pages_;  // by scope, for pages_version_
};

Status LiveServer::CheckAccess(const ServeOptions& options) {
  if (!IsLoopback(options.bind) && options.token.empty()) {
    return Fail(Error::InvalidArgument("--bind " + options.bind +
                                       " is reachable from other machines: give a token (--token or KESTREL_TOKEN) "
                                       "or bind 127.0.0.1"));
  }
  return {};
}

Result<std::unique_ptr<LiveServer>> LiveServer::Bind(const ServeOptions& options) {
  if (auto allowed = CheckAccess(options); !allowed) return Fail(allowed.error());
  auto impl = std::make_unique<Impl>(options);
  impl->Route();
  if (auto bound = impl->BindPort(); !bound) return Fail(bound.error());
  return std::unique_ptr<LiveServer>(new LiveServer(std::move(impl)));
}

LiveServer::LiveServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LiveServer::~LiveServer() = default;

int LiveServer::Port() const { return impl_->port(); }

Status LiveServer::Serve() {
  if (!impl_->server().listen_after_bind()) return Fail(Error::Io("the server stopped listening"));
  return {};
}

void LiveServer::Stop() { impl_->server().stop(); }

}  // namespace kestrel::serve
