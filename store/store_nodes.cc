// Store: nodes, edges, measurements and the Best() query.
#include <algorithm>
#include <set>
#include <unordered_map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/huge_pages.h"
#include "core/json_text.h"
#include "store/codec.h"
#include "store/store.h"
#include "store/store_impl.h"

namespace kestrel {
namespace {

constexpr std::string_view kNodeColumns =
    "n.id, n.graph_id, n.run_id, n.identity, n.source_hash, n.knobs_json, n.toolchain, n.flags_json, n.mutation, "
    "n.status, n.reason, n.log, n.speedup, n.created_at, n.updated_at, n.expansions";

constexpr std::string_view kInsertEdge = R"sql(
  INSERT INTO edges (parent_id, child_id, kind, run_id, mutation, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
  ON CONFLICT (parent_id, child_id, kind) DO NOTHING)sql";

std::int64_t OrNow(std::int64_t millis) { return millis != 0 ? millis : NowMillis(); }

// A row of kNodeColumns (source text not included).
Result<NodeRecord> ReadNode(const store::Statement& row) {
  NodeRecord node;
  node.id = row.Int(0);
  node.graph_id = row.Int(1);
  node.run_id = row.Int(2);
  node.identity = row.Text(3);
  node.source_hash = row.Text(4);
  auto knobs = store::DecodeKnobs(row.Text(5), "nodes.knobs_json");
  if (!knobs) return Fail(knobs.error());
  node.knobs = std::move(*knobs);
  node.toolchain = row.Text(6);
  auto flags = store::DecodeStrings(row.Text(7), "nodes.flags_json");
  if (!flags) return Fail(flags.error());
  node.flags = std::move(*flags);
  node.mutation = row.Text(8);
  const std::string status = row.Text(9);
  auto parsed = ParseNodeStatus(status);
  if (!parsed) return Fail(Error::Corruption("DB: node " + std::to_string(node.id) + " has unknown status '" + status + "'"));
  node.status = *parsed;
  node.reason = row.Text(10);
  node.log = row.Text(11);
  node.speedup = row.OptionalDouble(12);
  node.created_at = row.Int(13);
  node.updated_at = row.Int(14);
  node.expansions = row.Int(15);
  return node;
}

Status BindEdge(store::Statement& insert, const EdgeRecord& edge, std::int64_t child) {
  insert.Bind(1, edge.parent).Bind(2, child).Bind(3, std::string(ToString(edge.kind))).BindId(4, edge.run_id).Bind(5, edge.mutation);
  insert.Bind(6, OrNow(edge.created_at));
  return insert.Run();
}

constexpr std::string_view kSelectShapes = R"sql(
  SELECT shape_json, candidate_samples_json, reference_samples_json,
         candidate_median, candidate_p10, candidate_p90, candidate_spread, candidate_count,
         reference_median, reference_p10, reference_p90, reference_spread, reference_count,
         speedup, gflops, gbps, roofline_fraction
  FROM measurement_shapes WHERE measurement_id = ?1 ORDER BY shape_index)sql";

// Appends the per-shape rows of measurement `id` to `measurement`, with
// `select` prepared from kSelectShapes.
Status ReadShapes(store::Statement& select, std::int64_t id, Measurement& measurement) {
  select.Reset();
  select.Bind(1, id);
  for (;;) {
    auto row = select.Step();
    if (!row) return Fail(row.error());
    if (!*row) return {};
    const store::Statement& r = select;
    ShapeTiming timing;
    auto shape = store::DecodeShape(r.Text(0), "measurement_shapes.shape_json");
    if (!shape) return Fail(shape.error());
    timing.shape = std::move(*shape);
    auto candidate = store::DecodeSamples(r.Text(1), "measurement_shapes.candidate_samples_json");
    if (!candidate) return Fail(candidate.error());
    timing.candidate_seconds = std::move(*candidate);
    auto reference = store::DecodeSamples(r.Text(2), "measurement_shapes.reference_samples_json");
    if (!reference) return Fail(reference.error());
    timing.reference_seconds = std::move(*reference);
    timing.candidate = {r.Double(3), r.Double(4), r.Double(5), r.Double(6), static_cast<int>(r.Int(7))};
    timing.reference = {r.Double(8), r.Double(9), r.Double(10), r.Double(11), static_cast<int>(r.Int(12))};
    timing.speedup = r.Double(13);
    timing.gflops = r.Double(14);
    timing.gbps = r.Double(15);
    timing.roofline_fraction = r.Double(16);
    measurement.shapes.push_back(std::move(timing));
  }
}

}  // namespace

