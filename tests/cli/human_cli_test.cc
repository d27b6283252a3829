// The commands of a person in the loop on the real binary: note, label,
// steer, ban, pin, add (with and without --eval), what show and best print
// of them, and the clear refusals (exit 2) of an unknown node or run, a bad
// label word, a missing database.

#include <doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_workspace.h"
#include "testing.h"
#include "tests/sqlite_peek.h"

using namespace kestrel;
using nlohmann::json;
using testing::Exec;
using testing::Workspace;

namespace {

Exec Must(const Exec& exec) {
  INFO(exec.err);
  REQUIRE(exec.code == 0);
  return exec;
}

constexpr char kHandWritten[] = R"(#include <cstdint>
void axpy(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;  // by hand
}
)";

}  // namespace

TEST_SUITE("cli") {
  TEST_CASE("steer without --run: the run running now, else the newest; two running are refused, named") {
    Workspace workspace;
    for (int i = 0; i < 2; ++i) {
      Must(workspace.Run({"run", "--task", "affine", "--max-evals", "1", "--min-time", "0.02", "--quiet", "--fresh"}));
    }
    const auto db = workspace.db();
    Must(workspace.Run({"steer", "newest", "--as", "ada"}));
    CHECK(testing::QueryInt(db, "SELECT run_id FROM human_actions WHERE text = 'newest'") == 2);
    testing::ExecSql(db, "UPDATE runs SET status = 'running' WHERE id = 1");
    Must(workspace.Run({"steer", "keep the tail loop", "--as", "ada"}));
    CHECK(testing::QueryInt(db, "SELECT run_id FROM human_actions WHERE text = 'keep the tail loop'") == 1);
    testing::ExecSql(db, "UPDATE runs SET status = 'running' WHERE id = 2");
    const Exec ambiguous = workspace.Run({"steer", "x", "--as", "ada"});
    CHECK(ambiguous.code == 2);
    CHECK(ambiguous.err.find("runs 2 (affine), 1 (affine) are running; say which with --run ID") != std::string::npos);
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM human_actions") == 2);
  }

  TEST_CASE("note, label, steer, ban, pin and add: one row each with its author, shown by show and best") {
    Workspace workspace;
    const Exec refused = workspace.Run({"note", "1", "x"});
    CHECK(refused.code == 2);
    CHECK(refused.err.find("no database") != std::string::npos);
    Must(workspace.Run({"run", "--task", "affine", "--max-evals", "2", "--min-time", "0.02", "--quiet"}));
    const auto db = workspace.db();

    Must(workspace.Run({"note", "2", "reads x twice", "--as", "ada"}));
    Must(workspace.Run({"label", "2", "suspicious", "--as", "ada"}));
    Must(workspace.Run({"label", "2", "clean", "--as", "bob"}));  // replaces the label
    Must(workspace.Run({"ban", "1", "--as", "ada"}));
    Must(workspace.Run({"ban", "1", "--undo", "--as", "ada"}));
    Must(workspace.Run({"pin", "2", "--as", "ada"}));
    Must(workspace.Run({"steer", "use AVX-512", "--as", "ada"}));  // the newest run
    Must(workspace.Run({"steer", "--run", "1", "--clear", "--as", "ada"}));
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM human_actions") == 8);
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM human_actions WHERE author = 'ada'") == 7);
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM human_actions WHERE kind = 'steer' AND run_id = 1 AND text = 'use AVX-512'") == 1);

    for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"note", "99", "x"}, "no node 99"},
             {{"label", "2", "great"}, "'great' is not a label"},
             {{"ban", "42"}, "no node 42"},
             {{"steer", "--run", "9", "x"}, "no run 9"},
             {{"steer"}, "an instruction or --clear"},
             {{"add", "affine", "/dev/null", "--parent", "77"}, "no node 77"},
             {{"note", "2", " "}, "the note has no text"},
         }) {
      const Exec bad = workspace.Run(args);
      CAPTURE(args[0]);
      CHECK(bad.code == 2);
      CHECK(bad.err.find(message) != std::string::npos);
    }
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM human_actions") == 8);  // nothing written

    const json shown = json::parse(Must(workspace.Run({"show", "2", "--json"})).out);
    CHECK(shown.at("label") == "clean");
    REQUIRE(shown.at("actions").size() == 4);
    CHECK(shown.at("actions")[0].at("kind") == "note");
    CHECK(shown.at("actions")[0].at("text") == "reads x twice");
    CHECK(shown.at("actions")[0].at("author") == "ada");
    const Exec text = Must(workspace.Run({"show", "2"}));
    CHECK(text.out.find("label      clean (by bob") != std::string::npos);
    CHECK(text.out.find("ada  note: reads x twice") != std::string::npos);

    // A note in Latin-1 (not UTF-8) is kept as written, and --json still
    // prints one document, the byte as U+FFFD.
    Must(workspace.Run({"note", "2", "caf\xe9 au lait", "--as", "ada"}));
    const json latin1 = json::parse(Must(workspace.Run({"show", "2", "--json"})).out);
    CHECK(latin1.at("actions").back().at("text") == "caf\xef\xbf\xbd au lait");
    CHECK(json::parse(Must(workspace.Run({"lineage", "2", "--json"})).out).is_array());

    const json best = json::parse(Must(workspace.Run({"best", "--json"})).out);
    for (const auto& row : best) {
      CHECK(row.at("label") == (row.at("node") == 2 ? json("clean") : json()));
    }

    // A person's candidate under node 2, evaluated at once; another as a root, left to a search.
    const auto file = workspace.path() / "by_hand.cpp";
    testing::WriteFile(file, kHandWritten);
    const Exec added = Must(workspace.Run({"add", "affine", file.string(), "--parent", "2", "--eval", "--as", "ada"}));
    CHECK(added.out.find("under node 2") != std::string::npos);
    const std::int64_t by_hand = testing::QueryInt(db, "SELECT node_id FROM human_actions WHERE kind = 'add'");
    REQUIRE(by_hand > 0);
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM edges WHERE kind = 'human' AND parent_id = 2 AND child_id = " +
                                    std::to_string(by_hand)) == 1);
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM nodes WHERE status = 'measured' AND id = " + std::to_string(by_hand)) == 1);
    const Exec again = workspace.Run({"add", "affine", file.string()});
    CHECK(again.code == 2);
    CHECK(again.err.find("node " + std::to_string(by_hand) + " of the graph already") != std::string::npos);

    const auto root_file = workspace.path() / "root.cpp";
    testing::WriteFile(root_file, std::string(kHandWritten) + "// another\n");
    const Exec root = Must(workspace.Run({"add", "affine", root_file.string()}));
    CHECK(root.out.find("as a root") != std::string::npos);
    const std::int64_t root_node = testing::QueryInt(db, "SELECT max(node_id) FROM human_actions WHERE kind = 'add'");
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM nodes WHERE status = 'proposed' AND id = " + std::to_string(root_node)) == 1);
    // The next search evaluates it first, like a seed.
    Must(workspace.Run({"run", "--task", "affine", "--max-evals", "1", "--min-time", "0.02", "--quiet"}));
    CHECK(testing::QueryInt(db, "SELECT count(*) FROM nodes WHERE status = 'measured' AND id = " + std::to_string(root_node)) == 1);
  }

  TEST_CASE("best lists results awaiting review past the run's review thresholds until someone labels them") {
    Workspace workspace;
    // Any roofline above 1% awaits review: every measured result of this host.
    const auto config = workspace.path() / "review.json";
    testing::WriteFile(config, R"({"task": "affine", "review": {"speedup": 50, "roofline": 0.01},
                                   "evaluator": {"min_time": 0.02}, "budget": {"evaluations": 2}})");
    Must(workspace.Run({"run", config.string(), "--quiet"}));
    json rows = json::parse(Must(workspace.Run({"best", "--json"})).out);
    REQUIRE_FALSE(rows.empty());
    std::int64_t awaiting = 0;
    for (const auto& row : rows) {
      if (row.at("roofline_fraction").get<double>() <= 0.01) continue;
      CAPTURE(row.dump());
      REQUIRE(row.at("awaiting_review").is_object());
      CHECK(row.at("awaiting_review").at("reason").get<std::string>().rfind("roofline ", 0) == 0);
      awaiting = row.at("node").get<std::int64_t>();
    }
    REQUIRE_MESSAGE(awaiting > 0, "no result above 1% of the roofline: is the host calibrated?");
    const Exec table = Must(workspace.Run({"best"}));
    CHECK(table.out.find("AWAITING REVIEW") != std::string::npos);
    CHECK(table.out.find("awaiting review") != std::string::npos);
    Must(workspace.Run({"label", std::to_string(awaiting), "clean"}));
    rows = json::parse(Must(workspace.Run({"best", "--json"})).out);
    for (const auto& row : rows) {
      if (row.at("node") == awaiting) {
        CHECK(row.at("awaiting_review").is_null());
        CHECK(row.at("label") == "clean");
      }
    }
  }
}
