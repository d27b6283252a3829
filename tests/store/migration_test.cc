// Opening files: versioning, migration and the refusal of files that are not
// (or not yet) ours.
#include <doctest.h>

#include <map>
#include <optional>
#include <sqlite3.h>

#include <string>

#include "core/hash.h"
#include "store/schema.h"
#include "store/store.h"
#include "tests/store/store_fixture.h"
#include "tests/testing.h"

namespace kestrel {
namespace {

using testing::Must;
using testing::QueryInt;

// Runs `sql` on a plain SQLite connection to `path` (creating the file).
void Exec(const std::filesystem::path& path, const std::string& sql) {
  const std::string error = testing::ExecSql(path, sql);
  REQUIRE_MESSAGE(error.empty(), error);
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A run of a new task `task` on its graph; its id.
std::int64_t NewRun(Store& store, const std::string& task) {
  const auto task_id = Must(store.UpsertTask(testing::MakeTask(task)));
  RunRecord run;
  run.task_id = task_id;
  run.graph_id = Must(store.GraphForTask(task_id, false));
  run.config_json = "{}";
  return Must(store.CreateRun(run));
}

TEST_SUITE("store") {
  TEST_CASE("a fresh file is stamped with our id and the current version, in WAL mode") {
    testing::TempDir dir;
    const auto path = dir / "new.db";
    {
      auto store = Must(Store::Open(path));
      CHECK(store->SchemaVersion() == kSchemaVersion);
    }
    CHECK(QueryInt(path, "PRAGMA user_version") == kSchemaVersion);
    CHECK(QueryInt(path, "PRAGMA application_id") == store::kApplicationId);
    CHECK(QueryInt(path, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'measurement_shapes'") == 1);
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &statement, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(statement) == SQLITE_ROW);
    CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0))) == "wal");
    sqlite3_finalize(statement);
    sqlite3_close(db);

    // Reopening an up-to-date file changes nothing and keeps the data.
    {
      auto store = Must(Store::Open(path));
      Must(store->UpsertTask(testing::MakeTask("t")));
    }
    auto again = Must(Store::Open(path));
    CHECK(again->SchemaVersion() == kSchemaVersion);
    CHECK(QueryInt(path, "SELECT count(*) FROM tasks") == 1);
  }

  TEST_CASE("an empty SQLite file (v0) is migrated") {
    testing::TempDir dir;
    const auto path = dir / "empty.db";
    testing::WriteFile(path, "");
    auto store = Must(Store::Open(path));
    CHECK(store->SchemaVersion() == kSchemaVersion);
    CHECK(QueryInt(path, "PRAGMA application_id") == store::kApplicationId);
  }

  TEST_CASE("a v1 file with a run is migrated to the current version and keeps the run; its state is saved and read back") {
    testing::TempDir dir;
    const auto path = dir / "v1.db";
    std::int64_t run_id = 0;
    {
      auto store = Must(Store::Open(path));
      run_id = NewRun(*store, "t");
    }
    // Back to what Kestrel v1 wrote: no state column, no roofline, no calibrations.
    Exec(path,
         "ALTER TABLE runs DROP COLUMN state_json; ALTER TABLE measurements DROP COLUMN roofline_fraction;"
         "ALTER TABLE measurement_shapes DROP COLUMN roofline_fraction; DROP TABLE calibrations;"
         "ALTER TABLE measurements DROP COLUMN purpose; DROP TABLE confirmations;"
         "ALTER TABLE measurements DROP COLUMN baseline_speedup; ALTER TABLE nodes DROP COLUMN expansions;"
         "DROP INDEX nodes_by_code; ALTER TABLE nodes DROP COLUMN code_hash;"
         "DROP INDEX llm_calls_by_purpose; ALTER TABLE llm_calls DROP COLUMN purpose; DROP TABLE profiles; DROP TABLE human_actions; DROP TABLE review_questions; DROP TABLE suite_tasks; DROP TABLE suites; DROP TABLE strategy_journal; ALTER TABLE graphs DROP COLUMN definition; PRAGMA user_version = 1;");
    CHECK(QueryInt(path, "SELECT count(*) FROM pragma_table_info('measurements') WHERE name = 'baseline_speedup'") == 0);
    {
      auto store = Must(Store::Open(path));
      CHECK(store->SchemaVersion() == kSchemaVersion);
      CHECK(QueryInt(path, "SELECT count(*) FROM pragma_table_info('measurements') WHERE name = 'baseline_speedup'") == 1);
      const RunRecord run = Must(store->GetRun(run_id));
      CHECK(run.state_json == "{}");
      CHECK(run.llm_usd == 0.0);
      CHECK_FALSE(Must(store->LatestCalibration(run.host_id, 1)).has_value());
      Must(store->SaveRunState(run_id, R"({"selections":7})"));
      auto missing = store->SaveRunState(run_id + 100, "{}");
      REQUIRE_FALSE(missing);
      CHECK(missing.error().IsNotFound());
    }
    auto store = Must(Store::Open(path, Store::Mode::kReadOnly));
    CHECK(Must(store->GetRun(run_id)).state_json == R"({"selections":7})");
  }