// --- nodes and edges ---------------------------------------------------------------

Result<std::int64_t> Store::AddNode(const NodeRecord& node, const std::optional<EdgeRecord>& parent_edge) {
  constexpr std::string_view kOp = "AddNode";
  if (node.identity.empty()) return Fail(Error::InvalidArgument("DB: AddNode: the node has no identity"));
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  // A node may name an already stored source by hash alone.
  Result<std::string> hash = node.source_hash;
  if (!node.source.empty() || node.source_hash.empty()) hash = impl_->PutSourceInTransaction(node.source);
  if (!hash) return Fail(hash.error());
  {
    auto insert = impl_->Prepare(kOp, R"sql(
      INSERT INTO nodes (graph_id, run_id, identity, source_hash, knobs_json, toolchain, flags_json, mutation,
                         status, reason, log, speedup, created_at, updated_at)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13))sql");
    if (!insert) return Fail(insert.error());
    store::Statement& s = **insert;
    s.Bind(1, node.graph_id).BindId(2, node.run_id).Bind(3, node.identity).Bind(4, *hash);
    s.Bind(5, store::EncodeKnobs(node.knobs)).Bind(6, node.toolchain).Bind(7, store::EncodeStrings(node.flags));
    s.Bind(8, node.mutation).Bind(9, ToString(node.status)).Bind(10, node.reason).Bind(11, node.log);
    s.Bind(12, node.speedup).Bind(13, OrNow(node.created_at));
    if (auto done = s.Run(); !done) {
      if (done.error().IsInvalidArgument()) {
        return Fail(Error::InvalidArgument("DB: AddNode: a node with identity " + node.identity +
                                           " is already in graph " + std::to_string(node.graph_id)));
      }
      return Fail(done.error());
    }
  }
  const std::int64_t id = impl_->LastInsertId();
  if (parent_edge) {
    auto insert = impl_->Prepare(kOp, kInsertEdge);
    if (!insert) return Fail(insert.error());
    if (auto done = BindEdge(**insert, *parent_edge, id); !done) return Fail(done.error());
  }
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return id;
}

Status Store::AddEdge(const EdgeRecord& edge) {
  constexpr std::string_view kOp = "AddEdge";
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  auto insert = impl_->Prepare(kOp, kInsertEdge);
  if (!insert) return Fail(insert.error());
  if (auto done = BindEdge(**insert, edge, edge.child); !done) return done;
  return transaction->Commit();
}

Status Store::RecordDuplicate(const EdgeRecord& edge) {
  constexpr std::string_view kOp = "RecordDuplicate";
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  if (edge.parent != edge.child) {
    auto insert = impl_->Prepare(kOp, kInsertEdge);
    if (!insert) return Fail(insert.error());
    EdgeRecord duplicate = edge;
    duplicate.kind = EdgeKind::kDuplicate;
    if (auto done = BindEdge(**insert, duplicate, edge.child); !done) return done;
  }
  auto event = impl_->Prepare(kOp, "INSERT INTO run_events (run_id, at, kind, detail_json) VALUES (?1, ?2, ?3, ?4)");
  if (!event) return Fail(event.error());
  const std::string detail =
      JsonText(nlohmann::json{{"parent", edge.parent}, {"node", edge.child}, {"mutation", edge.mutation}});
  (*event)->BindId(1, edge.run_id).Bind(2, OrNow(edge.created_at)).Bind(3, std::string("duplicate")).Bind(4, detail);
  if (auto done = (*event)->Run(); !done) return done;
  return transaction->Commit();
}

