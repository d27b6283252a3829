// The report's model and HTML writer on the SQLite file of a real small run
// (the kestrel binary, the knob mutator, the CPU evaluator), and the pieces
// they are made of: escaping and the line diff.
#include <doctest.h>

#include <algorithm>

#include "cli/cli_workspace.h"
#include "report/diff.h"
#include "report/graph_svg.h"
#include "report/html.h"
#include "report/report_model.h"
#include "report/report_page.h"
#include "report/hostile_node.h"
#include "sqlite_peek.h"
#include "store/store.h"

namespace kestrel {
namespace {

using testing::Exec;
using testing::Searched;

int Count(const std::string& text, const std::string& part) {
  int count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}


std::unique_ptr<Store> OpenStore(const std::filesystem::path& db, Store::Mode mode = Store::Mode::kReadOnly) {
  auto store = Store::Open(db, mode);
  REQUIRE(store);
  return std::move(*store);
}

TEST_SUITE("report") {
  TEST_CASE("the model holds the run, its evaluations, the graph and a page per node") {
    auto store = OpenStore(Searched().db());
    auto model = LoadReport(*store, {});
    REQUIRE(model);
    CHECK(model->task_name == "affine");
    REQUIRE(model->runs.size() == 1);
    const RunView& run = model->runs.front();
    CHECK(run.run.evaluations == 6);
    CHECK(run.run.status == RunStatus::kFinished);
    CHECK(run.active_seconds > 0);
    CHECK(run.evaluations_per_hour > 0);
    REQUIRE(run.host);
    // The run calibrated its host: the roofline has ceilings, and every measured node is a point under them.
    REQUIRE(model->ceilings);
    CHECK(model->ceilings->ok());
    // Six evaluations, numbered in order, oldest first.
    REQUIRE(model->progress.size() == 6);
    for (std::size_t k = 0; k < model->progress.size(); ++k) {
      CHECK(model->progress[k].evaluation == static_cast<std::int64_t>(k + 1));
      if (k > 0) CHECK(model->progress[k].at >= model->progress[k - 1].at);
    }
    // Confirmation rounds are drawn apart, each after the evaluation of the node it confirmed.
    CHECK(!model->confirmed.empty());
    for (const ConfirmedPoint& point : model->confirmed) {
      CHECK(point.evaluation <= 6);
      const auto first = std::find_if(model->progress.begin(), model->progress.end(),
                                      [&](const ProgressPoint& p) { return p.node_id == point.node_id; });
      REQUIRE(first != model->progress.end());
      CHECK(first->evaluation <= point.evaluation);
    }

    auto nodes = store->LoadNodes(model->graph_id);
    REQUIRE(nodes);
    REQUIRE(model->nodes.size() == nodes->size());
    REQUIRE(model->pages.size() == nodes->size());
    std::size_t measured = 0;
    for (std::size_t k = 0; k < nodes->size(); ++k) {
      const NodePage& page = model->pages[k];
      CHECK(page.node.id == (*nodes)[k].id);
      CHECK(!page.node.source.empty());
      if (page.node.mutation.rfind("seed:", 0) == 0) {
        CHECK(!page.made_by);
      } else {
        REQUIRE(page.made_by);
        CHECK(!page.parent_source.empty());
      }
      if (page.node.status == NodeStatus::kMeasured) {
        ++measured;
        CHECK(!page.measurements.empty());
        CHECK(page.eval_seconds > 0);
      }
    }
    CHECK(model->roofline.size() == measured);
    for (const RooflinePoint& point : model->roofline) {
      CHECK(point.flops_per_byte == doctest::Approx(0.25).epsilon(1e-6));  // 2n flops over 8n bytes
      CHECK(point.gflops > 0);
    }
    // The top candidates are `kestrel best`'s, in its order.
    BestQuery query;
    query.task = "affine";
    auto best = store->Best(query);
    REQUIRE(best);
    REQUIRE(model->top.size() == best->size());
    for (std::size_t k = 0; k < best->size(); ++k) CHECK(model->top[k].node_id == (*best)[k].node_id);
  }

  TEST_CASE("the top candidates are of the graph shown, not of another graph of the task") {
    testing::TempDir dir;
    const auto db = dir.path() / "fresh.db";
    std::filesystem::copy_file(Searched().db(), db);
    std::int64_t other = 0;
    {
      // A --fresh graph of the same task whose node beats everything in the first.
      auto store = OpenStore(db, Store::Mode::kReadWrite);
      auto runs = store->ListRuns();
      REQUIRE(runs);
      const RunRecord& run = runs->front();
      auto graph = store->GraphForTask(run.task_id, true);
      REQUIRE(graph);
      REQUIRE(*graph != run.graph_id);
      NodeRecord node = NewNodeRecord({"// elsewhere\n", {}, "c++", {}}, *graph, run.id, "seed:other.cpp");
      auto id = store->AddNode(node, std::nullopt);
      REQUIRE(id);
      other = *id;
      Measurement measured;
      measured.outcome = Outcome::kMeasured;
      measured.speedup = 1000.0;
      REQUIRE(store->RecordMeasurement(other, run.id, run.host_id, measured));
    }
    auto store = OpenStore(db);
    ReportScope scope;
    scope.run_id = 1;
    auto model = LoadReport(*store, scope);
    REQUIRE(model);
    REQUIRE(!model->top.empty());
    for (const BestRow& row : model->top) CHECK(row.node_id != other);
  }

  TEST_CASE("an unknown run or task is a user's mistake naming it") {
    auto store = OpenStore(Searched().db());
    ReportScope run;
    run.run_id = 999;
    auto missing = LoadReport(*store, run);
    REQUIRE(!missing);
    CHECK(missing.error().IsInvalidArgument());
    CHECK(missing.error().message().find("999") != std::string::npos);
    ReportScope task;
    task.task = "no_such_task";
    auto unknown = LoadReport(*store, task);
    REQUIRE(!unknown);
    CHECK(unknown.error().IsInvalidArgument());
    CHECK(unknown.error().message().find("no_such_task") != std::string::npos);
  }

  TEST_CASE("the page is self-contained: every node has its page and its element in the graph") {
    auto store = OpenStore(Searched().db());
    auto model = LoadReport(*store, {});
    REQUIRE(model);
    const std::string html = report::ReportHtml(*model);
    for (const NodeRecord& node : model->nodes) {
      const std::string id = std::to_string(node.id);
      CHECK(Count(html, "id=\"node-" + id + "\"") == 1);
      CHECK(Count(html, "id=\"g_node_" + id + "\"") == 1);
    }
    // Nothing is fetched: no external script, style, image or font.
    CHECK(html.find(" src=") == std::string::npos);
    CHECK(html.find("<link") == std::string::npos);
    CHECK(html.find("@import") == std::string::npos);
    CHECK(html.find("url(") == std::string::npos);
    CHECK(html.find("@media print") != std::string::npos);
    // A static report takes no writes; the live page offers a person's controls on each node.
    CHECK(html.find("class=\"act\"") == std::string::npos);
    report::PageOptions live;
    live.version_url = "/api/version";
    const std::string served = report::ReportHtml(*model, live);
    CHECK(Count(served, "<div class=\"act\" data-node=") == static_cast<int>(model->nodes.size()));
    CHECK(served.find("id=\"kestrel-token\" type=\"password\"") != std::string::npos);
    // Every top row carries its speedup as `kestrel best` ranks it.
    for (const BestRow& row : model->top) {
      CHECK(html.find("data-node=\"" + std::to_string(row.node_id) + "\" data-speedup=\"") != std::string::npos);
    }
  }

  TEST_CASE("text from the database is shown as text") {
    // A copy of the run's database with a hostile node: its source, mutation,
    // log and the LLM exchange that made it try to end the page's markup.
    testing::TempDir dir;
    const auto db = dir.path() / "hostile.db";
    std::filesystem::copy_file(Searched().db(), db);
    testing::AddHostileNode(db);
    auto store = OpenStore(db);
    auto model = LoadReport(*store, {});
    REQUIRE(model);
    const std::string html = report::ReportHtml(*model);
    CHECK(html.find("<img") == std::string::npos);
    CHECK(html.find("</script><img") == std::string::npos);
    CHECK(Count(html, testing::kHostileEscaped) >= 6);
    // The hostile node's page holds its analysis and the exchange that made it, apart.
    const std::size_t page = html.find("id=\"node-" + std::to_string(model->pages.back().node.id) + "\"");
    REQUIRE(page != std::string::npos);
    const std::size_t analysis = html.find("<h4>Analysis</h4>", page);
    const std::size_t exchange = html.find("<h4>LLM exchange that made it</h4>", page);
    CHECK(analysis != std::string::npos);
    CHECK(exchange != std::string::npos);
    CHECK(html.find("analysis call", analysis) < exchange);
  }

  TEST_CASE("a person's notes, label and actions are on the node's page; the top table shows labels and the review queue") {
    testing::TempDir dir;
    const auto db = dir.path() / "people.db";
    std::filesystem::copy_file(Searched().db(), db);
    std::int64_t labelled = 0, awaiting = 0;
    {
      auto writable = Store::Open(db);
      REQUIRE(writable);
      auto model = LoadReport(**writable, {});
      REQUIRE(model);
      REQUIRE(model->top.size() >= 2);
      labelled = model->top[0].node_id;
      const std::int64_t graph = model->graph_id;
      REQUIRE((*writable)->AddHumanAction({0, graph, labelled, 0, HumanActionKind::kNote, "<b>check the tail</b>", "ada", 0}));
      REQUIRE((*writable)->AddHumanAction({0, graph, labelled, 0, HumanActionKind::kLabel, "clean", "ada", 0}));
      REQUIRE((*writable)->AddHumanAction({0, graph, labelled, 0, HumanActionKind::kPin, "", "bob", 0}));
    }
    // Review thresholds that every new best passes (the run's config says what the report reads).
    REQUIRE(testing::ExecSql(db, "UPDATE runs SET config_json = json_set(config_json, '$.review', "
                                 "json('{\"speedup\": 1.0001, \"roofline\": 0.0}'))").empty());
    auto store = OpenStore(db);
    auto model = LoadReport(*store, {});
    REQUIRE(model);
    const std::string html = report::ReportHtml(*model);
    const std::size_t page = html.find("id=\"node-" + std::to_string(labelled) + "\"");
    REQUIRE(page != std::string::npos);
    const std::size_t next = html.find("id=\"node-", page + 10);
    const std::string node_page = html.substr(page, next == std::string::npos ? std::string::npos : next - page);
    CHECK(node_page.find("&lt;b&gt;check the tail&lt;/b&gt;") != std::string::npos);
    CHECK(node_page.find("<span class=\"label\">clean</span>") != std::string::npos);
    CHECK(node_page.find("pin") != std::string::npos);
    CHECK(node_page.find("bob") != std::string::npos);
    // The top table's row of the labelled node says its label.
    const std::size_t row = html.find("data-node=\"" + std::to_string(labelled) + "\" data-speedup");
    REQUIRE(row != std::string::npos);
    CHECK(html.find("<td class=\"review\"><span class=\"label\">clean</span></td>", row) < html.find("</tr>", row));
    // Every unlabelled result past the thresholds awaits review, and its top row says so.
    REQUIRE_FALSE(model->awaiting_review.empty());
    for (const ReviewItem& item : model->awaiting_review) {
      CHECK(item.node_id != labelled);
      const std::size_t at = html.find("data-node=\"" + std::to_string(item.node_id) + "\" data-speedup");
      if (at == std::string::npos) continue;  // not in the top
      ++awaiting;
      CHECK(html.find("awaiting review", at) < html.find("</tr>", at));
    }
    CHECK(awaiting >= 1);
  }

  TEST_CASE("escaping leaves no markup alive and replaces invalid UTF-8") {
    CHECK(report::Escape("<a href='x'>&\"</a>") == "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
    CHECK(report::Escape("ok \xC3\xA9 \xFF end") == "ok \xC3\xA9 \xEF\xBF\xBD end");
    CHECK(report::Escape(std::string("a\0b", 3)) == "a\xEF\xBF\xBD" "b");
  }

  TEST_CASE("the line diff marks what the child changed") {
    using enum report::DiffLine::Kind;
    const auto diff = report::DiffLines("a\nb\nc\n", "a\nB\nc\nd\n");
    REQUIRE(!diff.too_large);
    std::vector<std::pair<report::DiffLine::Kind, std::string>> lines;
    for (const auto& line : diff.lines) lines.emplace_back(line.kind, line.text);
    const std::vector<std::pair<report::DiffLine::Kind, std::string>> expected = {
        {kSame, "a"}, {kRemoved, "b"}, {kAdded, "B"}, {kSame, "c"}, {kAdded, "d"}};
    CHECK(lines == expected);
    const std::string html = report::DiffHtml(report::DiffLines("x<y\n", "x<z\n"));
    CHECK(html.find("<del>- x&lt;y</del>") != std::string::npos);
    CHECK(html.find("<ins>+ x&lt;z</ins>") != std::string::npos);
    CHECK(report::DiffLines(std::string(3000, '\n'), std::string(3000, '\n'), 1000).too_large);
  }

  TEST_CASE("a graph too large to draw whole is drawn as its best nodes and the lineages that reached them") {
    // 3000 nodes in a binary tree (node i's parent is i / 2); the faster the
    // larger the id, so the best are the deepest.
    ReportModel model;
    for (std::int64_t id = 1; id <= 3000; ++id) {
      NodeRecord node;
      node.id = id;
      node.status = NodeStatus::kMeasured;
      node.speedup = 1.0 + static_cast<double>(id) / 1000.0;
      model.nodes.push_back(node);
      if (id > 1) model.edges.push_back(EdgeRecord{id / 2, id, EdgeKind::kDerive, 0, "m", 0});
    }
    BestRow top;
    top.node_id = 2999;
    top.speedup = 3.999;
    model.top.push_back(top);
    const auto lineage = [](std::int64_t id) {
      std::vector<std::int64_t> up;
      for (; id >= 1; id /= 2) up.push_back(id);
      return up;
    };
    const std::set<std::int64_t> drawn = report::NodesToDraw(model, 200);
    CHECK(drawn.size() <= 200);
    CHECK(drawn.size() >= 190);  // filled with the next best while their lineages fit
    for (std::int64_t id : lineage(2999)) CHECK(drawn.count(id) == 1);
    for (std::int64_t id : lineage(3000)) CHECK(drawn.count(id) == 1);  // the fastest node
    // Every drawn node's parent is drawn: each picture is a tree from the seed.
    for (std::int64_t id : drawn) {
      if (id > 1) CHECK(drawn.count(id / 2) == 1);
    }
    const std::string svg = report::GraphSvg(model, 200);
    CHECK(svg.find("The graph has 3000 nodes; drawn here: " + std::to_string(drawn.size()) + " of them") != std::string::npos);
    CHECK(Count(svg, "id=\"g_node_") == static_cast<int>(drawn.size()));
    CHECK(Count(svg, "id=\"g_node_2999\"") == 1);
    // Without a part, all of it (the DOT text: laying out 3000 nodes is slow).
    CHECK(Count(report::GraphDot(model), "id=\"g_node_") == 3000);
  }
}

}  // namespace
}  // namespace kestrel
