// Store: the reads of `kestrel report` and `kestrel serve` (report/): a
// graph's measurements and confirmations in time order, and the ids a live
// page polls.
#include "store/store.h"
#include "store/store_impl.h"

namespace kestrel {

Result<std::vector<MeasurementBrief>> Store::GraphMeasurements(std::int64_t graph_id, std::int64_t run_id) {
  constexpr std::string_view kOp = "GraphMeasurements";
  auto select = impl_->Prepare(kOp, R"sql(
    SELECT m.id, m.node_id, coalesce(m.run_id, 0), m.outcome, m.speedup, m.purpose, m.created_at
    FROM measurements m JOIN nodes n ON n.id = m.node_id
    WHERE n.graph_id = ?1 AND (?2 = 0 OR m.run_id = ?2) ORDER BY m.id)sql");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, graph_id).Bind(2, run_id);
  std::vector<MeasurementBrief> briefs;
  for (;;) {
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) break;
    const store::Statement& r = **select;
    MeasurementBrief brief;
    brief.id = r.Int(0);
    brief.node_id = r.Int(1);
    brief.run_id = r.Int(2);
    const std::string outcome = r.Text(3);
    auto parsed = ParseOutcome(outcome);
    if (!parsed) {
      return Fail(Error::Corruption("DB: measurement " + std::to_string(brief.id) + " has unknown outcome '" + outcome + "'"));
    }
    brief.outcome = *parsed;
    brief.speedup = r.Double(4);
    brief.purpose = r.Text(5);
    brief.created_at = r.Int(6);
    briefs.push_back(std::move(brief));
  }
  return briefs;
}

Result<std::vector<ConfirmationBrief>> Store::GraphConfirmations(std::int64_t graph_id, std::int64_t run_id) {
  constexpr std::string_view kOp = "GraphConfirmations";
  auto select = impl_->Prepare(kOp, R"sql(
    SELECT coalesce(c.run_id, 0), c.node_id, c.verdict, c.node_median, c.created_at, c.id
    FROM confirmations c JOIN nodes n ON n.id = c.node_id
    WHERE n.graph_id = ?1 AND (?2 = 0 OR c.run_id = ?2) ORDER BY c.id)sql");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, graph_id).Bind(2, run_id);
  std::vector<ConfirmationBrief> briefs;
  for (;;) {
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) break;
    const store::Statement& r = **select;
    ConfirmationBrief brief;
    brief.run_id = r.Int(0);
    brief.node_id = r.Int(1);
    const std::string verdict = r.Text(2);
    auto parsed = ParseConfirmationVerdict(verdict);
    if (!parsed) {
      return Fail(Error::Corruption("DB: confirmation " + std::to_string(r.Int(5)) + " has unknown verdict '" + verdict + "'"));
    }
    brief.verdict = *parsed;
    brief.node_median = r.Double(3);
    brief.created_at = r.Int(4);
    briefs.push_back(brief);
  }
  return briefs;
}

Result<DataVersion> Store::ReadDataVersion() {
  auto select = impl_->Prepare("ReadDataVersion", R"sql(
    SELECT (SELECT coalesce(max(id), 0) FROM measurements), (SELECT coalesce(max(id), 0) FROM run_events),
           (SELECT coalesce(max(id), 0) FROM nodes), (SELECT coalesce(max(id), 0) FROM human_actions),
           (SELECT coalesce(max(id), 0) FROM review_questions),
           (SELECT count(*) FROM review_questions WHERE state != 'open'))sql");
  if (!select) return Fail(select.error());
  auto row = (*select)->Step();
  if (!row) return Fail(row.error());
  DataVersion version;
  if (*row) {
    version.measurement = (*select)->Int(0);
    version.run_event = (*select)->Int(1);
    version.node = (*select)->Int(2);
    version.human_action = (*select)->Int(3);
    version.review_opened = (*select)->Int(4);
    version.review_answered = (*select)->Int(5);
  }
  return version;
}

}  // namespace kestrel
