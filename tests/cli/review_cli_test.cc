// `kestrel run --review` driven through a pseudo-terminal (forkpty): the
// real binary, a scripted OpenAI-compatible server on loopback, and an
// EDITOR that is a small script editing the file. A rejection, an edit and
// an acceptance, each recorded as a human action and visible in the graph;
// the reason of the rejection reaches the next prompt for that parent.
// Without a terminal, --review refuses to start.

#include <doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <httplib.h>

#include "cli_workspace.h"
#include "serve_process.h"
#include "testing.h"
#include "tests/llm/scripted_server.h"
#include "tests/sqlite_peek.h"

using namespace kestrel;
using nlohmann::json;
using testing::Exec;
using testing::Reply;
using testing::ScriptedServer;
using testing::Workspace;

namespace {

constexpr char kKeyEnv[] = "KESTREL_REVIEW_TEST_KEY";
constexpr char kQuestion[] = "[a]ccept, [e]dit in $EDITOR, [r]eject with a reason?";

// A correct axpy, unrolled `unroll` times: each reply a different kernel.
std::string Axpy(int unroll) {
  std::string body = "#include <cstdint>\nvoid axpy(const float* x, float* y, int64_t n) {\n  int64_t i = 0;\n";
  body += "  for (; i + " + std::to_string(unroll) + " <= n; i += " + std::to_string(unroll) + ") {\n";
  for (int u = 0; u < unroll; ++u) body += "    y[i + " + std::to_string(u) + "] = 2.0f * x[i + " + std::to_string(u) + "] + 1.0f;\n";
  return body + "  }\n  for (; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;\n}\n";
}

Reply Chat(const std::string& code) {
  return {200, json{{"choices", {{{"message", {{"role", "assistant"}, {"content", "```cpp\n" + code + "```\n"}}}, {"finish_reason", "stop"}}}},
                    {"usage", {{"prompt_tokens", 900}, {"completion_tokens", 150}}}}
                   .dump()};
}

std::string WriteConfig(Workspace& workspace, const ScriptedServer& server, const std::string& time = "120s") {
  ::setenv(kKeyEnv, "sk-review-test", 1);
  ::setenv("NO_PROXY", "127.0.0.1", 1);
  ::setenv("no_proxy", "127.0.0.1", 1);
  const json config = {
      {"task", "affine"},
      {"mutators",
       {{{"kind", "llm"}, {"provider", "openai"}, {"model", "scripted-model"}, {"base_url", server.BaseUrl()},
         {"api_key_env", kKeyEnv}, {"timeout_s", 10}, {"max_tokens", 1000}, {"combine_share", 0}}}},
      {"analyst", false},
      {"evaluator", {{"min_time", 0.02}, {"min_samples", 3}}},
      {"confirm", {{"rounds", 0}}},
      {"budget", {{"evaluations", 3}, {"time", time}}},
      {"parallel", {{"max_in_flight", 1}}}};
  const auto path = workspace.path() / "review.json";
  testing::WriteFile(path, config.dump(2));
  return path.string();
}

// kestrel on a pseudo-terminal: what it printed so far, and the answers.
class Terminal {
 public:
  Terminal(const Workspace& workspace, const std::vector<std::string>& args, const std::string& editor) {
    std::vector<std::string> full{testing::KestrelPath().string(), "--db", workspace.db().string(), "--tasks-dir",
                                  workspace.tasks().string()};
    full.insert(full.end(), args.begin(), args.end());
    pid_ = forkpty(&master_, nullptr, nullptr, nullptr);
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& arg : full) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::setenv("EDITOR", editor.c_str(), 1);
      ::setenv("USER", "ada", 1);
      ::unsetenv("KESTREL_DB");
      if (chdir(workspace.path().c_str()) != 0) _exit(127);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~Terminal() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(master_);
  }