Status Store::AddExpansion(std::int64_t node_id) {
  constexpr std::string_view kOp = "AddExpansion";
  auto update = impl_->Prepare(kOp, "UPDATE nodes SET expansions = expansions + 1 WHERE id = ?1");
  if (!update) return Fail(update.error());
  (*update)->Bind(1, node_id);
  if (auto done = (*update)->Run(); !done) return done;
  if (impl_->Changes() == 0) return Fail(Error::NotFound("DB: AddExpansion: no node " + std::to_string(node_id)));
  return {};
}

Result<std::optional<std::int64_t>> Store::FindNode(std::int64_t graph_id, const std::string& identity) {
  auto select = impl_->Prepare("FindNode", "SELECT id FROM nodes WHERE graph_id = ?1 AND identity = ?2");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, graph_id).Bind(2, identity);
  auto row = (*select)->Step();
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>((*select)->Int(0));
}

Status Store::SetNodeStatus(std::int64_t node_id, NodeStatus status, const std::string& reason,
                            const std::string& log) {
  constexpr std::string_view kOp = "SetNodeStatus";
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  auto update = impl_->Prepare(kOp, "UPDATE nodes SET status = ?2, reason = ?3, log = ?4, updated_at = ?5 WHERE id = ?1");
  if (!update) return Fail(update.error());
  (*update)->Bind(1, node_id).Bind(2, ToString(status)).Bind(3, reason).Bind(4, log).Bind(5, NowMillis());
  if (auto done = (*update)->Run(); !done) return done;
  if (impl_->Changes() == 0) return Fail(Error::NotFound("DB: SetNodeStatus: no node " + std::to_string(node_id)));
  return transaction->Commit();
}

// --- measurements ---------------------------------------------------------------------

namespace store {

Result<std::int64_t> InsertMeasurement(Store::Impl& impl, std::string_view kOp, std::int64_t node_id,
                                       std::int64_t run_id, std::int64_t host_id, const Measurement& measurement,
                                       std::string_view purpose, std::int64_t now) {
  {
    auto insert = impl.Prepare(kOp, R"sql(
      INSERT INTO measurements (node_id, run_id, host_id, outcome, reason, log, speedup, build_seconds, eval_seconds,
                                input_sets, seed, mismatches_json, created_at, roofline_fraction, purpose,
                                baseline_speedup)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16))sql");
    if (!insert) return Fail(insert.error());
    store::Statement& s = **insert;
    s.Bind(1, node_id).BindId(2, run_id).BindId(3, host_id).Bind(4, ToString(measurement.outcome));
    s.Bind(5, measurement.reason).Bind(6, measurement.log).Bind(7, measurement.speedup);
    s.Bind(8, measurement.build_seconds).Bind(9, measurement.eval_seconds).Bind(10, measurement.input_sets);
    // The seed's 64 bits are kept as SQLite's signed 64-bit integer.
    s.Bind(11, static_cast<std::int64_t>(measurement.seed)).Bind(12, store::EncodeMismatches(measurement.mismatches));
    s.Bind(13, now).Bind(14, measurement.roofline_fraction).Bind(15, std::string(purpose));
    s.Bind(16, measurement.baseline_speedup);
    if (auto done = s.Run(); !done) return Fail(done.error());
  }
  const std::int64_t id = impl.LastInsertId();
  auto insert = impl.Prepare(kOp, R"sql(
    INSERT INTO measurement_shapes (measurement_id, shape_index, shape_json, candidate_samples_json,
        reference_samples_json, candidate_median, candidate_p10, candidate_p90, candidate_spread, candidate_count,
        reference_median, reference_p10, reference_p90, reference_spread, reference_count, speedup, gflops, gbps,
        roofline_fraction)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19))sql");
  if (!insert) return Fail(insert.error());
  for (std::size_t index = 0; index < measurement.shapes.size(); ++index) {
    const ShapeTiming& shape = measurement.shapes[index];
    store::Statement& s = **insert;
    s.Reset();
    s.Bind(1, id).Bind(2, static_cast<std::int64_t>(index)).Bind(3, store::EncodeShape(shape.shape));
    s.Bind(4, store::EncodeSamples(shape.candidate_seconds)).Bind(5, store::EncodeSamples(shape.reference_seconds));
    s.Bind(6, shape.candidate.median).Bind(7, shape.candidate.p10).Bind(8, shape.candidate.p90);
    s.Bind(9, shape.candidate.spread).Bind(10, shape.candidate.count);
    s.Bind(11, shape.reference.median).Bind(12, shape.reference.p10).Bind(13, shape.reference.p90);
    s.Bind(14, shape.reference.spread).Bind(15, shape.reference.count);
    s.Bind(16, shape.speedup).Bind(17, shape.gflops).Bind(18, shape.gbps).Bind(19, shape.roofline_fraction);
    if (auto done = s.Run(); !done) return Fail(done.error());
  }
  return id;
}

