// Readers work while a run writes: a writer (thread, then forked process)
// with its own connection against readers with theirs, one read-only.
#include <doctest.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "store/store.h"
#include "tests/store/store_fixture.h"
#include "tests/testing.h"

namespace kestrel {
namespace {

using testing::Must;

constexpr int kNodes = 300;

struct Setup {
  std::int64_t graph = 0, run = 0, host = 0;
};

Setup Prepare(const std::filesystem::path& path) {
  auto store = Must(Store::Open(path));
  Setup setup;
  const auto task = Must(store->UpsertTask(testing::MakeTask("conc")));
  setup.graph = Must(store->GraphForTask(task, false));
  setup.host = Must(store->UpsertHost(testing::MakeHost("writer")));
  RunRecord run;
  run.task_id = task;
  run.graph_id = setup.graph;
  run.host_id = setup.host;
  run.config_json = "{}";
  setup.run = Must(store->CreateRun(run));
  return setup;
}

// Writes kNodes nodes, each with a measurement, through its own connection.
// Returns "" or the first error. Uses no doctest assertion (it runs in
// threads and in a forked child).
std::string WriteNodes(const std::filesystem::path& path, const Setup& setup) {
  auto store = Store::Open(path);
  if (!store) return store.error().message();
  for (int i = 0; i < kNodes; ++i) {
    auto node = (*store)->AddNode(testing::MakeNode(setup.graph, setup.run, "void k();", std::to_string(i)), std::nullopt);
    if (!node) return node.error().message();
    auto measured = (*store)->RecordMeasurement(*node, setup.run, setup.host, testing::MakeMeasured(1.0 + i % 17, 2, 20));
    if (!measured) return measured.error().message();
  }
  return "";
}

// What one reader saw in one pass; counts must never shrink.
struct Seen {
  std::size_t nodes = 0, best = 0;
  std::int64_t evaluations = 0;
};

class Reader {
 public:
  Reader(const std::filesystem::path& path, const Setup& setup) : setup_(setup) {
    auto read_write = Store::Open(path);
    auto read_only = Store::Open(path, Store::Mode::kReadOnly);
    if (read_write && read_only) {
      read_write_ = std::move(*read_write);
      read_only_ = std::move(*read_only);
    } else {
      Note(!read_write ? read_write.error().message() : read_only.error().message());
    }
  }
  // One pass with each connection; records the first error or regression.
  void Pass() {
    if (!read_write_) return;
    for (Store* store : {read_write_.get(), read_only_.get()}) {
      auto nodes = store->LoadNodes(setup_.graph);
      auto best = store->Best({std::nullopt, std::nullopt, std::nullopt, 0});
      auto runs = store->ListRuns();
      if (!nodes || !best || !runs) {
        Note(!nodes ? nodes.error().message() : !best ? best.error().message() : runs.error().message());
        continue;
      }
      if (runs->size() != 1) Note("ListRuns saw " + std::to_string(runs->size()) + " runs");
      Seen now{nodes->size(), best->size(), runs->empty() ? 0 : (*runs)[0].evaluations};
      if (now.nodes < last_.nodes || now.best < last_.best || now.evaluations < last_.evaluations) {
        Note("counts went back: nodes " + std::to_string(last_.nodes) + "->" + std::to_string(now.nodes) +
             ", best " + std::to_string(last_.best) + "->" + std::to_string(now.best));
      }
      if (now.best > kNodes) Note("Best saw more rows than nodes written");
      if (now.nodes > 0 && now.nodes < kNodes) ++partial_views_;
      last_ = now;
      ++passes_;
    }
  }
  const std::string& error() const { return error_; }
  const Seen& last() const { return last_; }
  int passes() const { return passes_; }
  int partial_views() const { return partial_views_; }

 private:
  void Note(const std::string& message) {
    if (error_.empty()) error_ = message;
  }
  Setup setup_;
  std::unique_ptr<Store> read_write_;
  std::unique_ptr<Store> read_only_;
  Seen last_;
  std::string error_;
  int passes_ = 0;
  int partial_views_ = 0;
};

TEST_SUITE("store") {
  TEST_CASE("a writer thread and reader threads, each with its own connection") {
    testing::TempDir dir;
    const auto path = dir / "kestrel.db";
    const Setup setup = Prepare(path);
    std::atomic<bool> done{false};
    std::string writer_error;
    std::string reader_error;
    int passes = 0;
    int partial_views = 0;
    Seen last;
    std::thread reader([&] {  // no doctest assertion off the main thread
      Reader r(path, setup);
      while (!done.load()) r.Pass();
      r.Pass();  // one more after the writer finished
      reader_error = r.error();
      passes = r.passes();
      partial_views = r.partial_views();
      last = r.last();
    });
    std::thread writer([&] {
      writer_error = WriteNodes(path, setup);
      done.store(true);
    });
    writer.join();
    reader.join();
    MESSAGE("reader passes: " << passes << ", of which mid-write: " << partial_views);
    CHECK_MESSAGE(writer_error.empty(), writer_error);
    CHECK_MESSAGE(reader_error.empty(), reader_error);
    CHECK(passes > 2);
    CHECK(last.nodes == kNodes);
    CHECK(last.best == kNodes);
    CHECK(last.evaluations == kNodes);
  }

  TEST_CASE("a forked writer process while this process reads") {
    testing::TempDir dir;
    const auto path = dir / "kestrel.db";
    const Setup setup = Prepare(path);  // its connection is closed before the fork
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      const std::string error = WriteNodes(path, setup);
      if (!error.empty()) std::fprintf(stderr, "child writer: %s\n", error.c_str());
      _exit(error.empty() ? 0 : 1);
    }
    Reader reader(path, setup);
    int status = 0;
    pid_t waited = 0;
    while ((waited = waitpid(child, &status, WNOHANG)) == 0) reader.Pass();
    reader.Pass();
    REQUIRE(waited == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    MESSAGE("reader passes: " << reader.passes() << ", of which mid-write: " << reader.partial_views());
    CHECK_MESSAGE(reader.error().empty(), reader.error());
    CHECK(reader.last().nodes == kNodes);
    CHECK(reader.last().best == kNodes);
    auto store = Must(Store::Open(path));
    CHECK(Must(store->IntegrityOk()));
  }
}

}  // namespace
}  // namespace kestrel