  // Reads until the `count`-th question appears (true) or the process ends
  // or `seconds` pass (false).
  bool WaitForQuestion(int count, double seconds = 90) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (Questions() < count) {
      if (std::chrono::steady_clock::now() > deadline || !ReadSome()) return false;
    }
    return true;
  }
  void Type(const std::string& line) {
    const std::string text = line + "\n";
    REQUIRE(write(master_, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  }
  // Reads to the end; the exit code.
  int Finish() {
    while (ReadSome()) {
    }
    int status = 0;
    REQUIRE(waitpid(pid_, &status, 0) == pid_);
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  const std::string& screen() const { return screen_; }

 private:
  int Questions() const {
    int count = 0;
    for (auto at = screen_.find(kQuestion); at != std::string::npos; at = screen_.find(kQuestion, at + 1)) ++count;
    return count;
  }
  // False at the end of the output (the process closed the terminal).
  bool ReadSome() {
    pollfd ready{master_, POLLIN, 0};
    if (poll(&ready, 1, 200) < 0) return false;
    if ((ready.revents & (POLLIN | POLLHUP)) == 0) return true;
    char buffer[4096];
    const ssize_t got = read(master_, buffer, sizeof(buffer));
    if (got <= 0) return false;  // EIO once the child is gone
    screen_.append(buffer, static_cast<std::size_t>(got));
    return true;
  }

  int master_ = -1;
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string screen_;
};

// The open questions the live page lists (GET /api/reviews).
json OpenQuestions(httplib::Client& client) {
  const auto reply = client.Get("/api/reviews");
  REQUIRE(reply);
  REQUIRE(reply->status == 200);
  return json::parse(reply->body);
}

// Waits (up to `seconds`) for an open question other than those answered.
json NextQuestion(httplib::Client& client, const testing::Process& run, std::int64_t after, double seconds = 90) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const json& question : OpenQuestions(client)) {
      if (question.at("id").get<std::int64_t>() > after) return question;
    }
    if (auto exited = Workspace::Poll(run)) FAIL("the run ended with " << exited->code << " before a question: " << exited->err);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL("no question appeared");
  return {};
}

// The database file, once the run made it (serve reads an existing one).
void WaitForDatabase(const Workspace& workspace) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(workspace.db()) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(std::filesystem::exists(workspace.db()));
}

}  // namespace