Status UpdateNodeResult(Store::Impl& impl, std::string_view kOp, std::int64_t node_id,
                        const Measurement& measurement, std::int64_t now) {
  const bool measured = measurement.outcome == Outcome::kMeasured;
  auto update = impl.Prepare(kOp, R"sql(
    UPDATE nodes SET status = ?2, reason = ?3, log = ?4, speedup = CASE WHEN ?5 THEN ?6 ELSE speedup END,
                     updated_at = ?7
    WHERE id = ?1)sql");
  if (!update) return Fail(update.error());
  (*update)->Bind(1, node_id).Bind(2, ToString(StatusOf(measurement.outcome))).Bind(3, measurement.reason);
  (*update)->Bind(4, measurement.log).Bind(5, measured ? 1 : 0).Bind(6, measurement.speedup).Bind(7, now);
  if (auto done = (*update)->Run(); !done) return done;
  if (impl.Changes() == 0) return Fail(Error::NotFound("DB: " + std::string(kOp) + ": no node " + std::to_string(node_id)));
  return {};
}

}  // namespace store

Result<std::int64_t> Store::RecordMeasurement(std::int64_t node_id, std::int64_t run_id, std::int64_t host_id,
                                              const Measurement& measurement, const std::string& purpose) {
  constexpr std::string_view kOp = "RecordMeasurement";
  const std::int64_t now = NowMillis();
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  auto id = store::InsertMeasurement(*impl_, kOp, node_id, run_id, host_id, measurement, purpose, now);
  if (!id) return Fail(id.error());
  if (auto done = store::UpdateNodeResult(*impl_, kOp, node_id, measurement, now); !done) return Fail(done.error());
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return id;
}

