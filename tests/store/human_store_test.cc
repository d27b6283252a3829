// A person's actions: notes, labels, standing instructions, bans, pins and
// the review queue, each one row with its author, read as of an action id.
#include <doctest.h>

#include <optional>

#include "store/store.h"
#include "tests/store/store_fixture.h"
#include "tests/testing.h"

namespace kestrel {
namespace {

using testing::Must;

struct HumanFixture {
  testing::TempDir dir;
  std::unique_ptr<Store> store = Must(Store::Open(dir / "k.db"));
  std::int64_t task = Must(store->UpsertTask(testing::MakeTask("t")));
  std::int64_t graph = Must(store->GraphForTask(task, false));
  std::int64_t run = MakeRun();

  std::int64_t MakeRun() {
    RunRecord record;
    record.task_id = task;
    record.graph_id = graph;
    record.config_json = "{}";
    return Must(store->CreateRun(record));
  }
  std::int64_t Node(const std::string& knob, std::optional<double> speedup = std::nullopt,
                    double roofline = 0.0) {
    const auto id = Must(store->AddNode(testing::MakeNode(graph, run, "src", knob), std::nullopt));
    if (speedup) {
      Measurement m = testing::MakeMeasured(*speedup);
      m.roofline_fraction = roofline;
      Must(store->RecordMeasurement(id, run, 0, m));
    }
    return id;
  }
  std::int64_t Act(HumanActionKind kind, std::int64_t node, const std::string& text, std::int64_t on_run = 0) {
    return Must(store->AddHumanAction({0, graph, node, on_run, kind, text, "ada", 0}));
  }
};

TEST_SUITE("store") {
  TEST_CASE("notes and labels: every action is a row with its author; a new label replaces the old") {
    HumanFixture f;
    const auto node = f.Node("1");
    f.Act(HumanActionKind::kNote, node, "looks memory bound");
    f.Act(HumanActionKind::kLabel, node, "suspicious");
    f.Act(HumanActionKind::kNote, node, "checked: it reads every input");
    const auto relabel = f.Act(HumanActionKind::kLabel, node, "clean");
    const auto notes = Must(f.store->NodeNotes(node));
    REQUIRE(notes.size() == 2);
    CHECK(notes[0].text == "looks memory bound");
    CHECK(notes[1].text == "checked: it reads every input");
    CHECK(notes[0].author == "ada");
    CHECK(notes[0].created_at > 0);
    const auto label = Must(f.store->NodeLabel(node));
    REQUIRE(label.has_value());
    CHECK(label->id == relabel);
    CHECK(label->text == "clean");
    CHECK(Must(f.store->NodeActions(node)).size() == 4);
    CHECK(Must(f.store->LatestHumanAction(f.graph)) == relabel);
    CHECK_FALSE(Must(f.store->NodeLabel(f.Node("2"))).has_value());
  }

  TEST_CASE("bad actions are refused and write nothing") {
    HumanFixture f;
    const auto node = f.Node("1");
    CHECK(f.store->AddHumanAction({0, f.graph, node, 0, HumanActionKind::kLabel, "great", "ada", 0})
              .error().code() == ErrorCode::kInvalidArgument);
    CHECK(f.store->AddHumanAction({0, f.graph, node + 50, 0, HumanActionKind::kNote, "x", "ada", 0})
              .error().IsNotFound());
    CHECK(f.store->AddHumanAction({0, f.graph, 0, f.run + 50, HumanActionKind::kSteer, "x", "ada", 0})
              .error().IsNotFound());
    CHECK(f.store->AddHumanAction({0, f.graph, node, 0, HumanActionKind::kNote, "x", "", 0})
              .error().code() == ErrorCode::kInvalidArgument);
    const auto other_graph = Must(f.store->GraphForTask(f.task, true));
    CHECK(f.store->AddHumanAction({0, other_graph, node, 0, HumanActionKind::kNote, "x", "ada", 0})
              .error().code() == ErrorCode::kInvalidArgument);
    CHECK(f.store->AddHumanAction({0, f.graph + 50, 0, 0, HumanActionKind::kNote, "x", "ada", 0})
              .error().IsNotFound());
    CHECK(Must(f.store->LatestHumanAction(f.graph)) == 0);
    CHECK(testing::QueryInt(f.dir / "k.db", "SELECT count(*) FROM human_actions") == 0);
  }

  TEST_CASE("standing instructions: steers since the run's last unsteer, as of an action id") {
    HumanFixture f;
    const auto other_run = f.MakeRun();
    const auto first = f.Act(HumanActionKind::kSteer, 0, "use AVX-512", f.run);
    f.Act(HumanActionKind::kSteer, 0, "not for this run", other_run);
    const auto second = f.Act(HumanActionKind::kSteer, 0, "keep the reduction in double", f.run);
    auto standing = Must(f.store->StandingInstructions(f.run));
    REQUIRE(standing.size() == 2);
    CHECK(standing[0].text == "use AVX-512");
    CHECK(standing[1].text == "keep the reduction in double");
    const auto clear = f.Act(HumanActionKind::kUnsteer, 0, "", f.run);
    CHECK(Must(f.store->StandingInstructions(f.run)).empty());
    CHECK(Must(f.store->StandingInstructions(f.run, first)).size() == 1);
    CHECK(Must(f.store->StandingInstructions(f.run, second)).size() == 2);
    CHECK(Must(f.store->StandingInstructions(f.run, clear)).empty());
    f.Act(HumanActionKind::kSteer, 0, "unroll by 8", f.run);
    standing = Must(f.store->StandingInstructions(f.run));
    REQUIRE(standing.size() == 1);
    CHECK(standing[0].text == "unroll by 8");
    CHECK(Must(f.store->StandingInstructions(other_run)).size() == 1);
  }

  TEST_CASE("bans and pins stand until undone; the view as of an earlier action is that earlier one") {
    HumanFixture f;
    const auto a = f.Node("1");
    const auto b = f.Node("2");
    const auto ban_a = f.Act(HumanActionKind::kBan, a, "");
    f.Act(HumanActionKind::kBan, b, "");
    f.Act(HumanActionKind::kPin, b, "");
    const auto unban_a = f.Act(HumanActionKind::kUnban, a, "");
    CHECK(Must(f.store->BannedNodes(f.graph)) == std::vector<std::int64_t>{b});
    CHECK(Must(f.store->BannedNodes(f.graph, ban_a)) == std::vector<std::int64_t>{a});
    CHECK(Must(f.store->BannedNodes(f.graph, unban_a - 1)) == std::vector<std::int64_t>{a, b});
    CHECK(Must(f.store->PinnedNodes(f.graph)) == std::vector<std::int64_t>{b});
    f.Act(HumanActionKind::kUnpin, b, "");
    CHECK(Must(f.store->PinnedNodes(f.graph)).empty());
    f.Act(HumanActionKind::kBan, a, "");
    CHECK(Must(f.store->BannedNodes(f.graph)) == std::vector<std::int64_t>{a, b});
    CHECK(Must(f.store->HumanActions(f.graph, ban_a, unban_a)).size() == 3);
  }

  TEST_CASE("the review queue: a jump past the speedup threshold or a high roofline fraction, until labelled") {
    HumanFixture f;
    f.Node("1", 1.0);
    f.Node("2", 2.0);
    const auto jump = f.Node("3", 11.0);   // 5.5x the previous best 2.0
    f.Node("4", 12.0);                     // not a jump over 11
    const auto close = f.Node("5", 12.5, 0.9);  // above the roofline threshold
    f.Node("6");                           // never measured
    auto queue = Must(f.store->ReviewQueue(f.graph, ReviewThresholds{}));
    REQUIRE(queue.size() == 2);
    CHECK(queue[0].node_id == jump);
    CHECK(queue[0].previous_best == doctest::Approx(2.0));
    CHECK(queue[0].reason == "5.5x the previous best 2.00x");
    CHECK(queue[1].node_id == close);
    CHECK(queue[1].reason == "roofline 90%");
    CHECK(Must(f.store->ReviewQueue(f.graph, ReviewThresholds{6.0, 0.95})).empty());
    f.Act(HumanActionKind::kLabel, jump, "clean");
    queue = Must(f.store->ReviewQueue(f.graph, ReviewThresholds{}));
    REQUIRE(queue.size() == 1);
    CHECK(queue[0].node_id == close);
  }

  TEST_CASE("review questions: opened open, answered once (the first answer wins), listed while open") {
    HumanFixture f;
    const auto seed = f.Node("1");
    const auto other_run = f.MakeRun();
    auto open = [&](std::int64_t run, const std::string& text) {
      ReviewQuestionRecord question;
      question.run_id = run;
      question.parent_id = seed;
      question.purpose = "mutate";
      question.mutation = "llm:m:unroll";
      question.text = text;
      return Must(f.store->OpenReviewQuestion(question));
    };
    const auto q1 = open(f.run, "void k() {}");
    const auto q2 = open(other_run, "void k2() {}");
    ReviewQuestionRecord got = Must(f.store->GetReviewQuestion(q1));
    CHECK(got.state == ReviewState::kOpen);
    CHECK(got.graph_id == f.graph);
    CHECK(got.text == "void k() {}");
    CHECK(got.created_at > 0);
    CHECK(got.answered_at == 0);
    CHECK(Must(f.store->OpenReviewQuestions()).size() == 2);
    REQUIRE(Must(f.store->OpenReviewQuestions(other_run)).size() == 1);
    CHECK(Must(f.store->OpenReviewQuestions(other_run))[0].id == q2);

    CHECK(Must(f.store->AnswerReviewQuestion(q1, ReviewState::kEdited, "void k() { /* mine */ }", "grace")));
    // The second desk's answer changes nothing.
    CHECK_FALSE(Must(f.store->AnswerReviewQuestion(q1, ReviewState::kAccepted, "", "ada")));
    CHECK_FALSE(Must(f.store->AnswerReviewQuestion(q1, ReviewState::kWithdrawn, "the run stopped", "kestrel")));
    got = Must(f.store->GetReviewQuestion(q1));
    CHECK(got.state == ReviewState::kEdited);
    CHECK(got.answer == "void k() { /* mine */ }");
    CHECK(got.author == "grace");
    CHECK(got.answered_at > 0);
    REQUIRE(Must(f.store->OpenReviewQuestions()).size() == 1);

    // The data version moves with each question and answer (the live page polls it).
    const DataVersion before = Must(f.store->ReadDataVersion());
    CHECK(before.review_opened == q2);
    CHECK(before.review_answered == 1);
    CHECK(Must(f.store->AnswerReviewQuestion(q2, ReviewState::kRejected, "no", "grace")));
    CHECK(Must(f.store->ReadDataVersion()).review_answered == 2);
    CHECK(Must(f.store->OpenReviewQuestions()).empty());
  }

  TEST_CASE("bad review questions and answers are refused") {
    HumanFixture f;
    const auto seed = f.Node("1");
    ReviewQuestionRecord question;
    question.run_id = 9999;
    question.parent_id = seed;
    CHECK(f.store->OpenReviewQuestion(question).error().code() == ErrorCode::kNotFound);
    question.run_id = f.run;
    question.parent_id = 9999;
    CHECK(f.store->OpenReviewQuestion(question).error().code() == ErrorCode::kNotFound);
    question.parent_id = seed;
    const auto id = Must(f.store->OpenReviewQuestion(question));
    CHECK(f.store->AnswerReviewQuestion(9999, ReviewState::kAccepted, "", "ada").error().code() == ErrorCode::kNotFound);
    CHECK(f.store->AnswerReviewQuestion(id, ReviewState::kOpen, "", "ada").error().IsInvalidArgument());
    CHECK(f.store->AnswerReviewQuestion(id, ReviewState::kAccepted, "", "").error().IsInvalidArgument());
    CHECK(f.store->AnswerReviewQuestion(id, ReviewState::kEdited, "", "ada").error().IsInvalidArgument());
    CHECK(Must(f.store->GetReviewQuestion(id)).state == ReviewState::kOpen);
    CHECK(f.store->GetReviewQuestion(9999).error().code() == ErrorCode::kNotFound);
  }
}

}  // namespace
}  // namespace kestrel
