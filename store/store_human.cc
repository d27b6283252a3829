// Store: what people did to a graph (human_actions, schema v7) and the views
// a search and the commands read of it. Every view folds the actions in id
// order, so "as of action N" is a bound on the id: a resumed search that
// stored N sees exactly what it saw before.
#include <algorithm>
#include <cstdio>
#include <string>

#include "store/store.h"
#include "store/store_impl.h"

namespace kestrel {
namespace {

constexpr std::string_view kActionColumns =
    "id, graph_id, coalesce(node_id, 0), coalesce(run_id, 0), kind, text, author, created_at";

Result<std::vector<HumanActionRecord>> ReadActions(store::Statement& s) {
  std::vector<HumanActionRecord> actions;
  for (;;) {
    auto row = s.Step();
    if (!row) return Fail(row.error());
    if (!*row) return actions;
    HumanActionRecord action;
    action.id = s.Int(0);
    action.graph_id = s.Int(1);
    action.node_id = s.Int(2);
    action.run_id = s.Int(3);
    const auto kind = ParseHumanActionKind(s.Text(4));
    if (!kind) return Fail(Error::Corruption("DB: human_actions row " + std::to_string(action.id) + ": unknown kind '" + s.Text(4) + "'"));
    action.kind = *kind;
    action.text = s.Text(5);
    action.author = s.Text(6);
    action.created_at = s.Int(7);
    actions.push_back(std::move(action));
  }
}

// The graph that holds `table` row `id`; NotFound naming it when there is none.
Result<std::int64_t> GraphOf(Store::Impl& impl, std::string_view table, std::int64_t id) {
  const std::string sql = "SELECT graph_id FROM " + std::string(table) + " WHERE id = ?1";
  auto select = impl.Prepare("AddHumanAction", sql);
  if (!select) return Fail(select.error());
  (*select)->Bind(1, id);
  auto row = (*select)->Step();
  if (!row) return Fail(row.error());
  const std::string what = table == "nodes" ? "node" : "run";
  if (!*row) return Fail(Error::NotFound("no " + what + " " + std::to_string(id)));
  return (*select)->Int(0);
}

Result<std::vector<std::int64_t>> StandingNodes(Store::Impl& impl, std::string_view operation,
                                               std::string_view on, std::string_view off,
                                               std::int64_t graph_id, std::int64_t upto) {
  // SQLite takes a bare column (kind) from the row that gives the max().
  auto select = impl.Prepare(operation, R"sql(
    SELECT node_id FROM (
      SELECT node_id, kind, max(id) FROM human_actions
      WHERE graph_id = ?1 AND kind IN (?2, ?3) AND node_id IS NOT NULL AND (?4 = 0 OR id <= ?4)
      GROUP BY node_id)
    WHERE kind = ?2 ORDER BY node_id)sql");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, graph_id).Bind(2, on).Bind(3, off).Bind(4, upto);
  std::vector<std::int64_t> nodes;
  for (;;) {
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return nodes;
    nodes.push_back((*select)->Int(0));
  }
}

std::string SpeedupJump(double speedup, double best) {
  char text[96];
  std::snprintf(text, sizeof(text), "%.1fx the previous best %.2fx", speedup / best, best);
  return text;
}

}  // namespace

Result<std::int64_t> Store::AddHumanAction(const HumanActionRecord& action) {
  constexpr std::string_view kOp = "AddHumanAction";
  if (action.author.empty()) return Fail(Error::InvalidArgument("a person's action needs an author"));
  if (action.kind == HumanActionKind::kLabel && !IsLabelWord(action.text)) {
    return Fail(Error::InvalidArgument("'" + action.text + "' is not a label word"));
  }
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  for (const auto& [table, id] : {std::pair<std::string_view, std::int64_t>{"nodes", action.node_id},
                                  std::pair<std::string_view, std::int64_t>{"runs", action.run_id}}) {
    if (id == 0) continue;
    auto graph = GraphOf(*impl_, table, id);
    if (!graph) return Fail(graph.error());
    if (*graph != action.graph_id) {
      return Fail(Error::InvalidArgument(std::string(table == "nodes" ? "node " : "run ") + std::to_string(id) +
                                         " is not in graph " + std::to_string(action.graph_id)));
    }
  }
  auto insert = impl_->Prepare(kOp, R"sql(
    INSERT INTO human_actions (graph_id, node_id, run_id, kind, text, author, created_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7))sql");
  if (!insert) return Fail(insert.error());
  store::Statement& s = **insert;
  s.Bind(1, action.graph_id).BindId(2, action.node_id).BindId(3, action.run_id).Bind(4, ToString(action.kind));
  s.Bind(5, action.text).Bind(6, action.author).Bind(7, action.created_at != 0 ? action.created_at : NowMillis());
  if (auto done = s.Run(); !done) {
    if (done.error().message().find("FOREIGN KEY") != std::string::npos) {
      return Fail(Error::NotFound("no graph " + std::to_string(action.graph_id)));
    }
    return Fail(done.error());
  }
  const std::int64_t id = impl_->LastInsertId();
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return id;
}

Result<std::int64_t> Store::LatestHumanAction(std::int64_t graph_id) {
  auto select = impl_->Prepare("LatestHumanAction",
                               "SELECT coalesce(max(id), 0) FROM human_actions WHERE graph_id = ?1");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, graph_id);
  auto row = (*select)->Step();
  if (!row) return Fail(row.error());
  return *row ? (*select)->Int(0) : 0;
}

