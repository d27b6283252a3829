// The `kestrel` command (CONTRACT.md, "Commands"): the built binary run on a
// database in a temporary directory, with small tasks written there and real
// kernels compiled, verified and timed.

#include <doctest.h>

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_json.h"
#include "cli_workspace.h"
#include "store/store.h"
#include "testing.h"

using namespace kestrel;
using nlohmann::json;
namespace fs = std::filesystem;

using testing::Contains;
using testing::Exec;
using testing::ParseJson;
using testing::Searched;
using testing::Workspace;

TEST_SUITE("cli") {
  TEST_CASE("kestrel tasks lists the built-in tasks and those of --tasks-dir") {
    Workspace workspace;
    const Exec table = workspace.Run({"tasks"});
    CHECK(table.code == 0);
    for (const char* name : {"softmax", "matmul", "layernorm", "affine", "affine_wide"}) CHECK(Contains(table.out, name));

    const Exec listed = workspace.Run({"tasks", "--json"});
    REQUIRE(listed.code == 0);
    const json document = ParseJson(listed);
    REQUIRE(document.is_array());
    std::set<std::string> names;
    for (const json& task : document) {
      names.insert(task.at("name").get<std::string>());
      if (task.at("name") == "affine") {
        CHECK(task.at("knob_configurations") == 6);
        CHECK(task.at("signature") == "void axpy(const float* x, float* y, int64_t n)");
      }
    }
    for (const char* name : {"softmax", "matmul", "layernorm", "affine", "affine_wide"}) CHECK(names.count(name) == 1);
  }

  TEST_CASE("a copied built-in task in --tasks-dir shadows the built-in one, with one note") {
    Workspace workspace;
    const fs::path copy = workspace.tasks() / "triad";
    fs::copy(testing::TasksDir() / "triad", copy, fs::copy_options::recursive);
    // The common edit: smaller shapes, for a quicker search.
    json spec = json::parse(testing::ReadFile(copy / "task.json"));
    spec["shapes"] = json::array({{{"n", 4096}}});
    testing::WriteFile(copy / "task.json", spec.dump(2));
    const std::string note = "kestrel: task 'triad' from " + workspace.tasks().string() + " shadows the built-in one\n";
    const auto count = [](const std::string& text, const std::string& part) {
      std::size_t n = 0;
      for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
      return n;
    };

    const Exec run = workspace.Run({"run", "--task", "triad", "--max-evals", "1", "--min-time", "0.01", "--each"});
    CHECK_MESSAGE(run.code == 0, run.err);
    CHECK_MESSAGE(count(run.err, note) == 1, run.err);
    CHECK_MESSAGE(count(run.err, "shadows") == 1, run.err);

    const Exec listed = workspace.Run({"tasks", "--json"});
    REQUIRE_MESSAGE(listed.code == 0, listed.err);
    CHECK_MESSAGE(count(listed.err, note) == 1, listed.err);
    for (const json& task : ParseJson(listed)) {
      if (task.at("name") == "triad") CHECK(task.at("shapes").size() == 1);
    }

    // Edited again: the graph its results are in was searched under the
    // other shapes, so the run searches a graph of its own (results of two
    // definitions once shared one graph and one node's median).
    spec["shapes"] = json::array({{{"n", 8192}}});
    testing::WriteFile(copy / "task.json", spec.dump(2));
    const Exec edited = workspace.Run({"run", "--task", "triad", "--max-evals", "1", "--min-time", "0.01", "--each"});
    CHECK_MESSAGE(edited.code == 0, edited.err);
    const std::string said = edited.out + edited.err;
    CHECK_MESSAGE(Contains(said, "task triad is not as graph 1 was searched"), said);
    CHECK_MESSAGE(Contains(said, "(graph 2)"), said);
  }

  TEST_CASE("a broken task in --tasks-dir: kestrel tasks lists it with its error, other tasks still run") {
    Workspace workspace;
    testing::WriteFile(workspace.tasks() / "broken" / "task.json", R"({"name": "broken", "language": "fortran"})");
    const std::string error = (workspace.tasks() / "broken" / "task.json").string() + ": description: missing";

    const Exec table = workspace.Run({"tasks"});
    CHECK(table.code == 2);
    CHECK(Contains(table.out, "affine"));
    CHECK(Contains(table.out, "softmax"));
    CHECK_MESSAGE(Contains(table.out, "broken: " + error), table.out);
    const Exec listed = workspace.Run({"tasks", "--json"});
    CHECK(listed.code == 2);
    bool found = false;
    for (const json& task : ParseJson(listed)) {
      if (task.at("name") != "broken") continue;
      found = true;
      CHECK(Contains(task.at("error").get<std::string>(), error));
    }
    CHECK(found);

    const Exec run = workspace.Run({"run", "--task", "affine", "--max-evals", "1", "--min-time", "0.01", "--quiet"});
    CHECK_MESSAGE(run.code == 0, run.err);
    const Exec refused = workspace.Run({"run", "--task", "broken", "--max-evals", "1", "--quiet"});
    CHECK(refused.code == 2);
    CHECK_MESSAGE(Contains(refused.err, error), refused.err);

    // A seed whose knobs cannot be read: listed as broken (it was listed
    // with 0 configurations), and its run refused before a run is made (one
    // was made and left "running" for every try).
    fs::copy(workspace.tasks() / "affine", workspace.tasks() / "knotted", fs::copy_options::recursive);
    json spec = json::parse(testing::ReadFile(workspace.tasks() / "knotted" / "task.json"));
    spec["name"] = "knotted";
    testing::WriteFile(workspace.tasks() / "knotted" / "task.json", spec.dump(2));
    testing::WriteFile(workspace.tasks() / "knotted" / "seed.cpp",
                       "// kestrel:knob A 1 2\n// kestrel:knob A 3\n" +
                           testing::ReadFile(workspace.tasks() / "affine" / "seed.cpp"));
    const Exec knotted_list = workspace.Run({"tasks"});
    CHECK(knotted_list.code == 2);
    CHECK_MESSAGE(Contains(knotted_list.out, "broken: " + (workspace.tasks() / "knotted" / "seed.cpp").string() +
                                                 ": line 2: knob 'A' is declared twice"),
                  knotted_list.out);
    const Exec knotted = workspace.Run({"run", "--task", "knotted", "--max-evals", "1", "--quiet"});
    CHECK(knotted.code == 2);
    CHECK_MESSAGE(Contains(knotted.err, "declared twice"), knotted.err);
    const Exec runs = workspace.Run({"runs", "--json"});
    REQUIRE_MESSAGE(runs.code == 0, runs.err);
    for (const json& listed_run : ParseJson(runs)) CHECK(listed_run.at("status") != "running");
  }

  TEST_CASE("kestrel eval judges one file: measured, wrong, build_failed, crashed, timed_out") {
    Workspace workspace;
    const fs::path config = workspace.path() / "fast.json";
    testing::WriteFile(config, R"({"evaluator": {"timeout_s": 1, "min_time": 0.02}})");
    struct Kernel {
      const char* file;
      const char* text;
      const char* outcome;
    };
    const Kernel kernels[] = {
        {"reference.cpp", testing::kReference, "measured"},     {"wrong.cpp", testing::kWrong, "wrong"},
        {"broken.cpp", testing::kCompileError, "build_failed"}, {"segfault.cpp", testing::kSegfault, "crashed"},
        {"loop.cpp", testing::kInfiniteLoop, "timed_out"},
    };
    for (const Kernel& kernel : kernels) {
      CAPTURE(kernel.file);
      const fs::path file = workspace.path() / kernel.file;
      testing::WriteFile(file, kernel.text);
      const Exec eval = workspace.Run({"eval", "affine", file.string(), "--json", "--config", config.string()});
      INFO("stderr: " << eval.err);
      CHECK(eval.code == 0);
      const json document = ParseJson(eval);
      CHECK(document.at("outcome") == kernel.outcome);
      CHECK(document.at("task") == "affine");
      if (std::string(kernel.outcome) == "measured") {
        const double speedup = document.at("speedup").get<double>();
        CHECK(speedup > 0.5);
        CHECK(speedup < 2.0);
        CHECK(document.at("shapes").size() == 1);
      } else {
        CHECK(document.at("speedup").is_null());
        CHECK_FALSE(document.at("reason").get<std::string>().empty());
      }
      if (std::string(kernel.outcome) == "build_failed") CHECK(Contains(document.at("log"), "undeclared_variable"));
    }
  }

  TEST_CASE("a task with an expert baseline: eval, best and show report the speedup over it") {
    Workspace workspace;
    const fs::path seed = testing::TasksDir() / "matmul" / "seed.cpp";
    const Exec eval = workspace.Run({"eval", "matmul", seed.string(), "--min-time", "0.02", "--json"});
    INFO("stderr: " << eval.err);
    REQUIRE(eval.code == 0);
    const json measured = ParseJson(eval);
    REQUIRE(measured.at("outcome") == "measured");
    const double baseline = measured.at("baseline_speedup").get<double>();
    CHECK(baseline > 2.0);  // OpenBLAS's sgemm against a double-accumulating triple loop
    CHECK(measured.at("speedup_over_baseline").get<double>() ==
          doctest::Approx(measured.at("speedup").get<double>() / baseline));

    const Exec run = workspace.Run({"run", "--task", "matmul", "--max-evals", "2", "--min-time", "0.02", "--quiet"});
    INFO("run stderr: " << run.err);
    REQUIRE(run.code == 0);
    const Exec best = workspace.Run({"best", "--task", "matmul"});
    CHECK(best.code == 0);
    CHECK_MESSAGE(Contains(best.out, "vs baseline"), best.out);
    const json rows = ParseJson(workspace.Run({"best", "--task", "matmul", "--json"}));
    REQUIRE(!rows.empty());
    CHECK(rows[0].at("baseline_speedup").get<double>() > 2.0);
    CHECK(rows[0].at("speedup_over_baseline").get<double>() > 0.0);
    const Exec show = workspace.Run({"show", std::to_string(rows[0].at("node").get<int>())});
    CHECK_MESSAGE(Contains(show.out, "over the baseline, itself"), show.out);
    // The headline puts it beside the speedup over the reference.
    const std::string headline = show.out.substr(0, show.out.find('\n'));
    CHECK_MESSAGE(Contains(headline, "vs baseline)"), headline);

    // A task without one has no such column.
    const Exec affine = workspace.Run({"eval", "affine", (workspace.tasks() / "affine" / "seed.cpp").string(),
                                       "--min-time", "0.02", "--json"});
    REQUIRE(affine.code == 0);
    CHECK(ParseJson(affine).at("speedup_over_baseline").is_null());
  }

  TEST_CASE("a search through the command protocol example finds a faster kernel and stores it like any other") {
    Workspace workspace(testing::Calibrate::kInRun);  // as a run makes it (the command evaluator does not calibrate)
    const fs::path examples = testing::SourceDir() / "examples" / "command";
    // The whole knob space (2 x 2 x 3): the best must be one with a table of
    // coefficients, whatever order the strategy takes.
    const Exec run = workspace.Run({"--tasks-dir", examples.string(), "run", (examples / "poly.json").string(),
                                    "--max-evals", "12", "--min-time", "0.02", "--quiet"});
    INFO("run stderr: " << run.err);
    REQUIRE(run.code == 0);
    const json rows = ParseJson(workspace.Run({"best", "--top", "20", "--json"}));
    REQUIRE(rows.size() == 12);
    CHECK(rows[0].at("task") == "poly");
    CHECK(rows[0].at("speedup").get<double>() > 1.3);
    CHECK(rows[0].at("knobs").at("TABLE") == "1");
    const Exec show = workspace.Run({"show", std::to_string(rows[0].at("node").get<int>())});
    CHECK(show.code == 0);
    CHECK_MESSAGE(Contains(show.out, "outcome: measured"), show.out);
    CHECK_MESSAGE(Contains(show.out, "toolchain  command build: bash {task_dir}/build.sh"), show.out);
    const json runs = ParseJson(workspace.Run({"runs", "--json"}));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].at("evaluations") == 12);
  }

  TEST_CASE("kestrel eval with knobs: human output names the outcome and the knobs") {
    Workspace workspace;
    const Exec eval = workspace.Run({"eval", "affine", (workspace.tasks() / "affine" / "seed.cpp").string(), "--knob",
                                     "UNROLL=4", "--min-time", "0.02"});
    INFO("stderr: " << eval.err);
    CHECK(eval.code == 0);
    CHECK(Contains(eval.out, "outcome: measured"));
    CHECK(Contains(eval.out, "UNROLL=4"));
    const Exec bad = workspace.Run({"eval", "affine", (workspace.tasks() / "affine" / "seed.cpp").string(), "--knob",
                                    "UNROLL=3"});
    CHECK(bad.code == 2);
    CHECK(Contains(bad.err, "UNROLL"));
  }

  TEST_CASE("kestrel eval --sweep: one JSON line per knob configuration, in declared order, --knob fixing one") {
    Workspace workspace;
    const auto Lines = [](const std::string& out) {
      std::vector<json> lines;
      std::istringstream stream(out);
      for (std::string line; std::getline(stream, line);) lines.push_back(json::parse(line));
      return lines;
    };
    const Exec whole = workspace.Run({"eval", "affine", (workspace.tasks() / "affine" / "seed.cpp").string(),
                                      "--sweep", "--min-time", "0.01"});
    INFO("stderr: " << whole.err);
    REQUIRE(whole.code == 0);
    const std::vector<json> all = Lines(whole.out);
    // itertools.product over UNROLL 1 2 4 and REVERSE 0 1: the last knob varies fastest.
    const std::vector<std::pair<std::string, std::string>> expected = {{"1", "0"}, {"1", "1"}, {"2", "0"},
                                                                       {"2", "1"}, {"4", "0"}, {"4", "1"}};
    REQUIRE(all.size() == expected.size());
    for (size_t i = 0; i < all.size(); ++i) {
      CAPTURE(i);
      CHECK(all[i].at("knobs") == json{{"UNROLL", expected[i].first}, {"REVERSE", expected[i].second}});
      CHECK(all[i].at("outcome") == "measured");
      CHECK(all[i].at("task") == "affine");
      CHECK(all[i].at("speedup").get<double>() > 0.0);
    }

    const Exec fixed = workspace.Run({"eval", "affine_wide", (workspace.tasks() / "affine_wide" / "seed.cpp").string(),
                                      "--sweep", "--knob", "SPLIT=3", "--knob", "PAD=1", "--min-time", "0.01"});
    REQUIRE(fixed.code == 0);
    const std::vector<json> sub = Lines(fixed.out);
    REQUIRE(sub.size() == 4);
    for (size_t i = 0; i < sub.size(); ++i) {
      CHECK(sub[i].at("knobs") == json{{"UNROLL", std::to_string(1 << i)}, {"SPLIT", "3"}, {"PAD", "1"}});
      CHECK(sub[i].at("outcome") == "measured");
    }

    const Exec bad = workspace.Run({"eval", "affine", (workspace.tasks() / "affine" / "seed.cpp").string(), "--sweep",
                                    "--knob", "UNROLL=3"});
    CHECK(bad.code == 2);
    CHECK(Contains(bad.err, "UNROLL"));
    CHECK(bad.out.empty());
  }

  TEST_CASE("kestrel stats: the run's knob moves, their tries, successes and mean gain, from the database") {
    Workspace& workspace = Searched();
    // One seed and five knob moves, by the model strategy's techniques; each
    // move's gain is its child over its parent.
    const json all = ParseJson(workspace.Run({"stats", "--json"}));
    REQUIRE(!all.empty());
    int tries = 0;
    for (const json& row : all) {
      CAPTURE(row.dump());
      CHECK(row.at("category").get<std::string>().starts_with("knob"));
      CHECK(row.at("pending") == 0);
      CHECK(row.at("failures") == 0);
      CHECK(row.at("successes").get<int>() <= row.at("tries").get<int>());
      CHECK(row.at("mean_gain").is_number());
      // What the model predicted, where the mutation says it: at most one per measured child.
      CHECK(row.at("predicted").get<int>() <= row.at("tries").get<int>());
      if (row.at("category") == "knob model") CHECK(row.at("predicted").get<int>() == row.at("tries").get<int>());
      tries += row.at("tries").get<int>();
    }
    CHECK(tries == 5);
    CHECK(ParseJson(workspace.Run({"stats", "--run", "1", "--json"})) == all);
    const Exec table = workspace.Run({"stats"});
    CHECK(table.code == 0);
    CHECK(Contains(table.out, "direction"));
    CHECK(Contains(table.out, "knob"));
    const Exec missing = workspace.Run({"stats", "--run", "99"});
    CHECK(missing.code != 0);
    CHECK(Contains(missing.err, "99"));
  }

  TEST_CASE("kestrel run --max-evals 6, then runs, best, show, lineage, export and graph") {
    Workspace& workspace = Searched();

    const json runs = ParseJson(workspace.Run({"runs", "--json"}));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].at("task") == "affine");
    CHECK(runs[0].at("status") == "finished");
    CHECK(runs[0].at("stop_reason") == "evaluations");
    CHECK(runs[0].at("evaluations") == 6);

    const Exec best = workspace.Run({"best", "--task", "affine", "--json"});
    REQUIRE(best.code == 0);
    const json rows = ParseJson(best);
    REQUIRE(rows.is_array());
    REQUIRE_FALSE(rows.empty());
    CHECK(rows.size() <= 6);
    for (std::size_t i = 1; i < rows.size(); ++i) {
      CHECK(rows[i - 1].at("speedup").get<double>() >= rows[i].at("speedup").get<double>());
    }
    const std::int64_t top = rows[0].at("node").get<std::int64_t>();
    CHECK(runs[0].at("best_speedup").get<double>() == doctest::Approx(rows[0].at("speedup").get<double>()));
    // The end of the run re-measured the top candidates: the best is a
    // median of several results, with their spread and verdict.
    CHECK(rows[0].at("confirmation") == "final");
    CHECK(rows[0].at("measurements").get<int>() >= 3);
    CHECK(rows[0].at("spread").get<double>() >= 0.0);
    const Exec table = workspace.Run({"best", "--task", "affine"});
    REQUIRE(table.code == 0);
    CHECK(Contains(table.out, "confidence"));
    CHECK(Contains(table.out, "confirmed: n="));

    for (const json& row : rows) {
      const std::string id = std::to_string(row.at("node").get<std::int64_t>());
      const Exec show = workspace.Run({"show", id, "--json"});
      REQUIRE(show.code == 0);
      const json node = ParseJson(show);
      CHECK(node.at("id") == row.at("node"));
      CHECK(node.at("status") == "measured");
      CHECK(Contains(node.at("source"), "kestrel:knob UNROLL"));
      CHECK(node.at("knobs") == row.at("knobs"));
      REQUIRE_FALSE(node.at("measurements").empty());
      CHECK(node.at("measurements")[0].at("outcome") == "measured");
    }

    const Exec lineage = workspace.Run({"lineage", std::to_string(top), "--json"});
    REQUIRE(lineage.code == 0);
    const json steps = ParseJson(lineage);
    REQUIRE_FALSE(steps.empty());
    CHECK(steps.front().at("mutation") == "seed:seed.cpp");
    CHECK(steps.back().at("node") == top);
    // --diff (CONTRACT.md): each step's knob changes and its source diff
    // (knob moves change no source).
    const Exec changes = workspace.Run({"lineage", std::to_string(top), "--diff"});
    REQUIRE(changes.code == 0);
    if (steps.size() > 1) {
      CHECK_MESSAGE(Contains(changes.out, "== step 1: node "), changes.out);
      CHECK_MESSAGE(Contains(changes.out, "knobs: "), changes.out);
      CHECK_MESSAGE(Contains(changes.out, "source: unchanged"), changes.out);
      const json with_diff = ParseJson(workspace.Run({"lineage", std::to_string(top), "--diff", "--json"}));
      CHECK(with_diff.back().at("diff") == "");
      CHECK_FALSE(with_diff.back().at("knob_changes").get<std::string>().empty());
    }

    const fs::path exported = workspace.path() / "best.cpp";
    const Exec write = workspace.Run({"export", std::to_string(top), "-o", exported.string()});
    REQUIRE(write.code == 0);
    const std::string text = testing::ReadFile(exported);
    CHECK(Contains(text, "#define UNROLL " + rows[0].at("knobs").at("UNROLL").get<std::string>()));
    const std::string compile = "c++ -std=c++17 -fsyntax-only '" + exported.string() + "' 2>&1";
    CHECK(std::system(compile.c_str()) == 0);

    const Exec dot = workspace.Run({"graph", "--format", "dot"});
    REQUIRE(dot.code == 0);
    CHECK(dot.out.rfind("digraph", 0) == 0);
    // The file's name reaches no shell: a quote in it is just a character.
    const fs::path svg = workspace.path() / "it's a graph; touch pwned.svg";
    const Exec drawn = workspace.Run({"graph", "--format", "svg", "-o", svg.string()});
    INFO(drawn.err);
    REQUIRE(drawn.code == 0);
    CHECK(Contains(testing::ReadFile(svg), "<svg"));
    CHECK_FALSE(fs::exists(workspace.path() / "pwned.svg"));
    CHECK_FALSE(fs::exists("pwned.svg"));
    const Exec unwritable = workspace.Run({"graph", "--format", "svg", "-o", (workspace.path() / "no/such/dir.svg").string()});
    CHECK(unwritable.code == 1);
    CHECK(Contains(unwritable.err, "cannot write"));
  }

  TEST_CASE("a run whose seed kernel attacks the database leaves it intact and records the attack") {
    // The seed looks for Kestrel's own descriptors on its database (through
    // /proc, as a kernel in Kestrel's process tree could), truncates what
    // it finds, and tries pidfd_getfd on every pid; then computes honestly.
    Workspace workspace;
    constexpr char kAttack[] = R"(#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
void axpy(const float* x, float* y, int64_t n) {
  char path[64], target[512];
  for (int pid = 1; pid < 4096; ++pid) {
    for (int fd = 3; fd < 32; ++fd) {
      std::snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd);
      const ssize_t got = readlink(path, target, sizeof target - 1);
      if (got <= 0) continue;
      target[got] = 0;
      if (std::strstr(target, "kestrel.db") == nullptr) continue;
      const int stolen = open(path, O_RDWR);
      if (stolen >= 0) ftruncate(stolen, 0);
    }
  }
  for (int pid = 2; pid < 64; ++pid) {
    const long pidfd = syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) continue;
    for (int fd = 3; fd < 32; ++fd) {
      const long stolen = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
      if (stolen >= 0) ftruncate(static_cast<int>(stolen), 0);
    }
  }
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;
}
)";
    testing::WriteTask(workspace.tasks(), "attack_db", kAttack);
    const Exec run = workspace.Run({"run", "--task", "attack_db", "--max-evals", "2", "--min-time", "0.01"});
    INFO("stderr: " << run.err);
    CHECK(run.code == 0);
    auto store = Store::Open(workspace.db(), Store::Mode::kReadOnly);
    REQUIRE_MESSAGE(store.has_value(), testing::ErrorOf(store));
    auto intact = (*store)->IntegrityOk();
    REQUIRE(intact.has_value());
    CHECK(*intact);
    auto runs = (*store)->ListRuns();
    REQUIRE(runs.has_value());
    REQUIRE(runs->size() == 1);
    auto nodes = (*store)->LoadNodes(runs->at(0).graph_id);
    REQUIRE(nodes.has_value());
    REQUIRE_FALSE(nodes->empty());
    CHECK(nodes->front().status == NodeStatus::kRejected);
    const json shown = ParseJson(workspace.Run({"show", std::to_string(nodes->front().id), "--json"}));
    CHECK(Contains(shown.dump(), "sandbox: the kernel tried to"));
  }

  TEST_CASE("exit codes: 2 for bad usage, config, task or an id that names nothing; 1 for runtime failures") {
    Workspace& workspace = Searched();
    SUBCASE("a config with an unknown field") {
      const fs::path config = workspace.path() / "bad.json";
      testing::WriteFile(config, R"({"task": "affine", "budget": {"evaluations": 2, "tme": "1m"}})");
      const Exec run = workspace.Run({"run", config.string(), "--quiet"});
      CHECK(run.code == 2);
      CHECK(Contains(run.err, config.string()));
      CHECK(Contains(run.err, "budget.tme"));
    }
    SUBCASE("an unknown task") {
      const Exec run = workspace.Run({"run", "--task", "no_such_task", "--max-evals", "1", "--quiet"});
      CHECK(run.code == 2);
      CHECK(Contains(run.err, "no_such_task"));
      const Exec eval = workspace.Run({"eval", "no_such_task", (workspace.tasks() / "affine" / "seed.cpp").string()});
      CHECK(eval.code == 2);
    }
    SUBCASE("a bad duration or strategy") {
      CHECK(workspace.Run({"run", "--task", "affine", "--time", "10 minutes"}).code == 2);
      CHECK(workspace.Run({"run", "--task", "affine", "--strategy", "annealing", "--max-evals", "1"}).code == 2);
    }
    SUBCASE("no such node or run: an id that names nothing is bad usage") {
      for (const char* command : {"show", "lineage", "export"}) {
        CAPTURE(command);
        const Exec missing = workspace.Run({command, "999999"});
        CHECK(missing.code == 2);
        CHECK(Contains(missing.err, "no node 999999"));
      }
      for (const char* command : {"best", "graph", "stats"}) {
        CAPTURE(command);
        const Exec missing = workspace.Run({command, "--run", "999"});
        CHECK(missing.code == 2);
        CHECK(Contains(missing.err, "no run 999"));
      }
    }
    SUBCASE("a --task or --host of best that names nothing; a known task with no kernels is no mistake") {
      const Exec task = workspace.Run({"best", "--task", "no_such_task"});
      CHECK(task.code == 2);
      CHECK_MESSAGE(Contains(task.err, "--task no_such_task: no such task"), task.err);
      const Exec host = workspace.Run({"best", "--host", "no_such_host", "--json"});
      CHECK(host.code == 2);
      CHECK_MESSAGE(Contains(host.err, "--host no_such_host: no such host"), host.err);
      const Exec unsearched = workspace.Run({"best", "--task", "affine_wide"});  // a task folder, not yet searched
      CHECK_MESSAGE(unsearched.code == 0, unsearched.err);
    }
    SUBCASE("resume of a run that does not exist") {
      const Exec resume = workspace.Run({"resume", "--run", "999", "--quiet"});
      CHECK(resume.code == 2);
      CHECK_MESSAGE(Contains(resume.err, "no run 999"), resume.err);
    }
    SUBCASE("a duration that is not one, or zero") {
      // "" was taken for no flag: a default 10-minute search.
      for (const char* time : {"1.2.3s", "0s", ""}) {
        CAPTURE(time);
        const Exec run = workspace.Run({"run", "--task", "affine", "--time", time, "--quiet"});
        CHECK(run.code == 2);
        CHECK_MESSAGE(Contains(run.err, "--time"), run.err);
        const Exec resume = workspace.Run({"resume", "--run", "1", "--time", time, "--quiet"});
        CHECK(resume.code == 2);
        CHECK_MESSAGE(Contains(resume.err, "--time"), resume.err);
      }
    }
    SUBCASE("kestrel add with the config of another task") {
      const fs::path other = workspace.path() / "other.json";
      testing::WriteFile(other, R"({"task": "affine_wide"})");
      const Exec add = workspace.Run(
          {"add", "affine", (workspace.tasks() / "affine" / "seed.cpp").string(), "--config", other.string()});
      CHECK(add.code == 2);
      CHECK_MESSAGE(Contains(add.err, "it is a config of task affine_wide, not of affine"), add.err);
    }
    SUBCASE("a knob given twice, or a sweep too large to evaluate") {
      const fs::path seed = workspace.tasks() / "affine" / "seed.cpp";
      const Exec twice = workspace.Run({"eval", "affine", seed.string(), "--knob", "UNROLL=2", "--knob", "UNROLL=4"});
      CHECK(twice.code == 2);
      CHECK_MESSAGE(Contains(twice.err, "UNROLL is given twice"), twice.err);
      std::string knobs;
      for (int k = 0; k < 20; ++k) knobs += "// kestrel:knob K" + std::to_string(k) + " 0 1 2 3 4 5 6 7 8 9\n";
      const fs::path huge = workspace.path() / "huge.cpp";
      testing::WriteFile(huge, knobs + testing::ReadFile(seed));
      const Exec sweep = workspace.Run({"eval", "affine", huge.string(), "--sweep", "--fingerprints-only"});
      CHECK(sweep.code == 2);
      CHECK_MESSAGE(Contains(sweep.err, "6e+20 combinations"), sweep.err);  // with UNROLL and REVERSE
      CHECK_MESSAGE(Contains(sweep.err, "--knob NAME=VALUE"), sweep.err);
    }
    SUBCASE("a read command without a database") {
      const fs::path nowhere = workspace.path() / "missing.db";
      for (const char* command : {"runs", "best"}) {
        CAPTURE(command);
        const Exec read = workspace.Run({"--db", nowhere.string(), command, "--json"}, false);
        CHECK(read.code == 1);
        CHECK(Contains(read.err, nowhere.string()));
        CHECK(Contains(read.err, "kestrel run"));
        CHECK_FALSE(fs::exists(nowhere));
      }
    }
    SUBCASE("a number out of range, said plainly (CLI11 printed DBL_MAX in 300 digits)") {
      for (const std::vector<std::string>& args : {std::vector<std::string>{"show", "abc"},
                                                   std::vector<std::string>{"best", "--top", "0"},
                                                   std::vector<std::string>{"run", "--task", "affine", "--min-time", "-1"}}) {
        const Exec refused = workspace.Run(args);
        CHECK(refused.code == 2);
        CHECK_MESSAGE((Contains(refused.err, "expected a number above zero, got") ||
                       Contains(refused.err, "expected a number, zero or more, got")),
                      refused.err);
        CHECK_MESSAGE(!Contains(refused.err, "179769"), refused.err);
      }
    }
    SUBCASE("no subcommand") {
      const Exec bare = workspace.Run({}, false);
      CHECK(bare.code == 2);
      CHECK_FALSE(bare.err.empty());
    }
  }
}
