// Store: profiles of measured candidates (core/profile.h), per node and host.
#include "store/store.h"
#include "store/store_impl.h"

namespace kestrel {

Result<std::int64_t> Store::AddProfile(const ProfileRecord& profile) {
  constexpr std::string_view kOp = "AddProfile";
  auto insert = impl_->Prepare(kOp, R"sql(
    INSERT INTO profiles (node_id, host_id, run_id, profile_json, digest, seconds, created_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7))sql");
  if (!insert) return Fail(insert.error());
  store::Statement& s = **insert;
  s.Bind(1, profile.node_id).BindId(2, profile.host_id).BindId(3, profile.run_id).Bind(4, profile.profile_json);
  s.Bind(5, profile.digest).Bind(6, profile.seconds).Bind(7, profile.created_at != 0 ? profile.created_at : NowMillis());
  if (auto done = s.Run(); !done) return Fail(done.error());
  return impl_->LastInsertId();
}

Result<std::optional<ProfileRecord>> Store::LatestProfile(std::int64_t node_id, std::int64_t host_id) {
  auto select = impl_->Prepare("LatestProfile", R"sql(
    SELECT id, node_id, coalesce(host_id, 0), coalesce(run_id, 0), profile_json, digest, seconds, created_at
    FROM profiles WHERE node_id = ?1 AND (?2 = 0 OR host_id = ?2) ORDER BY id DESC LIMIT 1)sql");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, node_id).Bind(2, host_id);
  auto row = (*select)->Step();
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<ProfileRecord>();
  const store::Statement& r = **select;
  ProfileRecord record;
  record.id = r.Int(0);
  record.node_id = r.Int(1);
  record.host_id = r.Int(2);
  record.run_id = r.Int(3);
  record.profile_json = r.Text(4);
  record.digest = r.Text(5);
  record.seconds = r.Double(6);
  record.created_at = r.Int(7);
  return std::optional<ProfileRecord>(std::move(record));
}

}  // namespace kestrel