  TEST_CASE("a v3 file's nodes get the expansions its derivations show: derive and fix edges, not duplicates") {
    testing::TempDir dir;
    const auto path = dir / "v3.db";
    std::int64_t seed = 0, child = 0, grandchild = 0;
    {
      auto store = Must(Store::Open(path));
      const auto task_id = Must(store->UpsertTask(testing::MakeTask("t")));
      const auto graph_id = Must(store->GraphForTask(task_id, false));
      const auto node = [&](const std::string& source, std::optional<EdgeRecord> edge) {
        NodeRecord record = NewNodeRecord({source, {}, "c++", {}}, graph_id, 0, "m");
        return Must(store->AddNode(record, edge));
      };
      seed = node("seed", std::nullopt);
      child = node("child", EdgeRecord{seed, 0, EdgeKind::kDerive, 0, "m", 0});
      grandchild = node("grandchild", EdgeRecord{child, 0, EdgeKind::kFix, 0, "m", 0});
      (void)node("other", EdgeRecord{seed, 0, EdgeKind::kDerive, 0, "m", 0});
      Must(store->AddEdge({child, seed, EdgeKind::kDuplicate, 0, "m", 0}));
    }
    Exec(path,
         "ALTER TABLE nodes DROP COLUMN expansions; DROP INDEX nodes_by_code; ALTER TABLE nodes DROP COLUMN code_hash;"
         "DROP INDEX llm_calls_by_purpose; ALTER TABLE llm_calls DROP COLUMN purpose; DROP TABLE profiles; DROP TABLE human_actions; DROP TABLE review_questions; DROP TABLE suite_tasks; DROP TABLE suites; ALTER TABLE calibrations DROP COLUMN curve_json; DROP TABLE strategy_journal; ALTER TABLE graphs DROP COLUMN definition; PRAGMA user_version = 3;");
    auto store = Must(Store::Open(path));
    CHECK(store->SchemaVersion() == kSchemaVersion);
    std::map<std::int64_t, std::int64_t> expansions;
    for (const NodeRecord& node : Must(store->LoadNodes(1))) expansions[node.id] = node.expansions;
    CHECK(expansions[seed] == 2);
    CHECK(expansions[child] == 1);  // the fix; its duplicate edge is not an expansion
    CHECK(expansions[grandchild] == 0);
    Must(store->AddExpansion(grandchild));
    CHECK(Must(store->GetNode(grandchild)).expansions == 1);
    CHECK(store->AddExpansion(grandchild + 100).error().IsNotFound());
  }

