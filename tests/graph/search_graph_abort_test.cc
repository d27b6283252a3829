// Broken invariants of SearchGraph abort with a message. Each case runs the
// offending call in a forked child and checks that it died of SIGABRT with
// the expected words on stderr.

#include <doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>

#include "graph/search_graph.h"
#include "tests/graph/read_text.h"
#include "tests/testing.h"

namespace kestrel {
namespace {

struct Death {
  bool aborted = false;
  std::string message;  // what the child wrote to stderr
};

Death RunInChild(const std::function<void()>& body) {
  const testing::TempDir dir;
  const std::string log = (dir / "stderr").string();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) dup2(fd, STDERR_FILENO);
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, testing::ReadText(log)};
}

GraphNode MakeNode(NodeId id) {
  GraphNode node;
  node.id = id;
  return node;
}

SearchGraph TwoNodes() {
  SearchGraph graph;
  graph.AddNode(MakeNode(1));
  graph.AddNode(MakeNode(2));
  return graph;
}

TEST_SUITE("SearchGraph invariants") {
  TEST_CASE("a well-behaved child does not count as an abort") {
    const Death death = RunInChild([] { TwoNodes(); });
    CHECK_FALSE(death.aborted);
  }

  TEST_CASE("a duplicate node id aborts") {
    const Death death = RunInChild([] { TwoNodes().AddNode(MakeNode(2)); });
    CHECK(death.aborted);
    CHECK(death.message.find("duplicate node id (node 2)") != std::string::npos);
  }

  TEST_CASE("an unknown node id aborts") {
    SUBCASE("Node") { CHECK(RunInChild([] { TwoNodes().Node(7); }).aborted); }
    SUBCASE("SetResult") {
      CHECK(RunInChild([] { TwoNodes().SetResult(7, NodeStatus::kWrong, std::nullopt); }).aborted);
    }
    SUBCASE("AddDerivation") {
      const Death death = RunInChild([] { TwoNodes().AddDerivation(1, 7, EdgeKind::kDerive); });
      CHECK(death.aborted);
      CHECK(death.message.find("unknown node id (node 7)") != std::string::npos);
    }
    SUBCASE("Lineage") { CHECK(RunInChild([] { TwoNodes().Lineage(7); }).aborted); }
    SUBCASE("Children") { CHECK(RunInChild([] { TwoNodes().Children(7); }).aborted); }
  }

  TEST_CASE("a self-derivation aborts") {
    CHECK(RunInChild([] { TwoNodes().AddDerivation(1, 1, EdgeKind::kDerive); }).aborted);
  }

  TEST_CASE("a cycle of first parents aborts Lineage instead of looping") {
    const Death death = RunInChild([] {
      SearchGraph graph = TwoNodes();
      graph.AddDerivation(1, 2, EdgeKind::kDerive);
      graph.AddDerivation(2, 1, EdgeKind::kDerive);
      graph.Lineage(2);
    });
    CHECK(death.aborted);
    CHECK(death.message.find("cycle") != std::string::npos);
  }

  TEST_CASE("a speedup on an unmeasured node, or a NaN speedup, aborts") {
    CHECK(RunInChild([] { TwoNodes().SetResult(1, NodeStatus::kWrong, 2.0); }).aborted);
    CHECK(RunInChild([] {
            TwoNodes().SetResult(1, NodeStatus::kMeasured,
                                 std::numeric_limits<double>::quiet_NaN());
          }).aborted);
    CHECK(RunInChild([] {
            GraphNode node = MakeNode(3);
            node.speedup = 1.0;  // still proposed
            TwoNodes().AddNode(node);
          }).aborted);
  }
}

}  // namespace
}  // namespace kestrel