TEST_SUITE("cli") {
  TEST_CASE("kestrel run --review-page: the live page answers (reject, edit, accept), each recorded; late answers get 409") {
    ScriptedServer server({Chat(Axpy(2)), Chat(Axpy(4)), Chat(Axpy(8)), Chat(Axpy(16))});
    Workspace workspace;
    const std::string config = WriteConfig(workspace, server);
    const testing::Process run = workspace.Spawn({"run", config, "--each", "--review-page"});
    WaitForDatabase(workspace);
    const testing::Served served = testing::StartServe(workspace, {"--token", "review-tok"});
    httplib::Client client("127.0.0.1", served.port);
    const httplib::Headers grace{{"X-Kestrel-Token", "review-tok"}, {"X-Kestrel-Author", "grace"}};

    // 1. Rejected with a reason; without the token first, which changes nothing.
    const json first = NextQuestion(client, run, 0);
    const std::int64_t q1 = first.at("id").get<std::int64_t>();
    CHECK(first.at("purpose") == "mutate");
    CHECK(first.at("text").get<std::string>().find("i + 2 <= n") != std::string::npos);
    const auto page = client.Get("/");
    REQUIRE(page);
    CHECK(page->body.find("data-question=\"" + std::to_string(q1) + "\"") != std::string::npos);
    CHECK(page->body.find("i + 2 &lt;= n") != std::string::npos);  // the proposal, escaped, in the edit box
    const auto refused = client.Post("/api/reviews/" + std::to_string(q1) + "/accept", "", "text/plain");
    REQUIRE(refused);
    CHECK(refused->status == 401);
    CHECK(OpenQuestions(client).size() == 1);
    const auto rejected = client.Post("/api/reviews/" + std::to_string(q1) + "/reject", grace,
                                      "unrolling by two is not worth a node", "text/plain");
    REQUIRE(rejected);
    CHECK_MESSAGE(rejected->status == 200, rejected->body);
    const auto late = client.Post("/api/reviews/" + std::to_string(q1) + "/accept", grace, "", "text/plain");
    REQUIRE(late);
    CHECK(late->status == 409);
    CHECK(late->body.find("already rejected (by grace)") != std::string::npos);
    const auto unknown = client.Post("/api/reviews/999999/accept", grace, "", "text/plain");
    REQUIRE(unknown);
    CHECK(unknown->status == 404);

    // 2. Accepted as edited on the page; an empty edit is refused first.
    const json second = NextQuestion(client, run, q1);
    const std::int64_t q2 = second.at("id").get<std::int64_t>();
    const auto empty_edit = client.Post("/api/reviews/" + std::to_string(q2) + "/edit", grace, "", "text/plain");
    REQUIRE(empty_edit);
    CHECK(empty_edit->status == 400);
    const std::string edited_text = second.at("text").get<std::string>() + "// edited on the page\n";
    const auto edited = client.Post("/api/reviews/" + std::to_string(q2) + "/edit", grace, edited_text, "text/plain");
    REQUIRE(edited);
    CHECK_MESSAGE(edited->status == 200, edited->body);

    // 3. Accepted.
    const json third = NextQuestion(client, run, q2);
    const std::int64_t q3 = third.at("id").get<std::int64_t>();
    const auto accepted = client.Post("/api/reviews/" + std::to_string(q3) + "/accept", grace, "", "text/plain");
    REQUIRE(accepted);
    CHECK_MESSAGE(accepted->status == 200, accepted->body);

    const Exec done = Workspace::Wait(run);
    CHECK_MESSAGE(done.code == 0, done.err);
    StopServe(served);

    const auto db = workspace.db();
    // The rejection reached the next prompt for the same parent (the seed).
    const auto seen = server.seen();
    REQUIRE(seen.size() == 3);
    CHECK(seen[1].body.find("unrolling by two is not worth a node") != std::string::npos);
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM review_questions") == 3);
    for (const auto& [id, state] : {std::pair{q1, "rejected"}, std::pair{q2, "edited"}, std::pair{q3, "accepted"}}) {
      CAPTURE(id);
      CHECK(testing::QueryInt(db, "SELECT count(*) FROM review_questions WHERE author = 'grace' AND state = '" +
                                      std::string(state) + "' AND id = " + std::to_string(id)) == 1);
    }
    const std::int64_t seed = testing::QueryInt(db, "SELECT id FROM nodes WHERE mutation LIKE 'seed:%'");
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM human_actions WHERE kind = 'review_reject' AND author = 'grace' "
                                "AND text = 'unrolling by two is not worth a node' AND node_id = " +
                                    std::to_string(seed)) == 1);
    const std::int64_t edited_node = testing::QueryInt(db, "SELECT node_id FROM human_actions WHERE kind = 'review_edit'");
    const std::int64_t accepted_node = testing::QueryInt(db, "SELECT node_id FROM human_actions WHERE kind = 'review_accept'");
    REQUIRE(edited_node > 0);
    REQUIRE(accepted_node > 0);
    const json shown = json::parse(workspace.Run({"show", std::to_string(edited_node), "--json"}).out);
    CHECK(shown.at("source").get<std::string>().find("// edited on the page") != std::string::npos);
    CHECK(shown.at("mutation").get<std::string>().find("(edited by grace)") != std::string::npos);
    CHECK(shown.at("status") == "measured");
    const json accepted_shown = json::parse(workspace.Run({"show", std::to_string(accepted_node), "--json"}).out);
    CHECK(accepted_shown.at("source").get<std::string>().find("i + 8 <= n") != std::string::npos);
  }

  TEST_CASE("a question still open when the time budget runs out is withdrawn: the run ends, no one's verdict recorded") {
    ScriptedServer server({Chat(Axpy(2)), Chat(Axpy(4))});
    Workspace workspace;
    const std::string config = WriteConfig(workspace, server, "8s");
    const auto started = std::chrono::steady_clock::now();
    const Exec done = workspace.Run({"run", config, "--each", "--review-page"});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    CHECK_MESSAGE(done.code == 0, done.err);
    CHECK(seconds < 60);
    const auto db = workspace.db();
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM review_questions") == 1);
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM review_questions WHERE state = 'withdrawn' AND author = 'kestrel'") == 1);
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM human_actions") == 0);
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM runs WHERE stop_reason LIKE '%time%'") == 1);
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM nodes") == 1);  // the seed only: the proposal was dropped
  }

  TEST_CASE("a question a killed session left open is withdrawn when its run resumes") {
    ScriptedServer server({Chat(Axpy(2)), Chat(Axpy(4)), Chat(Axpy(8)), Chat(Axpy(16))});
    Workspace workspace;
    const std::string config = WriteConfig(workspace, server);
    const auto db = workspace.db();
    const testing::Process run = workspace.Spawn({"run", config, "--review-page"});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!std::filesystem::exists(db) ||
           testing::QueryInt(db, "SELECT count(*) FROM review_questions WHERE state = 'open'") == 0) {
      REQUIRE_FALSE(Workspace::Poll(run));
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    REQUIRE(::kill(run.pid, SIGKILL) == 0);
    Workspace::Wait(run);
    // No one will act on its answer: the page must not offer it.
    const Exec resumed = workspace.Run({"resume", "--run", "1", "--max-evals", "1", "--quiet"});
    CHECK_MESSAGE(resumed.code == 0, resumed.err);
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM review_questions WHERE state = 'open'") == 0);
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM review_questions WHERE state = 'withdrawn' AND author = 'kestrel' "
                                "AND answer LIKE '%killed%'") == 1);
  }

  TEST_CASE("kestrel resume --review-page: the resumed run's questions are on the page too") {
    ScriptedServer server({Chat(Axpy(2)), Chat(Axpy(4)), Chat(Axpy(8))});
    Workspace workspace;
    const std::string config = WriteConfig(workspace, server);
    // A run without review, stopped after the seed, then resumed with it.
    REQUIRE(workspace.Run({"run", config, "--max-evals", "1"}).code == 0);
    const testing::Process resumed = workspace.Spawn({"resume", "--run", "1", "--max-evals", "1", "--review-page"});
    const testing::Served served = testing::StartServe(workspace, {"--token", "review-tok"});
    httplib::Client client("127.0.0.1", served.port);
    const json question = NextQuestion(client, resumed, 0);
    const std::int64_t run_id = testing::QueryInt(workspace.db(), "SELECT max(id) FROM runs");
    CHECK(question.at("run").get<std::int64_t>() == run_id);
    const auto accepted = client.Post("/api/reviews/" + std::to_string(question.at("id").get<std::int64_t>()) + "/accept",
                                      {{"X-Kestrel-Token", "review-tok"}}, "", "text/plain");
    REQUIRE(accepted);
    CHECK(accepted->status == 200);
    const Exec done = Workspace::Wait(resumed);
    CHECK_MESSAGE(done.code == 0, done.err);
    StopServe(served);
    CHECK(testing::QueryInt(workspace.db(), "SELECT count(*) FROM human_actions WHERE kind = 'review_accept' AND author = 'web'") == 1);
  }

  TEST_CASE("kestrel run --review on a terminal: a rejection fed back, an edit in $EDITOR, an acceptance, each recorded") {
    ScriptedServer server({Chat(Axpy(2)), Chat(Axpy(4)), Chat(Axpy(8)), Chat(Axpy(16))});
    Workspace workspace;
    const std::string config = WriteConfig(workspace, server);
    const auto editor = workspace.path() / "edit.sh";
    testing::WriteFile(editor, "#!/bin/sh\nprintf '// edited by hand\\n' >> \"$1\"\n");
    REQUIRE(chmod(editor.c_str(), 0755) == 0);

    Terminal terminal(workspace, {"run", config, "--each", "--review"}, editor.string());
    REQUIRE_MESSAGE(terminal.WaitForQuestion(1), terminal.screen());
    CHECK(terminal.screen().find("i + 2 <= n") != std::string::npos);  // the proposal was shown
    terminal.Type("r");
    terminal.Type("unrolling by two is not worth a node");
    REQUIRE_MESSAGE(terminal.WaitForQuestion(2), terminal.screen());
    terminal.Type("e");
    REQUIRE_MESSAGE(terminal.WaitForQuestion(3), terminal.screen());
    terminal.Type("a");
    const int code = terminal.Finish();
    CAPTURE(terminal.screen());
    REQUIRE(code == 0);

    // The rejection reached the next prompt for the same parent (the seed).
    const auto seen = server.seen();
    REQUIRE(seen.size() == 3);
    CHECK(seen[0].body.find("unrolling by two is not worth a node") == std::string::npos);
    CHECK(seen[1].body.find("rejected") != std::string::npos);
    CHECK(seen[1].body.find("unrolling by two is not worth a node") != std::string::npos);

    const auto db = workspace.db();
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM human_actions") == 3);
    const std::int64_t seed = testing::QueryInt(db, "SELECT id FROM nodes WHERE mutation LIKE 'seed:%'");
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM human_actions WHERE kind = 'review_reject' AND node_id = " +
                                    std::to_string(seed) + " AND author = 'ada' AND text = 'unrolling by two is not worth a node'") == 1);
    const std::int64_t edited = testing::QueryInt(db, "SELECT node_id FROM human_actions WHERE kind = 'review_edit'");
    const std::int64_t accepted = testing::QueryInt(db, "SELECT node_id FROM human_actions WHERE kind = 'review_accept'");
    REQUIRE(edited > 0);
    REQUIRE(accepted > 0);
    // Both are in the graph, measured: the edited one under the seed (the
    // only measured node then), the accepted one under the seed or under it.
    const auto parent_of = [&](std::int64_t node) {
      return testing::QueryInt(db, "SELECT parent_id FROM edges WHERE kind = 'derive' AND child_id = " + std::to_string(node));
    };
    CHECK(parent_of(edited) == seed);
    CHECK((parent_of(accepted) == seed || parent_of(accepted) == edited));
    for (const std::int64_t node : {edited, accepted}) {
      CAPTURE(node);
      CHECK(testing::QueryInt(db, "SELECT count(*) FROM nodes WHERE status = 'measured' AND id = " + std::to_string(node)) == 1);
    }
    // The edited version is the node; the LLM's original stays in its call.
    const json shown = json::parse(workspace.Run({"show", std::to_string(edited), "--json"}).out);
    CHECK(shown.at("source").get<std::string>().find("// edited by hand") != std::string::npos);
    CHECK(shown.at("source").get<std::string>().find("i + 4 <= n") != std::string::npos);
    REQUIRE(shown.at("llm_calls").size() == 1);
    CHECK(shown.at("llm_calls")[0].at("response").get<std::string>().find("edited by hand") == std::string::npos);
    CHECK(shown.at("mutation").get<std::string>().find("(edited by ada)") != std::string::npos);
    REQUIRE(shown.at("actions").size() == 1);
    CHECK(shown.at("actions")[0].at("kind") == "review_edit");
    const json accepted_node = json::parse(workspace.Run({"show", std::to_string(accepted), "--json"}).out);
    CHECK(accepted_node.at("source").get<std::string>().find("i + 8 <= n") != std::string::npos);
    CHECK(accepted_node.at("actions")[0].at("kind") == "review_accept");
    const Exec text = workspace.Run({"show", std::to_string(edited)});
    CHECK(text.out.find("review_edit") != std::string::npos);
  }

  TEST_CASE("kestrel run --review without a terminal refuses to start instead of waiting") {
    Workspace workspace;
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    const auto err = workspace.path() / "err";
    if (pid == 0) {
      const int null = open("/dev/null", O_RDONLY);
      const int errors = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(null, STDIN_FILENO);
      dup2(errors, STDERR_FILENO);
      execl(testing::KestrelPath().c_str(), "kestrel", "--db", workspace.db().c_str(), "--tasks-dir",
            workspace.tasks().c_str(), "run", "--task", "affine", "--review", static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK(testing::ReadFile(err).find("--review") != std::string::npos);
    CHECK(testing::ReadFile(err).find("not a terminal") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(workspace.db()));  // nothing started
  }
}