Result<std::map<std::int64_t, double>> Store::RecordConfirmation(
    std::int64_t run_id, std::int64_t host_id, const std::vector<ConfirmationRecord>& confirmations,
    const std::vector<std::pair<std::int64_t, Measurement>>& measurements) {
  constexpr std::string_view kOp = "RecordConfirmation";
  const std::int64_t now = NowMillis();
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  std::set<std::int64_t> nodes;
  for (const auto& [node_id, measurement] : measurements) {
    auto id = store::InsertMeasurement(*impl_, kOp, node_id, run_id, host_id, measurement, "confirm", now);
    if (!id) return Fail(id.error());
    nodes.insert(node_id);
  }
  auto insert = impl_->Prepare(kOp, R"sql(
    INSERT INTO confirmations (run_id, host_id, node_id, against_id, verdict, node_median, against_median, noise,
                               samples, created_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10))sql");
  if (!insert) return Fail(insert.error());
  for (const ConfirmationRecord& c : confirmations) {
    store::Statement& s = **insert;
    s.Reset();
    s.BindId(1, c.run_id).BindId(2, c.host_id).Bind(3, c.node_id).BindId(4, c.against_id).Bind(5, ToString(c.verdict));
    s.Bind(6, c.node_median).Bind(7, c.against_median).Bind(8, c.noise).Bind(9, static_cast<std::int64_t>(c.samples));
    s.Bind(10, now);
    if (auto done = s.Run(); !done) return Fail(done.error());
  }
  // Each re-measured node's speedup becomes the median of all its measured results.
  std::map<std::int64_t, double> medians;
  auto select = impl_->Prepare(
      kOp, "SELECT speedup FROM measurements WHERE node_id = ?1 AND outcome = 'measured' ORDER BY speedup");
  if (!select) return Fail(select.error());
  auto update = impl_->Prepare(kOp, "UPDATE nodes SET speedup = ?2, updated_at = ?3 WHERE id = ?1");
  if (!update) return Fail(update.error());
  for (const std::int64_t node_id : nodes) {
    std::vector<double> speedups;
    (*select)->Reset();
    (*select)->Bind(1, node_id);
    for (;;) {
      auto row = (*select)->Step();
      if (!row) return Fail(row.error());
      if (!*row) break;
      speedups.push_back((*select)->Double(0));
    }
    if (speedups.empty()) continue;
    const std::size_t n = speedups.size();
    const double median = n % 2 == 1 ? speedups[n / 2] : (speedups[n / 2 - 1] + speedups[n / 2]) / 2.0;
    (*update)->Reset();
    (*update)->Bind(1, node_id).Bind(2, median).Bind(3, now);
    if (auto done = (*update)->Run(); !done) return Fail(done.error());
    if (impl_->Changes() == 0) return Fail(Error::NotFound("DB: RecordConfirmation: no node " + std::to_string(node_id)));
    medians[node_id] = median;
  }
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return medians;
}

Result<std::vector<MeasurementRecord>> Store::GetMeasurements(std::int64_t node_id) {
  constexpr std::string_view kOp = "GetMeasurements";
  auto transaction = impl_->BeginRead(kOp);  // one snapshot for the rows and their shapes
  if (!transaction) return Fail(transaction.error());
  std::vector<MeasurementRecord> records;
  {
    auto select = impl_->Prepare(kOp, R"sql(
      SELECT id, node_id, run_id, host_id, outcome, reason, log, speedup, build_seconds, eval_seconds, input_sets,
             seed, mismatches_json, created_at, roofline_fraction, purpose, baseline_speedup
      FROM measurements WHERE node_id = ?1 ORDER BY id)sql");
    if (!select) return Fail(select.error());
    (*select)->Bind(1, node_id);
    for (;;) {
      auto row = (*select)->Step();
      if (!row) return Fail(row.error());
      if (!*row) break;
      const store::Statement& r = **select;
      MeasurementRecord record;
      record.id = r.Int(0);
      record.node_id = r.Int(1);
      record.run_id = r.Int(2);
      record.host_id = r.Int(3);
      Measurement& m = record.measurement;
      const std::string outcome = r.Text(4);
      auto parsed = ParseOutcome(outcome);
      if (!parsed) return Fail(Error::Corruption("DB: measurement " + std::to_string(record.id) + " has unknown outcome '" + outcome + "'"));
      m.outcome = *parsed;
      m.reason = r.Text(5);
      m.log = r.Text(6);
      m.speedup = r.Double(7);
      m.build_seconds = r.Double(8);
      m.eval_seconds = r.Double(9);
      m.input_sets = static_cast<int>(r.Int(10));
      m.seed = static_cast<std::uint64_t>(r.Int(11));
      auto mismatches = store::DecodeMismatches(r.Text(12), "measurements.mismatches_json");
      if (!mismatches) return Fail(mismatches.error());
      m.mismatches = std::move(*mismatches);
      record.created_at = r.Int(13);
      m.roofline_fraction = r.Double(14);
      record.purpose = r.Text(15);
      m.baseline_speedup = r.Double(16);
      records.push_back(std::move(record));
    }
  }
  auto shapes = impl_->Prepare(kOp, kSelectShapes);
  if (!shapes) return Fail(shapes.error());
  for (auto& record : records) {
    if (auto read = ReadShapes(**shapes, record.id, record.measurement); !read) return Fail(read.error());
  }
  return records;
}

