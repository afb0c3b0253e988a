#include "lockservice/sqlite_lock_store.h"

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/test_hooks.h"

namespace fencegate::lockservice {
namespace {

constexpr char kSchema[] =
    "CREATE TABLE IF NOT EXISTS meta("
    "  key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS leases("
    "  resource TEXT PRIMARY KEY, holder TEXT NOT NULL,"
    "  token INTEGER NOT NULL, ttl_ms INTEGER NOT NULL,"
    "  hold_count INTEGER NOT NULL, request_ids TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS fence_positions("
    "  resource TEXT PRIMARY KEY, position INTEGER NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS waiters("
    "  seq INTEGER PRIMARY KEY, resource TEXT NOT NULL, holder TEXT NOT NULL,"
    "  ttl_ms INTEGER NOT NULL, request_id TEXT NOT NULL);";

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteLockStore>> SqliteLockStore::Open(
    const std::string& path) {
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  if (!db.ok()) return db.status();
  absl::Status status = (*db)->Exec(kSchema);
  if (!status.ok()) return status;
  absl::StatusOr<std::unique_ptr<SqliteDb>> reader = SqliteDb::Open(path);
  if (!reader.ok()) return reader.status();
  return std::unique_ptr<SqliteLockStore>(
      new SqliteLockStore(*std::move(db), *std::move(reader)));
}

absl::StatusOr<std::vector<FencePosition>> SqliteLockStore::ScanFencePositions(
    uint64_t after, size_t limit) {
  absl::MutexLock lock(&reader_mu_);
  absl::StatusOr<SqliteStatement*> scan = reader_->Prepared(
      "SELECT resource, position FROM fence_positions WHERE position > ?1 "
      "ORDER BY position LIMIT ?2");
  if (!scan.ok()) return scan.status();
  SqliteStatement& stmt = **scan;
  stmt.Bind(1, static_cast<int64_t>(after)).Bind(2, static_cast<int64_t>(limit));
  std::vector<FencePosition> positions;
  for (;;) {
    absl::StatusOr<bool> row = stmt.Step();
    if (!row.ok()) {
      stmt.Reset();
      return row.status();
    }
    if (!*row) break;
    positions.push_back(
        FencePosition{stmt.ColumnText(0), static_cast<uint64_t>(stmt.ColumnInt(1))});
  }
  stmt.Reset();
  return positions;
}

namespace {

// Collects what LoadInto() reads into a LockStoreState (Load()).
class StateSink final : public LoadSink {
 public:
  explicit StateSink(LockStoreState& state) : state_(state) {}
  void OnLastToken(uint64_t last_token) override { state_.last_token = last_token; }
  void ExpectLeases(size_t count) override { state_.leases.reserve(count); }
  void OnLease(LeaseRecord& lease) override { state_.leases.push_back(std::move(lease)); }
  void OnWaiter(WaiterRecord& waiter) override {
    state_.waiters.push_back(std::move(waiter));
  }

