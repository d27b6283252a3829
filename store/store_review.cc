// Store: the review mode's questions (review_questions, schema v8). A run
// with --review opens one per LLM proposal or plan and waits; the terminal
// and the live page answer through AnswerReviewQuestion, whose update only
// takes an open question, so the first answer wins and the other desk sees it.
#include <string>

#include "store/store.h"
#include "store/store_impl.h"

namespace kestrel {
namespace {

constexpr std::string_view kQuestionColumns =
    "id, graph_id, run_id, parent_id, purpose, mutation, text, state, answer, author, created_at, "
    "coalesce(answered_at, 0)";

Result<std::vector<ReviewQuestionRecord>> ReadQuestions(store::Statement& s) {
  std::vector<ReviewQuestionRecord> questions;
  for (;;) {
    auto row = s.Step();
    if (!row) return Fail(row.error());
    if (!*row) return questions;
    ReviewQuestionRecord question;
    question.id = s.Int(0);
    question.graph_id = s.Int(1);
    question.run_id = s.Int(2);
    question.parent_id = s.Int(3);
    question.purpose = s.Text(4);
    question.mutation = s.Text(5);
    question.text = s.Text(6);
    const auto state = ParseReviewState(s.Text(7));
    if (!state) {
      return Fail(Error::Corruption("DB: review_questions row " + std::to_string(question.id) + ": unknown state '" +
                                    s.Text(7) + "'"));
    }
    question.state = *state;
    question.answer = s.Text(8);
    question.author = s.Text(9);
    question.created_at = s.Int(10);
    question.answered_at = s.Int(11);
    questions.push_back(std::move(question));
  }
}

}  // namespace

Result<std::int64_t> Store::OpenReviewQuestion(const ReviewQuestionRecord& question) {
  constexpr std::string_view kOp = "OpenReviewQuestion";
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  // The run names the graph; the parent must be one of its nodes.
  auto graphs = impl_->Prepare(kOp, R"sql(
    SELECT (SELECT graph_id FROM runs WHERE id = ?1), (SELECT graph_id FROM nodes WHERE id = ?2))sql");
  if (!graphs) return Fail(graphs.error());
  (*graphs)->Bind(1, question.run_id).Bind(2, question.parent_id);
  auto row = (*graphs)->Step();
  if (!row) return Fail(row.error());
  if ((*graphs)->IsNull(0)) return Fail(Error::NotFound("no run " + std::to_string(question.run_id)));
  if ((*graphs)->IsNull(1)) return Fail(Error::NotFound("no node " + std::to_string(question.parent_id)));
  const std::int64_t graph_id = (*graphs)->Int(0);
  if ((*graphs)->Int(1) != graph_id) {
    return Fail(Error::InvalidArgument("node " + std::to_string(question.parent_id) + " is not in run " +
                                       std::to_string(question.run_id) + "'s graph"));
  }
  auto insert = impl_->Prepare(kOp, R"sql(
    INSERT INTO review_questions (graph_id, run_id, parent_id, purpose, mutation, text, state, created_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'open', ?7))sql");
  if (!insert) return Fail(insert.error());
  store::Statement& s = **insert;
  s.Bind(1, graph_id).Bind(2, question.run_id).Bind(3, question.parent_id).Bind(4, question.purpose);
  s.Bind(5, question.mutation).Bind(6, question.text);
  s.Bind(7, question.created_at != 0 ? question.created_at : NowMillis());
  if (auto done = s.Run(); !done) return Fail(done.error());
  const std::int64_t id = impl_->LastInsertId();
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return id;
}

Result<ReviewQuestionRecord> Store::GetReviewQuestion(std::int64_t id) {
  auto select = impl_->Prepare("GetReviewQuestion",
                               "SELECT " + std::string(kQuestionColumns) + " FROM review_questions WHERE id = ?1");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, id);
  auto questions = ReadQuestions(**select);
  if (!questions) return Fail(questions.error());
  if (questions->empty()) return Fail(Error::NotFound("no review question " + std::to_string(id)));
  return std::move(questions->front());
}

Result<bool> Store::AnswerReviewQuestion(std::int64_t id, ReviewState state, const std::string& answer,
                                         const std::string& author) {
  constexpr std::string_view kOp = "AnswerReviewQuestion";
  if (state == ReviewState::kOpen) return Fail(Error::InvalidArgument("an answer is not 'open'"));
  if (author.empty()) return Fail(Error::InvalidArgument("an answer needs its author"));
  if (state == ReviewState::kEdited && answer.empty()) {
    return Fail(Error::InvalidArgument("an edit needs the edited version"));
  }
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  auto update = impl_->Prepare(kOp, R"sql(
    UPDATE review_questions SET state = ?2, answer = ?3, author = ?4, answered_at = ?5
    WHERE id = ?1 AND state = 'open')sql");
  if (!update) return Fail(update.error());
  (*update)->Bind(1, id).Bind(2, ToString(state)).Bind(3, answer).Bind(4, author).Bind(5, NowMillis());
  if (auto done = (*update)->Run(); !done) return Fail(done.error());
  const bool answered = impl_->Changes() == 1;
  if (!answered) {
    auto exists = impl_->Prepare(kOp, "SELECT 1 FROM review_questions WHERE id = ?1");
    if (!exists) return Fail(exists.error());
    (*exists)->Bind(1, id);
    auto row = (*exists)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Error::NotFound("no review question " + std::to_string(id)));
  }
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return answered;
}

Result<std::vector<ReviewQuestionRecord>> Store::OpenReviewQuestions(std::int64_t run_id) {
  auto select = impl_->Prepare("OpenReviewQuestions", "SELECT " + std::string(kQuestionColumns) + R"sql(
    FROM review_questions WHERE state = 'open' AND (?1 = 0 OR run_id = ?1) ORDER BY id)sql");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, run_id);
  return ReadQuestions(**select);
}

}  // namespace kestrel