// --- reading nodes -----------------------------------------------------------------------

Result<NodeRecord> Store::GetNode(std::int64_t node_id) {
  auto select = impl_->Prepare("GetNode", "SELECT " + std::string(kNodeColumns) +
                                              ", s.text FROM nodes n JOIN sources s ON s.hash = n.source_hash "
                                              "WHERE n.id = ?1");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, node_id);
  auto row = (*select)->Step();
  if (!row) return Fail(row.error());
  if (!*row) return Fail(Error::NotFound("DB: no node " + std::to_string(node_id)));
  auto node = ReadNode(**select);
  if (node) node->source = (*select)->Text(16);
  return node;
}

Result<std::vector<NodeRecord>> Store::LoadNodes(std::int64_t graph_id) {
  auto select = impl_->Prepare("LoadNodes",
                               "SELECT " + std::string(kNodeColumns) + " FROM nodes n WHERE n.graph_id = ?1 ORDER BY n.id");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, graph_id);
  std::vector<NodeRecord> nodes;
  for (;;) {
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return nodes;
    auto node = ReadNode(**select);
    if (!node) return Fail(node.error());
    nodes.push_back(std::move(*node));
  }
}

Result<std::vector<EdgeRecord>> Store::LoadEdges(std::int64_t graph_id) {
  auto select = impl_->Prepare("LoadEdges", R"sql(
    SELECT e.parent_id, e.child_id, e.kind, e.run_id, e.mutation, e.created_at
    FROM edges e JOIN nodes c ON c.id = e.child_id WHERE c.graph_id = ?1 ORDER BY e.id)sql");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, graph_id);
  std::vector<EdgeRecord> edges;
  for (;;) {
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return edges;
    const store::Statement& r = **select;
    const std::string kind = r.Text(2);
    const auto parsed = ParseEdgeKind(kind);
    if (!parsed) {
      return Fail(Error::Corruption("DB: the edge " + std::to_string(r.Int(0)) + " -> " + std::to_string(r.Int(1)) +
                                    " has unknown kind '" + kind + "'"));
    }
    edges.push_back({r.Int(0), r.Int(1), *parsed, r.Int(3), r.Text(4), r.Int(5)});
  }
}