 private:
  LockStoreState& state_;
};

}  // namespace

absl::StatusOr<LockStoreState> SqliteLockStore::Load() {
  LockStoreState state;
  StateSink sink(state);
  absl::Status status = LoadInto(sink);
  if (!status.ok()) return status;
  return state;
}

absl::Status SqliteLockStore::LoadInto(LoadSink& sink) {
  absl::StatusOr<SqliteStatement*> meta =
      db_->Prepared("SELECT value FROM meta WHERE key = 'last_token'");
  if (!meta.ok()) return meta.status();
  absl::StatusOr<bool> row = (*meta)->Step();
  if (!row.ok()) return row.status();
  sink.OnLastToken(*row ? static_cast<uint64_t>((*meta)->ColumnInt(0)) : 0);
  (*meta)->Reset();

  absl::StatusOr<SqliteStatement*> count = db_->Prepared("SELECT count(*) FROM leases");
  if (!count.ok()) return count.status();
  row = (*count)->Step();
  if (!row.ok()) return row.status();
  if (*row) sink.ExpectLeases(static_cast<size_t>((*count)->ColumnInt(0)));
  (*count)->Reset();

  absl::StatusOr<SqliteStatement*> leases = db_->Prepared(
      "SELECT resource, holder, token, ttl_ms, hold_count, request_ids FROM leases");
  if (!leases.ok()) return leases.status();
  SqliteStatement& stmt = **leases;
  LeaseRecord lease;
  for (;;) {
    row = stmt.Step();
    if (!row.ok()) {
      stmt.Reset();
      return row.status();
    }
    if (!*row) break;
    lease.resource = stmt.ColumnText(0);
    lease.holder = stmt.ColumnText(1);
    lease.token = static_cast<uint64_t>(stmt.ColumnInt(2));
    lease.ttl = absl::Milliseconds(stmt.ColumnInt(3));
    lease.hold_count = static_cast<uint32_t>(stmt.ColumnInt(4));
    lease.request_ids.clear();
    const std::string ids = stmt.ColumnText(5);
    if (!ids.empty()) lease.request_ids = absl::StrSplit(ids, '\n');
    sink.OnLease(lease);
  }
  stmt.Reset();

  absl::StatusOr<SqliteStatement*> waiters = db_->Prepared(
      "SELECT seq, resource, holder, ttl_ms, request_id FROM waiters ORDER BY seq");
  if (!waiters.ok()) return waiters.status();
  SqliteStatement& queue = **waiters;
  for (;;) {
    row = queue.Step();
    if (!row.ok()) {
      queue.Reset();
      return row.status();
    }
    if (!*row) break;
    WaiterRecord waiter;
    waiter.seq = static_cast<uint64_t>(queue.ColumnInt(0));
    waiter.resource = queue.ColumnText(1);
    waiter.holder = queue.ColumnText(2);
    waiter.ttl = absl::Milliseconds(queue.ColumnInt(3));
    waiter.request_id = queue.ColumnText(4);
    sink.OnWaiter(waiter);
  }
  queue.Reset();
  return absl::OkStatus();
}

absl::Status SqliteLockStore::Commit(const LockStoreBatch& batch) {
  if (batch.empty()) return absl::OkStatus();  // this file is the only writer
  absl::Status status = db_->Exec("BEGIN IMMEDIATE");
  if (!status.ok()) return status;
  status = Apply(batch);
  FENCEGATE_FAILPOINT("lock.before_commit");  // test builds only
  if (status.ok()) status = db_->Exec("COMMIT");
  if (!status.ok()) {
    // Best effort: SQLite may already have rolled back on an I/O error.
    db_->Exec("ROLLBACK").IgnoreError();
  }
  return status;
}

absl::Status SqliteLockStore::Apply(const LockStoreBatch& batch) {
  if (batch.last_token != 0) {
    absl::StatusOr<SqliteStatement*> stmt = db_->Prepared(
        "INSERT INTO meta(key, value) VALUES('last_token', ?1) "
        "ON CONFLICT(key) DO UPDATE SET value = MAX(value, excluded.value)");
    if (!stmt.ok()) return stmt.status();
    absl::Status status =
        (*stmt)->Bind(1, static_cast<int64_t>(batch.last_token)).Run();
    if (!status.ok()) return status;
  }
  for (const auto& [resource, lease] : batch.leases) {
    absl::Status status;
    if (lease) {
      absl::StatusOr<SqliteStatement*> stmt = db_->Prepared(
          "INSERT OR REPLACE INTO leases"
          "(resource, holder, token, ttl_ms, hold_count, request_ids) "
          "VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
      if (!stmt.ok()) return stmt.status();
      status = (*stmt)
                   ->BindText(1, resource)
                   .BindText(2, lease->holder)
                   .Bind(3, static_cast<int64_t>(lease->token))
                   .Bind(4, absl::ToInt64Milliseconds(lease->ttl))
                   .Bind(5, lease->hold_count)
                   .BindText(6, absl::StrJoin(lease->request_ids, "\n"))
                   .Run();
    } else {
      absl::StatusOr<SqliteStatement*> stmt =
          db_->Prepared("DELETE FROM leases WHERE resource = ?1");
      if (!stmt.ok()) return stmt.status();
      status = (*stmt)->BindText(1, resource).Run();
    }
    if (!status.ok()) return status;
  }
  for (const auto& [seq, waiter] : batch.waiters) {
    absl::Status status;
    if (waiter) {
      absl::StatusOr<SqliteStatement*> stmt = db_->Prepared(
          "INSERT OR REPLACE INTO waiters(seq, resource, holder, ttl_ms, request_id) "
          "VALUES(?1, ?2, ?3, ?4, ?5)");
      if (!stmt.ok()) return stmt.status();
      status = (*stmt)
                   ->Bind(1, static_cast<int64_t>(seq))
                   .BindText(2, waiter->resource)
                   .BindText(3, waiter->holder)
                   .Bind(4, absl::ToInt64Milliseconds(waiter->ttl))
                   .BindText(5, waiter->request_id)
                   .Run();
    } else {
      absl::StatusOr<SqliteStatement*> stmt =
          db_->Prepared("DELETE FROM waiters WHERE seq = ?1");
      if (!stmt.ok()) return stmt.status();
      status = (*stmt)->Bind(1, static_cast<int64_t>(seq)).Run();
    }
    if (!status.ok()) return status;
  }
  for (const FencePosition& fence : batch.fence_positions) {
    absl::StatusOr<SqliteStatement*> stmt = db_->Prepared(
        "INSERT INTO fence_positions(resource, position) VALUES(?1, ?2) "
        "ON CONFLICT(resource) DO UPDATE SET position = excluded.position "
        "WHERE excluded.position > position");
    if (!stmt.ok()) return stmt.status();
    absl::Status status = (*stmt)
                              ->BindText(1, fence.resource)
                              .Bind(2, static_cast<int64_t>(fence.position))
                              .Run();
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace fencegate::lockservice
