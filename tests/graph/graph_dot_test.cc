#include <doctest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "graph/search_graph.h"
#include "tests/graph/read_text.h"
#include "tests/testing.h"

namespace kestrel {
namespace {

GraphNode MakeNode(NodeId id, std::string label, NodeStatus status,
                   std::optional<double> speedup = std::nullopt) {
  GraphNode node;
  node.id = id;
  node.label = std::move(label);
  node.status = status;
  node.speedup = speedup;
  return node;
}

// A graph with every status, every edge kind and labels that need escaping.
SearchGraph SampleGraph() {
  SearchGraph graph;
  graph.AddNode(MakeNode(1, "baseline", NodeStatus::kMeasured, 1.0));
  graph.AddNode(MakeNode(12, "BLOCK=4 UNROLL=2", NodeStatus::kMeasured, 2.31));
  graph.AddNode(MakeNode(13, "say \"hi\" C:\\tmp\nline two", NodeStatus::kBuildFailed));
  graph.AddNode(MakeNode(14, "fixed", NodeStatus::kMeasured, 0.5));
  graph.AddNode(MakeNode(15, "", NodeStatus::kProposed));
  graph.AddNode(MakeNode(-16, "négatif \xff bad byte\t", NodeStatus::kBuilt));
  graph.AddNode(MakeNode(17, "slow", NodeStatus::kTimedOut));
  graph.AddDerivation(1, 12, EdgeKind::kDerive);
  graph.AddDerivation(1, 13, EdgeKind::kDerive);
  graph.AddDerivation(13, 14, EdgeKind::kFix);
  graph.AddDerivation(12, 15, EdgeKind::kDuplicate);
  graph.AddDerivation(12, -16, EdgeKind::kDerive);
  graph.AddDerivation(14, 17, EdgeKind::kDerive);
  return graph;
}

std::string DotOf(const SearchGraph& graph, const std::string& title) {
  std::ostringstream out;
  graph.WriteDot(out, title);
  return out.str();
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The line of the DOT text that declares node `id`.
std::string NodeLine(const std::string& dot, NodeId id) {
  const std::string start = "  \"" + std::to_string(id) + "\" [";
  const std::size_t at = dot.find(start);
  if (at == std::string::npos) return "";
  return dot.substr(at, dot.find('\n', at) - at);
}

TEST_SUITE("WriteDot") {
  TEST_CASE("nodes, labels and colours") {
    const std::string dot = DotOf(SampleGraph(), "task \"matmul\"");
    CHECK(dot.rfind("digraph kestrel {\n", 0) == 0);
    CHECK(dot.substr(dot.size() - 2) == "}\n");
    CHECK(Has(dot, "rankdir=LR"));
    CHECK(Has(dot, "label=\"task \\\"matmul\\\"\""));
    CHECK(Has(NodeLine(dot, 12), "label=\"#12\\nBLOCK=4 UNROLL=2\\n2.31x\""));
    CHECK(Has(NodeLine(dot, 15), "label=\"#15\\nproposed\""));
    CHECK(Has(NodeLine(dot, 13), "say \\\"hi\\\" C:\\\\tmp\\nline two\\nbuild_failed"));
    CHECK(Has(NodeLine(dot, -16), "négatif ? bad byte?\\nbuilt"));

    SUBCASE("the best node alone is bold") {
      CHECK(Has(NodeLine(dot, 12), "penwidth=3"));
      CHECK_FALSE(Has(NodeLine(dot, 1), "penwidth"));
      CHECK_FALSE(Has(NodeLine(dot, 14), "penwidth"));
    }
    SUBCASE("failures red, unevaluated grey, measured on a gradient") {
      CHECK(Has(NodeLine(dot, 13), "fillcolor=\"#f4a6a6\""));
      CHECK(Has(NodeLine(dot, 17), "fillcolor=\"#f4a6a6\""));
      CHECK(Has(NodeLine(dot, 15), "fillcolor=\"#eeeeee\""));
      CHECK(Has(NodeLine(dot, -16), "fillcolor=\"#d9d9d9\""));
      CHECK(Has(NodeLine(dot, 12), "fillcolor=\"#41ab5d\""));  // the best: full green
      CHECK(Has(NodeLine(dot, 1), "fillcolor=\"#e5f5e0\""));   // 1x: palest green
      CHECK(Has(NodeLine(dot, 14), "fillcolor=\"#fdae6b\""));  // the slowest: orange
    }
    SUBCASE("edge styles by kind") {
      CHECK(Has(dot, "\"1\" -> \"12\";\n"));
      CHECK(Has(dot, "\"13\" -> \"14\" [style=dashed];"));
      CHECK(Has(dot, "\"12\" -> \"15\" [style=dotted];"));
      CHECK(Has(dot, "\"12\" -> \"-16\";\n"));
    }
  }

  TEST_CASE("a long label is cut") {
    SearchGraph graph;
    graph.AddNode(MakeNode(1, std::string(500, 'x'), NodeStatus::kProposed));
    const std::string line = NodeLine(DotOf(graph, ""), 1);
    CHECK(Has(line, std::string(48, 'x') + "...\\nproposed"));
    CHECK_FALSE(Has(line, std::string(49, 'x')));
  }

  TEST_CASE("dot -Tsvg accepts the output") {
    if (std::system("command -v dot >/dev/null 2>&1") != 0) {
      MESSAGE("graphviz `dot` not found; skipping the rendering check");
      return;
    }
    const testing::TempDir dir;
    SUBCASE("the sample graph") {
      testing::WriteFile(dir / "graph.dot", DotOf(SampleGraph(), "sample \\ \"graph\"\n"));
    }
    SUBCASE("an empty graph without a title") {
      testing::WriteFile(dir / "graph.dot", DotOf(SearchGraph(), ""));
    }
    const std::string command = "dot -Tsvg '" + (dir / "graph.dot").string() + "' -o '" +
                                (dir / "graph.svg").string() + "' 2>'" +
                                (dir / "stderr").string() + "'";
    REQUIRE(std::system(command.c_str()) == 0);
    CHECK(testing::ReadText(dir / "stderr").empty());  // not even a warning
    CHECK(Has(testing::ReadText(dir / "graph.svg"), "<svg"));
  }
}

}  // namespace
}  // namespace kestrel