Result<GraphBrief> Store::LoadGraphBrief(std::int64_t graph_id, const NodesRead& on_nodes) {
  GraphBrief brief;
  std::unordered_map<std::string, std::uint32_t> source_index;
  // Room for the id range's nodes (a bound on their count; the memory past
  // the count is never touched): two index probes, where a count(*) would
  // read a million index entries and the vector's regrowth would copy them.
  auto range = impl_->Prepare("LoadGraphBriefRange", R"sql(
    SELECT (SELECT min(id) FROM nodes WHERE graph_id = ?1), (SELECT max(id) FROM nodes WHERE graph_id = ?1))sql");
  if (!range) return Fail(range.error());
  (*range)->Bind(1, graph_id);
  if (auto row = (*range)->Step(); !row) return Fail(row.error());
  const std::size_t span = static_cast<std::size_t>(std::max<std::int64_t>(0, (*range)->Int(1) - (*range)->Int(0) + 1));
  (*range)->Reset();
  constexpr std::size_t kRun = 16384;  // nodes handed to on_nodes at a time
  ReserveHuge(brief.nodes, on_nodes ? kRun : span);
  auto nodes = impl_->Prepare("LoadGraphBrief", R"sql(
    SELECT n.id, n.run_id, n.status, n.speedup, n.expansions, n.source_hash, n.knobs_json
    FROM nodes n WHERE n.graph_id = ?1 ORDER BY n.id)sql");
  if (!nodes) return Fail(nodes.error());
  (*nodes)->Bind(1, graph_id);
  const auto hand = [&] {
    if (!on_nodes || brief.nodes.empty()) return;
    on_nodes(brief, span);
    brief.nodes.clear();  // the buffers keep their room for the next run
    brief.knobs_text.clear();
  };
  // The graph's ids (a bit each, from the first), for the edges below.
  std::int64_t first = 0, last = 0;
  std::size_t count = 0;
  std::vector<bool> mine;
  mine.reserve(span);
  std::uint32_t previous = 0;  // the source of the row before
  for (;;) {
    auto row = (*nodes)->Step();
    if (!row) return Fail(row.error());
    if (!*row) break;
    if (brief.nodes.size() == kRun) hand();
    const store::Statement& r = **nodes;
    NodeBrief& node = brief.nodes.emplace_back();
    node.id = r.Int(0);
    if (count++ == 0) first = node.id;
    last = node.id;
    const auto bit = static_cast<std::size_t>(node.id - first);
    if (bit >= mine.size()) mine.resize(std::max(bit + 1, 2 * mine.size()));
    mine[bit] = true;
    node.run_id = r.Int(1);
    const auto status = ParseNodeStatus(r.TextView(2));
    if (!status) {
      return Fail(Error::Corruption("DB: node " + std::to_string(node.id) + " has unknown status '" + r.Text(2) + "'"));
    }
    node.status = *status;
    node.speedup = r.OptionalDouble(3);
    node.expansions = r.Int(4);
    // Knob variants share their source: most rows name the previous row's.
    const std::string_view hash = r.TextView(5);
    if (!brief.source_hashes.empty() && brief.source_hashes[previous] == hash) {
      node.source = previous;
    } else {
      const auto [known, added] =
          source_index.try_emplace(std::string(hash), static_cast<std::uint32_t>(brief.source_hashes.size()));
      if (added) brief.source_hashes.emplace_back(hash);
      node.source = known->second;
    }
    previous = node.source;
    const std::string_view knobs = r.TextView(6);
    if (count == 1) {  // room for the knobs of a run, or of all (a guess)
      ReserveHuge(brief.knobs_text, (on_nodes ? kRun : span) * (knobs.size() + knobs.size() / 4));
    }
    node.knobs_at = brief.knobs_text.size();
    node.knobs_size = knobs.size();
    brief.knobs_text.append(knobs);
  }
  hand();
  if (count == 0) return brief;
  // The edges table has no graph column: scan it in creation order over the
  // graph's id range (no index: a sort of every edge would cost more), and
  // keep the edges whose child is one of the graph's nodes.
  auto edges = impl_->Prepare("LoadGraphBriefEdges", R"sql(
    SELECT e.parent_id, e.child_id, e.kind FROM edges e WHERE +e.child_id BETWEEN ?1 AND ?2 ORDER BY e.id)sql");
  if (!edges) return Fail(edges.error());
  (*edges)->Bind(1, first).Bind(2, last);
  // A bit per id of the range (`mine`): the graph's own (a search per edge
  // costs more than the scan at a million edges).
  const auto in_graph = [&](std::int64_t id) {
    return id >= first && id - first < static_cast<std::int64_t>(mine.size()) &&
           mine[static_cast<std::size_t>(id - first)];
  };
  ReserveHuge(brief.edges, count);  // a node has one parent, mostly
  for (;;) {
    auto row = (*edges)->Step();
    if (!row) return Fail(row.error());
    if (!*row) break;
    const store::Statement& r = **edges;
    const std::int64_t child = r.Int(1);
    if (!in_graph(child)) continue;
    const auto kind = ParseEdgeKind(r.TextView(2));
    if (!kind) {
      return Fail(Error::Corruption("DB: the edge " + std::to_string(r.Int(0)) + " -> " + std::to_string(child) +
                                    " has unknown kind '" + r.Text(2) + "'"));
    }
    brief.edges.push_back({r.Int(0), child, *kind});
  }
  return brief;
}

// --- queries ---------------------------------------------------------------------------------

