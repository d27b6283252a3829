// The live page and the report in a real browser (headless chromium), over
// one real run: the live page follows the run as it records results; then
// the report's numbers are `kestrel best --json`'s, the graph has one element
// per node, every node has its page, and hostile text stays text.
// Screenshots are kept under build/test-artifacts. Skips, saying why,
// without chromium.
#include <doctest.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/chromium.h"
#include "cli/cli_workspace.h"
#include "cli/serve_process.h"
#include "report/hostile_node.h"
#include "store/store.h"

namespace kestrel {
namespace {

using json = nlohmann::json;
using testing::Exec;
using testing::Workspace;

std::vector<std::int64_t> NodeIds(const std::filesystem::path& db) {
  auto store = Store::Open(db, Store::Mode::kReadOnly);
  REQUIRE(store);
  auto runs = (*store)->ListRuns();
  REQUIRE(runs);
  REQUIRE(!runs->empty());
  auto nodes = (*store)->LoadNodes(runs->front().graph_id);
  REQUIRE(nodes);
  std::vector<std::int64_t> ids;
  for (const NodeRecord& node : *nodes) ids.push_back(node.id);
  return ids;
}

std::string Report(Workspace& workspace, const std::string& name) {
  const auto html = workspace.path() / name;
  const Exec report = workspace.Run({"report", "-o", html.string()});
  INFO(report.err);
  REQUIRE(report.code == 0);
  return "file://" + html.string();
}

// The finished run's report: `kestrel best --json`'s numbers, one graph
// element and one page per node, hostile text as text.
void CheckReport(const std::filesystem::path& browser, Workspace& workspace) {
  const std::string url = Report(workspace, "report.html");
  const std::string dom = testing::DumpDom(browser, workspace.path() / "profile", url);
  REQUIRE(dom.find("Kestrel report: affine_wide") != std::string::npos);
  testing::Screenshot(browser, workspace.path() / "profile", url, testing::ArtifactDir() / "report.png");

  // The top table is `kestrel best --json`: the same nodes, in its order, with its speedups.
  const Exec best = workspace.Run({"best", "--json", "--top", "10"});
  REQUIRE(best.code == 0);
  const json rows = json::parse(best.out);
  REQUIRE(!rows.empty());
  std::size_t at = 0;
  for (const json& row : rows) {
    const std::string tr = fmt::format("<tr class=\"top-row\" data-node=\"{}\"", row["node"].get<std::int64_t>());
    at = dom.find(tr, at);
    INFO("node " << row["node"]);
    REQUIRE(at != std::string::npos);
    const std::string shown = fmt::format("<span class=\"speedup\">{:.2f}x</span>", row["speedup"].get<double>());
    CHECK(dom.find(shown, at) < dom.find("</tr>", at));
  }
  // The summary names the best of them.
  CHECK(dom.find(fmt::format(", best {:.2f}x", rows[0]["speedup"].get<double>())) != std::string::npos);
  CHECK(dom.find("data-evaluations=\"12\"") != std::string::npos);

  // The graph has one element per node, and every node has its page.
  const auto ids = NodeIds(workspace.db());
  CHECK(testing::Count(dom, "id=\"g_node_") == static_cast<int>(ids.size()));
  CHECK(testing::Count(dom, "class=\"node-page\"") == static_cast<int>(ids.size()));
  for (std::int64_t id : ids) {
    CHECK(testing::Count(dom, fmt::format("id=\"g_node_{}\"", id)) == 1);
    CHECK(testing::Count(dom, fmt::format("<section class=\"node-page\" id=\"node-{}\"", id)) == 1);
  }

  // Hostile text from the database is text in the browser's DOM: no element was made of it.
  testing::AddHostileNode(workspace.db());
  const std::string hostile_url = Report(workspace, "hostile.html");
  const std::string hostile = testing::DumpDom(browser, workspace.path() / "profile", hostile_url);
  REQUIRE(hostile.find("Kestrel report: affine_wide") != std::string::npos);
  CHECK(hostile.find("<img") == std::string::npos);
  CHECK(testing::Count(hostile, "&lt;/script&gt;&lt;img src=\"x\" onerror=\"alert(1)\"&gt;") +
            testing::Count(hostile, "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;") >= 6);
}

TEST_SUITE("report_browser") {
  TEST_CASE("a real run in chromium: the live page follows it, then its report shows it") {
    const auto browser = testing::FindChromium();
    if (!browser) return;
    Workspace workspace;
    const auto run = workspace.Spawn({"run", "--task", "affine_wide", "--max-evals", "12", "--min-time", "0.05",
                                      "--quiet"});
    // The server needs the database the run creates.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!std::filesystem::exists(workspace.db()) || workspace.Run({"runs", "--json"}).out.find("\"id\"") == std::string::npos) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const auto served = testing::StartServe(workspace);
    testing::DevtoolsPipe page(*browser, workspace.path() / "live-profile");
    page.Open(fmt::format("http://127.0.0.1:{}/", served.port));
    const auto shown = [&page] {
      const json value = page.Evaluate(
          "(() => { const s = document.querySelector('p.summary'); return s ? Number(s.dataset.evaluations) : -1; })()");
      return value.is_number() ? value.get<int>() : -1;
    };
    int first = -1;
    while ((first = shown()) < 0) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // The page was not reloaded by the browser: the same document, its body swapped by the page's own script.
    page.Evaluate("window.kestrelTestMark = 1");
    int now = first;
    const auto later = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while ((now = shown()) <= first && std::chrono::steady_clock::now() < later) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    INFO("evaluations shown first " << first << ", then " << now);
    CHECK(now > first);
    CHECK(page.Evaluate("window.kestrelTestMark") == 1);
    page.Call("Emulation.setDeviceMetricsOverride", {{"width", 1200}, {"height", 1400}, {"deviceScaleFactor", 1},
                                                     {"mobile", false}});
    page.Screenshot(testing::ArtifactDir() / "live.png");

    const Exec finished = Workspace::Wait(run);
    INFO(finished.err);
    REQUIRE(finished.code == 0);
    // Once the run ends the page shows all of it.
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while ((now = shown()) < 12 && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    CHECK(now == 12);
    CHECK(testing::StopServe(served).code == 0);
    CheckReport(*browser, workspace);
  }

  TEST_CASE("a person's note and label from the live page's buttons are stored, and the page shows them") {
    const auto browser = testing::FindChromium();
    if (!browser) return;
    Workspace& workspace = testing::Searched();
    const auto served = testing::StartServe(workspace, {"--token", "pagetoken"});
    testing::DevtoolsPipe page(*browser, workspace.path() / "act-profile");
    page.Open(fmt::format("http://127.0.0.1:{}/", served.port));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    const auto until = [&](const std::string& expression) {
      while (page.Evaluate(expression) != true) {
        REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, expression);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    };
    until("document.querySelector('.act[data-node=\"2\"] .act-text') !== null");
    // A wrong token: refused, said on the page, nothing stored.
    page.Evaluate("sessionStorage.setItem('kestrel-token', 'wrong'); "
                  "kestrelAct(document.querySelector('.act[data-node=\"3\"] button'), 'ban')");
    until("document.querySelector('.act[data-node=\"3\"] .act-said').textContent.startsWith('401')");
    // The right one, typed where a person types it.
    page.Evaluate("(() => { const t = document.getElementById('kestrel-token'); t.value = 'pagetoken'; kestrelKeep(t);"
                  " const a = document.getElementById('kestrel-author'); a.value = 'grace'; kestrelKeep(a);"
                  " const box = document.querySelector('.act[data-node=\"2\"]');"
                  " box.querySelector('.act-text').value = 'tail loop <checked>';"
                  " kestrelAct(box.querySelector('button'), 'note'); })()");
    // The page follows its own write like any other change.
    until("document.querySelector('#node-2').textContent.includes('tail loop <checked>')");
    page.Evaluate("(() => { const box = document.querySelector('.act[data-node=\"2\"]');"
                  " box.querySelector('.act-label').value = 'interesting';"
                  " kestrelAct(box.querySelectorAll('button')[1], 'label'); })()");
    until("document.querySelector('#node-2 .label') !== null && "
          "document.querySelector('#node-2 .label').textContent === 'interesting'");
    CHECK(testing::StopServe(served).code == 0);
    auto store = Store::Open(workspace.db(), Store::Mode::kReadOnly);
    REQUIRE(store);
    const auto notes = (*store)->NodeNotes(2);
    REQUIRE(notes);
    REQUIRE(notes->size() == 1);
    CHECK(notes->front().text == "tail loop <checked>");
    CHECK(notes->front().author == "grace");
    const auto node = (*store)->GetNode(3);
    REQUIRE(node);
    CHECK((*store)->BannedNodes(node->graph_id)->empty());
  }

  TEST_CASE("a review question on the live page: what is typed survives a refresh, accept-as-edited stores it") {
    const auto browser = testing::FindChromium();
    if (!browser) return;
    Workspace& workspace = testing::Searched();
    std::int64_t question = 0;
    {
      // The question a run with --review-page would open (its answer is what this test checks).
      auto store = Store::Open(workspace.db());
      REQUIRE(store);
      const auto runs = (*store)->ListRuns();
      REQUIRE(runs);
      ReviewQuestionRecord open;
      open.run_id = runs->front().id;
      open.parent_id = 1;
      open.purpose = "mutate";
      open.mutation = "llm:m:unroll";
      open.text = "void affine_wide() { /* <proposed> */ }\n";
      const auto id = (*store)->OpenReviewQuestion(open);
      REQUIRE(id);
      question = *id;
    }
    const auto served = testing::StartServe(workspace, {"--token", "reviewtoken"});
    testing::DevtoolsPipe page(*browser, workspace.path() / "review-profile");
    page.Open(fmt::format("http://127.0.0.1:{}/", served.port));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    const auto until = [&](const std::string& expression) {
      while (page.Evaluate(expression) != true) {
        REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, expression);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    };
    const std::string box = fmt::format("document.getElementById('review-text-{}')", question);
    until(box + " !== null && " + box + ".value.includes('/* <proposed> */')");
    page.Evaluate("(() => { const t = document.getElementById('kestrel-token'); t.value = 'reviewtoken'; kestrelKeep(t);"
                  " const a = document.getElementById('kestrel-author'); a.value = 'grace'; kestrelKeep(a);"
                  " " + box + ".value += '// mine\\n'; })()");
    // A change elsewhere refreshes the page: the edit being typed is kept.
    const std::string version = "document.querySelector('meta[name=\"kestrel-version\"]').content";
    const json before = page.Evaluate(version);
    REQUIRE(before.is_string());
    page.Evaluate("kestrelAct(document.querySelector('.act[data-node=\"2\"] button'), 'pin')");
    until(version + " !== " + before.dump());
    until(box + " !== null && " + box + ".value.endsWith('// mine\\n')");
    page.Evaluate(fmt::format("kestrelAnswer(document.querySelector('.review-question[data-question=\"{}\"] "
                              "button:nth-of-type(2)'), 'edit')", question));
    // Answered: the question leaves the page at its next refresh.
    until("document.getElementById('review-questions') === null");
    CHECK(testing::StopServe(served).code == 0);
    auto store = Store::Open(workspace.db(), Store::Mode::kReadOnly);
    REQUIRE(store);
    const auto answered = (*store)->GetReviewQuestion(question);
    REQUIRE(answered);
    CHECK(answered->state == ReviewState::kEdited);
    CHECK(answered->author == "grace");
    CHECK(answered->answer == "void affine_wide() { /* <proposed> */ }\n// mine\n");
  }
}

}  // namespace
}  // namespace kestrel