Result<std::vector<HumanActionRecord>> Store::HumanActions(std::int64_t graph_id, std::int64_t after,
                                                           std::int64_t upto) {
  auto select = impl_->Prepare("HumanActions", "SELECT " + std::string(kActionColumns) + R"sql(
    FROM human_actions WHERE graph_id = ?1 AND id > ?2 AND (?3 = 0 OR id <= ?3) ORDER BY id)sql");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, graph_id).Bind(2, after).Bind(3, upto);
  return ReadActions(**select);
}

Result<std::vector<HumanActionRecord>> Store::NodeActions(std::int64_t node_id) {
  auto select = impl_->Prepare("NodeActions", "SELECT " + std::string(kActionColumns) +
                                                  " FROM human_actions WHERE node_id = ?1 ORDER BY id");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, node_id);
  return ReadActions(**select);
}

Result<std::vector<HumanActionRecord>> Store::NodeNotes(std::int64_t node_id) {
  auto select = impl_->Prepare("NodeNotes", "SELECT " + std::string(kActionColumns) +
                                                " FROM human_actions WHERE node_id = ?1 AND kind = 'note' ORDER BY id");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, node_id);
  return ReadActions(**select);
}

Result<std::optional<HumanActionRecord>> Store::NodeLabel(std::int64_t node_id) {
  auto select = impl_->Prepare("NodeLabel", "SELECT " + std::string(kActionColumns) +
                                                " FROM human_actions WHERE node_id = ?1 AND kind = 'label'"
                                                " ORDER BY id DESC LIMIT 1");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, node_id);
  auto actions = ReadActions(**select);
  if (!actions) return Fail(actions.error());
  if (actions->empty()) return std::optional<HumanActionRecord>();
  return std::optional<HumanActionRecord>(std::move(actions->front()));
}

Result<std::vector<HumanActionRecord>> Store::StandingInstructions(std::int64_t run_id, std::int64_t upto) {
  auto select = impl_->Prepare("StandingInstructions", "SELECT " + std::string(kActionColumns) + R"sql(
    FROM human_actions
    WHERE run_id = ?1 AND kind = 'steer' AND (?2 = 0 OR id <= ?2)
      AND id > (SELECT coalesce(max(id), 0) FROM human_actions
                WHERE run_id = ?1 AND kind = 'unsteer' AND (?2 = 0 OR id <= ?2))
    ORDER BY id)sql");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, run_id).Bind(2, upto);
  return ReadActions(**select);
}

Result<std::vector<std::int64_t>> Store::BannedNodes(std::int64_t graph_id, std::int64_t upto) {
  return StandingNodes(*impl_, "BannedNodes", "ban", "unban", graph_id, upto);
}

Result<std::vector<std::int64_t>> Store::PinnedNodes(std::int64_t graph_id, std::int64_t upto) {
  return StandingNodes(*impl_, "PinnedNodes", "pin", "unpin", graph_id, upto);
}

Result<std::vector<ReviewItem>> Store::ReviewQueue(std::int64_t graph_id, const ReviewThresholds& thresholds) {
  // Each measured node in the order of its first timed result, with its
  // speedup (the median of its measured results, confirmation rounds
  // included) and its highest roofline fraction.
  auto select = impl_->Prepare("ReviewQueue", R"sql(
    SELECT n.id, n.speedup, first, roofline,
           EXISTS (SELECT 1 FROM human_actions a WHERE a.node_id = n.id AND a.kind = 'label')
    FROM (SELECT m.node_id, min(m.id) AS first, max(m.roofline_fraction) AS roofline
          FROM measurements m JOIN nodes k ON k.id = m.node_id
          WHERE k.graph_id = ?1 AND m.outcome = 'measured' AND m.purpose IN ('search', 'confirm')
          GROUP BY m.node_id) r
    JOIN nodes n ON n.id = r.node_id
    WHERE n.status = 'measured' AND n.speedup IS NOT NULL
    ORDER BY first)sql");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, graph_id);
  std::vector<ReviewItem> queue;
  double best = 0.0;
  for (;;) {
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return queue;
    const store::Statement& r = **select;
    ReviewItem item{r.Int(0), r.Double(1), best, r.Double(3), ""};
    const bool labelled = r.Int(4) != 0;
    if (best > 0.0 && item.speedup > thresholds.speedup * best) {
      item.reason = SpeedupJump(item.speedup, best);
    } else if (item.roofline_fraction > thresholds.roofline) {
      item.reason = "roofline " + std::to_string(static_cast<int>(item.roofline_fraction * 100 + 0.5)) + "%";
    }
    if (!item.reason.empty() && !labelled) queue.push_back(item);
    best = std::max(best, item.speedup);
  }
}

}  // namespace kestrel