Result<std::vector<BestRow>> Store::Best(const BestQuery& query) {
  // For each node, the median of its measured speedups among the
  // measurements that pass the filters (the lower middle one's measurement is
  // the row's: its roofline, its time), their count and spread; the top nodes
  // ranked by it; only then the wide columns of those few nodes.
  auto select = impl_->Prepare("Best", R"sql(
    WITH passing AS (
      SELECT m.node_id, m.id AS measurement_id, m.run_id, m.host_id, m.speedup, m.created_at, m.roofline_fraction,
             m.baseline_speedup,
             row_number() OVER (PARTITION BY m.node_id ORDER BY m.speedup, m.id) AS k,
             count(*) OVER (PARTITION BY m.node_id) AS n,
             min(m.speedup) OVER (PARTITION BY m.node_id) AS lo,
             max(m.speedup) OVER (PARTITION BY m.node_id) AS hi
      FROM measurements m
      JOIN nodes n ON n.id = m.node_id
      JOIN graphs g ON g.id = n.graph_id
      JOIN tasks t ON t.id = g.task_id
      WHERE m.outcome = 'measured' AND m.purpose <> 'same_code'
        AND n.status = 'measured'  -- not a node a later check found wrong (hidden shapes)
        AND (?1 IS NULL OR t.name = ?1)
        AND (?2 IS NULL OR n.run_id = ?2)  -- the run's own nodes, each over all its results (as `show`)
        AND (?3 IS NULL OR m.host_id IN (SELECT id FROM hosts WHERE name = ?3))),
    medians AS (
      SELECT node_id, avg(speedup) AS median, max(n) AS n, max(lo) AS lo, max(hi) AS hi,
             min(CASE WHEN k = (n + 1) / 2 THEN measurement_id END) AS measurement_id
      FROM passing WHERE k IN ((n + 1) / 2, (n + 2) / 2) GROUP BY node_id),
    top AS (SELECT * FROM medians ORDER BY median DESC, node_id LIMIT ?4)
    SELECT top.node_id, coalesce(n.run_id, 0), t.name, coalesce(h.name, ''), top.median, n.knobs_json, n.mutation,
           top.measurement_id, p.created_at, p.roofline_fraction, top.n,
           CASE WHEN top.median > 0 THEN (top.hi - top.lo) / top.median ELSE 0 END,
           coalesce((SELECT c.verdict FROM confirmations c WHERE c.node_id = top.node_id ORDER BY c.id DESC LIMIT 1), ''),
           p.baseline_speedup
    FROM top
    JOIN passing p ON p.measurement_id = top.measurement_id
    JOIN nodes n ON n.id = top.node_id
    JOIN graphs g ON g.id = n.graph_id
    JOIN tasks t ON t.id = g.task_id
    LEFT JOIN hosts h ON h.id = p.host_id
    ORDER BY top.median DESC, top.node_id)sql");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, query.task).Bind(2, query.run_id).Bind(3, query.host);
  (*select)->Bind(4, query.top > 0 ? static_cast<std::int64_t>(query.top) : std::int64_t{-1});
  std::vector<BestRow> rows;
  for (;;) {
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return rows;
    const store::Statement& r = **select;
    auto knobs = store::DecodeKnobs(r.Text(5), "nodes.knobs_json");
    if (!knobs) return Fail(knobs.error());
    std::optional<ConfirmationVerdict> confirmation;
    if (const std::string verdict = r.Text(12); !verdict.empty()) {
      confirmation = ParseConfirmationVerdict(verdict);
      if (!confirmation) return Fail(Error::Corruption("DB: the confirmation of node " + std::to_string(r.Int(0)) +
                                                  " has unknown verdict '" + verdict + "'"));
    }
    BestRow best{r.Int(0), r.Int(1), r.Text(2), r.Text(3), r.Double(4), std::move(*knobs), r.Text(6), r.Int(7),
                 r.Int(8), r.Double(9), static_cast<int>(r.Int(10)), r.Double(11), confirmation, r.Double(13)};
    rows.push_back(std::move(best));
  }
}

}  // namespace kestrel
