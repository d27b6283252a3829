// Store: code fingerprints and the `same_code` edge (a node whose build is
// the same code as an already measured node's carries that node's result
// instead of being timed again).
#include "store/store.h"
#include "store/store_impl.h"

namespace kestrel {

Status Store::SetCodeHash(std::int64_t node_id, const std::string& code_hash) {
  constexpr std::string_view kOp = "SetCodeHash";
  auto update = impl_->Prepare(kOp, "UPDATE nodes SET code_hash = nullif(?2, '') WHERE id = ?1");
  if (!update) return Fail(update.error());
  (*update)->Bind(1, node_id).Bind(2, code_hash);
  if (auto done = (*update)->Run(); !done) return done;
  if (impl_->Changes() == 0) return Fail(Error::NotFound("DB: SetCodeHash: no node " + std::to_string(node_id)));
  return {};
}

Result<std::string> Store::CodeHash(std::int64_t node_id) {
  auto select = impl_->Prepare("CodeHash", "SELECT coalesce(code_hash, '') FROM nodes WHERE id = ?1");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, node_id);
  auto row = (*select)->Step();
  if (!row) return Fail(row.error());
  if (!*row) return Fail(Error::NotFound("DB: CodeHash: no node " + std::to_string(node_id)));
  return (*select)->Text(0);
}

Result<std::optional<std::int64_t>> Store::FindSameCode(std::int64_t graph_id, const std::string& code_hash,
                                                        std::int64_t host_id, std::int64_t node_id) {
  if (code_hash.empty()) return std::optional<std::int64_t>();
  auto select = impl_->Prepare("FindSameCode", R"sql(
    SELECT n.id FROM nodes n
    WHERE n.graph_id = ?1 AND n.code_hash = ?2 AND n.id <> ?4 AND n.status = 'measured'
      AND EXISTS (SELECT 1 FROM measurements m WHERE m.node_id = n.id AND m.host_id = ?3
                  AND m.purpose = 'search' AND m.outcome = 'measured')
    ORDER BY n.id LIMIT 1)sql");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, graph_id).Bind(2, code_hash).Bind(3, host_id).Bind(4, node_id);
  auto row = (*select)->Step();
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>((*select)->Int(0));
}

Result<std::int64_t> Store::RecordSameCode(std::int64_t node_id, std::int64_t twin_id, std::int64_t run_id,
                                           std::int64_t host_id, const Measurement& measurement) {
  constexpr std::string_view kOp = "RecordSameCode";
  const std::int64_t now = NowMillis();
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  auto id = store::InsertMeasurement(*impl_, kOp, node_id, run_id, host_id, measurement, "same_code", now);
  if (!id) return Fail(id.error());
  if (auto done = store::UpdateNodeResult(*impl_, kOp, node_id, measurement, now); !done) return Fail(done.error());
  if (auto done = AddEdge({node_id, twin_id, EdgeKind::kSameCode, run_id, "same code", now}); !done) {
    return Fail(done.error());
  }
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return id;
}

}  // namespace kestrel