  TEST_CASE("a v4 file's nodes get a code_hash column (NULL: unknown) and its index; fingerprints then work") {
    testing::TempDir dir;
    const auto path = dir / "v4.db";
    std::int64_t node = 0;
    {
      auto store = Must(Store::Open(path));
      const auto task_id = Must(store->UpsertTask(testing::MakeTask("t")));
      const auto graph_id = Must(store->GraphForTask(task_id, false));
      node = Must(store->AddNode(NewNodeRecord({"seed", {}, "c++", {}}, graph_id, 0, "m"), std::nullopt));
    }
    Exec(path, "DROP INDEX nodes_by_code; ALTER TABLE nodes DROP COLUMN code_hash;"
               "DROP INDEX llm_calls_by_purpose; ALTER TABLE llm_calls DROP COLUMN purpose; DROP TABLE profiles; DROP TABLE human_actions; DROP TABLE review_questions; DROP TABLE suite_tasks; DROP TABLE suites; ALTER TABLE calibrations DROP COLUMN curve_json; DROP TABLE strategy_journal; ALTER TABLE graphs DROP COLUMN definition; PRAGMA user_version = 4;");
    CHECK(QueryInt(path, "SELECT count(*) FROM pragma_table_info('nodes') WHERE name = 'code_hash'") == 0);
    auto store = Must(Store::Open(path));
    CHECK(store->SchemaVersion() == kSchemaVersion);
    CHECK(QueryInt(path, "SELECT count(*) FROM pragma_table_info('nodes') WHERE name = 'code_hash'") == 1);
    CHECK(QueryInt(path, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'nodes_by_code'") == 1);
    CHECK(QueryInt(path, "SELECT count(*) FROM nodes WHERE code_hash IS NULL") == 1);
    CHECK(Must(store->CodeHash(node)).empty());
    Must(store->SetCodeHash(node, "ab12"));
    CHECK(Must(store->CodeHash(node)) == "ab12");
    CHECK(store->SetCodeHash(node + 100, "ab12").error().IsNotFound());
  }

  TEST_CASE("a v5 file gets the profiles table and each LLM call's purpose ('mutate' for the calls it had)") {
    testing::TempDir dir;
    const auto path = dir / "v5.db";
    std::int64_t node = 0;
    {
      auto store = Must(Store::Open(path));
      const auto task_id = Must(store->UpsertTask(testing::MakeTask("t")));
      const auto graph_id = Must(store->GraphForTask(task_id, false));
      node = Must(store->AddNode(NewNodeRecord({"seed", {}, "c++", {}}, graph_id, 0, "m"), std::nullopt));
      LlmCallRecord call;
      call.node_id = node;
      call.provider = "openai";
      call.model = "m";
      call.prompt = "[]";
      Must(store->AddLlmCall(call));
    }
    Exec(path, "DROP INDEX llm_calls_by_purpose; ALTER TABLE llm_calls DROP COLUMN purpose; DROP TABLE profiles; DROP TABLE human_actions; DROP TABLE review_questions; DROP TABLE suite_tasks; DROP TABLE suites; ALTER TABLE calibrations DROP COLUMN curve_json; DROP TABLE strategy_journal; ALTER TABLE graphs DROP COLUMN definition; PRAGMA user_version = 5;");
    CHECK(QueryInt(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'profiles'") == 0);
    auto store = Must(Store::Open(path));
    CHECK(store->SchemaVersion() == kSchemaVersion);
    const auto calls = Must(store->LlmCallsForNode(node));
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].purpose == "mutate");
    CHECK(Must(store->LlmCallsForNode(node, "analysis")).empty());
    CHECK_FALSE(Must(store->LatestProfile(node, 0)).has_value());
    ProfileRecord profile;
    profile.node_id = node;
    profile.profile_json = "{}";
    profile.digest = "roofline: 50%";
    profile.seconds = 0.25;
    Must(store->AddProfile(profile));
    profile.digest = "roofline: 60%";
    const auto newest = Must(store->AddProfile(profile));
    const auto latest = Must(store->LatestProfile(node, 0));
    REQUIRE(latest.has_value());
    CHECK(latest->id == newest);
    CHECK(latest->digest == "roofline: 60%");
    CHECK(latest->seconds == 0.25);
    CHECK_FALSE(Must(store->LatestProfile(node, 7)).has_value());  // no profile on host 7
    profile.node_id = node + 100;
    CHECK(store->AddProfile(profile).error().IsNotFound());
  }

  TEST_CASE("a v7 file gets the review_questions table; its human actions are kept") {
    testing::TempDir dir;
    const auto path = dir / "v7.db";
    std::int64_t graph_id = 0;
    std::int64_t seed = 0;
    std::int64_t run_id = 0;
    {
      auto store = Must(Store::Open(path));
      const auto task_id = Must(store->UpsertTask(testing::MakeTask("t")));
      graph_id = Must(store->GraphForTask(task_id, false));
      RunRecord run;
      run.task_id = task_id;
      run.graph_id = graph_id;
      run.config_json = "{}";
      run_id = Must(store->CreateRun(run));
      seed = Must(store->AddNode(NewNodeRecord({"seed", {}, "c++", {}}, graph_id, 0, "m"), std::nullopt));
      Must(store->AddHumanAction({0, graph_id, seed, 0, HumanActionKind::kNote, "kept", "ada", 0}));
    }
    Exec(path, "DROP TABLE review_questions; DROP TABLE suite_tasks; DROP TABLE suites; ALTER TABLE calibrations DROP COLUMN curve_json; DROP TABLE strategy_journal; ALTER TABLE graphs DROP COLUMN definition; PRAGMA user_version = 7;");
    auto store = Must(Store::Open(path));
    CHECK(store->SchemaVersion() == kSchemaVersion);
    CHECK(QueryInt(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'review_questions'") == 1);
    CHECK(Must(store->NodeNotes(seed)).size() == 1);
    ReviewQuestionRecord question;
    question.run_id = run_id;
    question.parent_id = seed;
    const auto id = Must(store->OpenReviewQuestion(question));
    CHECK(Must(store->AnswerReviewQuestion(id, ReviewState::kAccepted, "", "ada")));
    // The table's CHECK refuses a state no reader knows, whoever writes it.
    CHECK_FALSE(testing::ExecSql(path, "UPDATE review_questions SET state = 'maybe'").empty());
  }

  TEST_CASE("a v6 file gets the human_actions table and the human edge kind; its graph and edges are kept") {
    testing::TempDir dir;
    const auto path = dir / "v6.db";
    std::int64_t graph_id = 0;
    std::int64_t seed = 0;
    std::int64_t child = 0;
    {
      auto store = Must(Store::Open(path));
      const auto task_id = Must(store->UpsertTask(testing::MakeTask("t")));
      graph_id = Must(store->GraphForTask(task_id, false));
      seed = Must(store->AddNode(NewNodeRecord({"seed", {}, "c++", {}}, graph_id, 0, "m"), std::nullopt));
      child = Must(store->AddNode(NewNodeRecord({"child", {}, "c++", {}}, graph_id, 0, "m"),
                                  EdgeRecord{seed, 0, EdgeKind::kDerive, 0, "m", 0}));
    }
    Exec(path, "DROP TABLE human_actions; DROP TABLE review_questions; DROP TABLE suite_tasks; DROP TABLE suites; ALTER TABLE calibrations DROP COLUMN curve_json; DROP TABLE strategy_journal; ALTER TABLE graphs DROP COLUMN definition; PRAGMA user_version = 6;");
    CHECK(QueryInt(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'human_actions'") == 0);
    auto store = Must(Store::Open(path));
    CHECK(store->SchemaVersion() == kSchemaVersion);
    CHECK(QueryInt(path, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name LIKE 'human_actions_by_%'") == 2);
    CHECK(Must(store->LoadEdges(graph_id)).size() == 1);
    const auto added = Must(store->AddNode(NewNodeRecord({"by hand", {}, "c++", {}}, graph_id, 0, "human:ada"),
                                           EdgeRecord{child, 0, EdgeKind::kHuman, 0, "human:ada", 0}));
    const auto edges = Must(store->LoadEdges(graph_id));
    REQUIRE(edges.size() == 2);
    CHECK(edges[1].kind == EdgeKind::kHuman);
    CHECK(edges[1].child == added);
    Must(store->AddHumanAction({0, graph_id, added, 0, HumanActionKind::kAdd, "by hand", "ada", 0}));
    CHECK(Must(store->NodeActions(added)).size() == 1);
    // The table's CHECK refuses a kind no reader knows, whoever writes it.
    CHECK_FALSE(testing::ExecSql(path, "INSERT INTO human_actions (graph_id, kind, text, author, created_at) "
                                       "VALUES (1, 'shrug', '', 'x', 0)").empty());
  }

  TEST_CASE("a v9 file's calibrations get an empty bandwidth curve; a new one's curve goes round trip") {
    testing::TempDir dir;
    const auto path = dir / "v9.db";
    std::int64_t host_id = 0;
    const Calibration levels{1, 100, 400, 200, 100, 30};  // threads, peak GFLOP/s, L1..DRAM GB/s
    {
      auto store = Must(Store::Open(path));
      host_id = Must(store->UpsertHost(testing::MakeHost("old")));
      Must(store->AddCalibration(host_id, levels));
    }
    Exec(path, "ALTER TABLE calibrations DROP COLUMN curve_json; DROP TABLE strategy_journal; ALTER TABLE graphs DROP COLUMN definition; PRAGMA user_version = 9;");
    auto store = Must(Store::Open(path));
    CHECK(store->SchemaVersion() == kSchemaVersion);
    const auto old = Must(store->LatestCalibration(host_id, 1));
    REQUIRE(old.has_value());
    CHECK(old->dram_gbps == 30);
    CHECK(old->curve.empty());  // measured before the curve: a run measures the host again

    Calibration curved = levels;
    curved.curve = {{8 << 20, 90.5}, {16 << 20, 61.25}, {1 << 30, 31}};
    Must(store->AddCalibration(host_id, curved));
    const auto latest = Must(store->LatestCalibration(host_id, 1));
    REQUIRE(latest.has_value());
    CHECK(latest->curve == curved.curve);
    // A damaged curve is an error naming the table, not a calibration without one.
    Exec(path, "UPDATE calibrations SET curve_json = '[[1, ' WHERE curve_json != '[]';");
    const auto damaged = store->LatestCalibration(host_id, 1);
    REQUIRE_FALSE(damaged.has_value());
    CHECK(Contains(damaged.error().message(), "LatestCalibration"));
  }

  TEST_CASE("a v10 file gets the strategy journal; its runs keep their state; rows go round trip, in order") {
    testing::TempDir dir;
    const auto path = dir / "v10.db";
    std::int64_t run_id = 0;
    const std::string whole = R"({"exhausted":[3],"home":[[1,0]]})";  // a state saved whole, as v10 did
    {
      auto store = Must(Store::Open(path));
      run_id = NewRun(*store, "triad");
      Must(store->SaveRunState(run_id, whole));
    }
    Exec(path, "DROP TABLE strategy_journal; ALTER TABLE graphs DROP COLUMN definition; PRAGMA user_version = 10;");
    auto store = Must(Store::Open(path));
    CHECK(store->SchemaVersion() == kSchemaVersion);
    CHECK(Must(store->GetRun(run_id)).state_json == whole);
    CHECK(Must(store->StrategyJournal(run_id)).empty());

    Must(store->AppendStrategyJournal(run_id, R"([["home",2,1]])"));
    Must(store->AppendStrategyJournal(run_id, R"([["exhausted",2],["guest",2,0]])"));
    CHECK(Must(store->StrategyJournal(run_id)) ==
          std::vector<std::string>{R"([["home",2,1]])", R"([["exhausted",2],["guest",2,0]])"});
    CHECK(Must(store->StrategyJournal(run_id + 1)).empty());
    for (const std::string bad : {"", "{}", "[1,", "7"}) {
      CAPTURE(bad);
      const auto refused = store->AppendStrategyJournal(run_id, bad);
      REQUIRE_FALSE(refused.has_value());
      CHECK(refused.error().IsInvalidArgument());
    }
    CHECK(Must(store->StrategyJournal(run_id)).size() == 2);
    // A snapshot replaces the run's rows, and only the run's.
    RunRecord other = Must(store->GetRun(run_id));
    const auto other_id = Must(store->CreateRun(other));
    Must(store->AppendStrategyJournal(other_id, R"([["exhausted",9]])"));
    Must(store->CompactStrategyJournal(run_id, R"([["exhausted",2],["home",2,1]])"));
    CHECK(Must(store->StrategyJournal(run_id)) == std::vector<std::string>{R"([["exhausted",2],["home",2,1]])"});
    CHECK(Must(store->StrategyJournal(other_id)) == std::vector<std::string>{R"([["exhausted",9]])"});
    CHECK(store->CompactStrategyJournal(run_id, "{}").error().IsInvalidArgument());
    CHECK(Must(store->StrategyJournal(run_id)).size() == 1);
  }

  TEST_CASE("a v11 file's graphs keep the task.json they were searched under; an edited task searches a graph of its own") {
    testing::TempDir dir;
    const auto path = dir / "v11.db";
    Task task = testing::MakeTask("triad");
    task.reference.text = "void f() {}";
    Task edited_early = testing::MakeTask("softmax");  // edited before the first run of this build
    std::int64_t graph = 0, early = 0;
    {
      auto store = Must(Store::Open(path));
      graph = Must(store->GraphForTask(Must(store->UpsertTask(task)), false));
      early = Must(store->GraphForTask(Must(store->UpsertTask(edited_early)), false));
    }
    Exec(path, "ALTER TABLE graphs DROP COLUMN definition; PRAGMA user_version = 11;");
    auto store = Must(Store::Open(path));
    CHECK(store->SchemaVersion() == kSchemaVersion);
    CHECK(testing::QueryText(path, "SELECT definition FROM graphs WHERE id = " + std::to_string(graph)) ==
          "task.json:" + Sha256Hex(task.spec_text));

    // The task as it was: its graph, which from then on holds the whole definition.
    std::int64_t passed_over = -1;
    const auto task_id = Must(store->UpsertTask(task));
    CHECK(Must(store->GraphForTask(task_id, false, task.Definition(), &passed_over)) == graph);
    CHECK(passed_over == 0);
    CHECK(testing::QueryText(path, "SELECT definition FROM graphs WHERE id = " + std::to_string(graph)) ==
          task.Definition());
    CHECK(Must(store->GraphForTask(task_id, false, task.Definition(), &passed_over)) == graph);

    // Its shapes edited: a new graph; the old one is named as passed over.
    Task reshaped = task;
    reshaped.spec_text = R"({"name": "triad", "entry": "f", "shapes": [{"n": 100003}]})";
    CHECK(Must(store->UpsertTask(reshaped)) == task_id);
    const auto second = Must(store->GraphForTask(task_id, false, reshaped.Definition(), &passed_over));
    CHECK(second != graph);
    CHECK(passed_over == graph);
    CHECK(Must(store->GraphForTask(task_id, false, reshaped.Definition(), &passed_over)) == second);
    CHECK(passed_over == 0);
    // Only its reference edited: a graph of its own too.
    Task rereferenced = reshaped;
    rereferenced.reference.text = "void f() { /* another */ }";
    const auto third = Must(store->GraphForTask(Must(store->UpsertTask(rereferenced)), false,
                                                rereferenced.Definition(), &passed_over));
    CHECK(third != second);
    CHECK(third != graph);
    CHECK(passed_over == second);
    // Back as it was: its first graph again.
    CHECK(Must(store->GraphForTask(Must(store->UpsertTask(task)), false, task.Definition(), &passed_over)) == graph);
    CHECK(passed_over == third);
    // --fresh: a new graph whatever the definition.
    const auto fresh = Must(store->GraphForTask(task_id, true, task.Definition()));
    CHECK(fresh > third);
    CHECK(Must(store->GraphForTask(task_id, false, task.Definition())) == fresh);

    // A task edited before this build's first run of it: its v11 graph
    // was searched under another task.json, and is left aside.
    edited_early.spec_text = R"({"name": "softmax", "entry": "g"})";
    const auto softmax_id = Must(store->UpsertTask(edited_early));
    const auto renewed = Must(store->GraphForTask(softmax_id, false, edited_early.Definition(), &passed_over));
    CHECK(renewed != early);
    CHECK(passed_over == early);
  }

  TEST_CASE("a v8 file gets the suite tables; its runs are kept and a suite's rows go round trip") {
    testing::TempDir dir;
    const auto path = dir / "v8.db";
    std::int64_t run_id = 0;
    {
      auto store = Must(Store::Open(path));
      run_id = NewRun(*store, "triad");
    }
    Exec(path, "DROP TABLE suite_tasks; DROP TABLE suites; ALTER TABLE calibrations DROP COLUMN curve_json; DROP TABLE strategy_journal; ALTER TABLE graphs DROP COLUMN definition; PRAGMA user_version = 8;");
    auto store = Must(Store::Open(path));
    CHECK(store->SchemaVersion() == kSchemaVersion);
    CHECK(Must(store->GetRun(run_id)).task_name == "triad");
    CHECK_FALSE(Must(store->LatestSuite()).has_value());

    SuiteRecord suite{0, R"({"levels":[1]})", R"({"evaluations":2})", R"({"seed":1})", SuiteState::kDone, 0, 0};
    std::vector<SuiteTaskRecord> tasks(2);
    tasks[0].position = 0;
    tasks[0].task = "triad";
    tasks[0].level = 1;
    tasks[1].position = 1;
    tasks[1].task = "colsum";
    tasks[1].level = 1;
    const auto suite_id = Must(store->CreateSuite(suite, tasks));
    const SuiteRecord read = Must(store->GetSuite(suite_id));
    CHECK(read.state == SuiteState::kRunning);  // a new suite runs, whatever the record said
    CHECK(read.selection_json == suite.selection_json);
    CHECK(read.budget_json == suite.budget_json);
    CHECK(read.config_json == suite.config_json);
    CHECK(read.created_at > 0);
    CHECK(read.finished_at == 0);

    auto rows = Must(store->SuiteTasks(suite_id));
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].task == "triad");
    CHECK(rows[1].task == "colsum");
    CHECK(rows[0].state == SuiteTaskState::kPending);
    CHECK(rows[0].run_id == 0);
    Must(store->StartSuiteTask(rows[0].id));
    Must(store->SetSuiteTaskRun(rows[0].id, run_id));
    Must(store->FinishSuiteTask(rows[0].id, SuiteTaskState::kDone, ""));
    Must(store->FinishSuiteTask(rows[1].id, SuiteTaskState::kSkipped, "the cpu evaluator does not run cuda tasks"));
    Must(store->SetSuiteState(suite_id, SuiteState::kDone));
    rows = Must(store->SuiteTasks(suite_id));
    CHECK(rows[0].state == SuiteTaskState::kDone);
    CHECK(rows[0].run_id == run_id);
    CHECK(rows[0].started_at > 0);
    CHECK(rows[0].finished_at >= rows[0].started_at);
    CHECK(rows[1].state == SuiteTaskState::kSkipped);
    CHECK(rows[1].reason == "the cpu evaluator does not run cuda tasks");
    CHECK(rows[1].started_at == 0);
    CHECK(Must(store->LatestSuite())->id == suite_id);
    CHECK(Must(store->GetSuite(suite_id)).finished_at > 0);

    CHECK(store->GetSuite(suite_id + 1).error().IsNotFound());
    CHECK(store->StartSuiteTask(999).error().IsNotFound());
    // A suite task's run must exist, and its state is one the readers know.
    CHECK_FALSE(store->SetSuiteTaskRun(rows[1].id, run_id + 50));
    CHECK_FALSE(testing::ExecSql(path, "UPDATE suite_tasks SET state = 'paused' WHERE id = 1").empty());
  }

  TEST_CASE("a file from a newer Kestrel is refused") {
    testing::TempDir dir;
    const auto path = dir / "future.db";
    Exec(path, "PRAGMA application_id = " + std::to_string(store::kApplicationId) +
                   "; PRAGMA user_version = 99; CREATE TABLE future (x);");
    for (auto mode : {Store::Mode::kReadWrite, Store::Mode::kReadOnly}) {
      auto store = Store::Open(path, mode);
      REQUIRE_FALSE(store);
      CHECK(store.error().code() == ErrorCode::kCorruption);
      const std::string& message = store.error().message();
      CHECK_MESSAGE(Contains(message, "created by a newer Kestrel (schema v99); this build reads up to v" + std::to_string(kSchemaVersion)), message);
      CHECK(Contains(message, path.string()));
    }
    CHECK(QueryInt(path, "PRAGMA user_version") == 99);  // untouched
  }

  TEST_CASE("an SQLite file of another application is refused and left alone") {
    testing::TempDir dir;
    SUBCASE("tables without our id") {
      const auto path = dir / "other.db";
      Exec(path, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers VALUES (1, 'x');");
      auto store = Store::Open(path);
      REQUIRE_FALSE(store);
      CHECK(store.error().code() == ErrorCode::kCorruption);
      CHECK_MESSAGE(Contains(store.error().message(), "not a Kestrel database"), store.error().message());
      CHECK(Contains(store.error().message(), path.string()));
      CHECK(QueryInt(path, "SELECT count(*) FROM customers") == 1);
      CHECK_FALSE(std::filesystem::exists(path.string() + "-wal"));
    }
    SUBCASE("another application_id") {
      const auto path = dir / "id.db";
      Exec(path, "PRAGMA application_id = 1234;");
      auto store = Store::Open(path);
      REQUIRE_FALSE(store);
      CHECK(store.error().code() == ErrorCode::kCorruption);
      CHECK_MESSAGE(Contains(store.error().message(), "application_id 0x000004d2"), store.error().message());
    }
  }

  TEST_CASE("a file that is not SQLite is refused") {
    testing::TempDir dir;
    const auto path = dir / "notes.txt";
    const std::string text = "These are my notes, not a database. They are long enough to fill a header.\n";
    testing::WriteFile(path, text + text);
    for (auto mode : {Store::Mode::kReadWrite, Store::Mode::kReadOnly}) {
      auto store = Store::Open(path, mode);
      REQUIRE_FALSE(store);
      CHECK(store.error().code() == ErrorCode::kCorruption);
      CHECK_MESSAGE(Contains(store.error().message(), "not a Kestrel database (not an SQLite file"),
                    store.error().message());
      CHECK(Contains(store.error().message(), path.string()));
    }
    CHECK(std::filesystem::file_size(path) == 2 * text.size());  // untouched
    CHECK_FALSE(std::filesystem::exists(path.string() + "-wal"));
  }

  TEST_CASE("read-only opening") {
    testing::TempDir dir;
    SUBCASE("a missing file is NotFound and is not created") {
      for (auto mode : {Store::Mode::kReadOnly, Store::Mode::kExisting}) {
        auto store = Store::Open(dir / "missing.db", mode);
        REQUIRE_FALSE(store);
        CHECK(store.error().IsNotFound());
        CHECK_FALSE(std::filesystem::exists(dir / "missing.db"));
      }
    }
    SUBCASE("kExisting writes to a file that exists") {
      const auto path = dir / "made.db";
      Must(Store::Open(path));
      auto store = Must(Store::Open(path, Store::Mode::kExisting));
      CHECK(store->UpsertTask(testing::MakeTask("t")));
    }
    SUBCASE("an older schema is refused, not migrated") {
      const auto path = dir / "old.db";
      testing::WriteFile(path, "");
      auto store = Store::Open(path, Store::Mode::kReadOnly);
      REQUIRE_FALSE(store);
      CHECK_MESSAGE(Contains(store.error().message(), "open it read-write once"), store.error().message());
      CHECK(QueryInt(path, "PRAGMA user_version") == 0);
    }
    SUBCASE("a current file reads but refuses writes") {
      const auto path = dir / "current.db";
      Must(Store::Open(path));
      auto store = Must(Store::Open(path, Store::Mode::kReadOnly));
      CHECK(store->SchemaVersion() == kSchemaVersion);
      CHECK(Must(store->ListRuns()).empty());
      auto write = store->UpsertTask(testing::MakeTask("t"));
      REQUIRE_FALSE(write);
      CHECK(write.error().code() == ErrorCode::kIo);
      CHECK(Contains(write.error().message(), "UpsertTask"));
    }
  }

  TEST_CASE("a read-write open of an impossible path is an Io error naming it") {
    testing::TempDir dir;
    auto store = Store::Open(dir / "no" / "such" / "dir" / "k.db");
    REQUIRE_FALSE(store);
    CHECK(store.error().code() == ErrorCode::kIo);
    CHECK(Contains(store.error().message(), "k.db"));
  }
}

}  // namespace
}  // namespace kestrel
