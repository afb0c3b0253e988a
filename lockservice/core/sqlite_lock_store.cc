#include "lockservice/core/sqlite_lock_store.h"

#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/base/log.h"
#include "common/core/sqlite_state_format.h"
#include "common/test_hooks/test_hooks.h"

namespace fencegate::lockservice {
namespace {

constexpr char kSchema[] =
    "CREATE TABLE IF NOT EXISTS meta("
    "  key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS leases("
    "  resource TEXT PRIMARY KEY, holder TEXT NOT NULL,"
    "  token INTEGER NOT NULL, ttl_ms INTEGER NOT NULL,"
    "  hold_count INTEGER NOT NULL, request_ids TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS holds("
    "  token INTEGER PRIMARY KEY, resource TEXT NOT NULL,"
    "  mode INTEGER NOT NULL, permits INTEGER NOT NULL, holder TEXT NOT NULL,"
    "  ttl_ms INTEGER NOT NULL, hold_count INTEGER NOT NULL,"
    "  request_ids TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS fence_positions("
    "  resource TEXT PRIMARY KEY, position INTEGER NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS waiters("
    "  seq INTEGER PRIMARY KEY, resource TEXT NOT NULL, holder TEXT NOT NULL,"
    "  ttl_ms INTEGER NOT NULL, request_id TEXT NOT NULL,"
    "  mode INTEGER NOT NULL DEFAULT 0, permits INTEGER NOT NULL DEFAULT 0);";

// Columns added to a table by builds of 0.1.0: a file of an older build
// gets them (ALTER TABLE ... ADD COLUMN), with the default its rows mean.
struct AddedColumn {
  const char* table;
  const char* name;
  const char* definition;
};
constexpr AddedColumn kAddedColumns[] = {
    {"waiters", "mode", "mode INTEGER NOT NULL DEFAULT 0"},
    {"waiters", "permits", "permits INTEGER NOT NULL DEFAULT 0"},
};

absl::StatusOr<bool> HasColumn(SqliteDb& db, absl::string_view table,
                               absl::string_view column) {
  absl::StatusOr<SqliteStatement*> info =
      db.Prepared(absl::StrCat("PRAGMA table_info(", table, ")"));
  if (!info.ok()) return info.status();
  SqliteStatement& stmt = **info;
  for (;;) {
    absl::StatusOr<bool> row = stmt.Step();
    if (!row.ok() || !*row) {
      stmt.Reset();
      if (!row.ok()) return row.status();
      return false;
    }
    if (stmt.ColumnText(1) == column) {
      stmt.Reset();
      return true;
    }
  }
}

// Format 1, the 0.1.0 format (the tables of kSchema). 0.1.0 wrote no
// marker, and builds of it before lock kinds wrote files without the holds
// table and without the waiters' mode and permits: this step creates what
// is missing, tables and columns, keeping every row, so it holds on every
// unmarked file, empty or not. The tables of kSchema are format 1's: a
// later format changes them in a step of its own, never there.
absl::Status MigrateToFormat1(SqliteDb& db) {
  absl::Status status = db.Exec(kSchema);
  for (const AddedColumn& added : kAddedColumns) {
    if (!status.ok()) break;
    absl::StatusOr<bool> has = HasColumn(db, added.table, added.name);
    if (!has.ok()) {
      status = has.status();
    } else if (!*has) {
      status = db.Exec(
          absl::StrCat("ALTER TABLE ", added.table, " ADD COLUMN ", added.definition));
    }
  }
  return status;
}

// Format 2: an election's leader keeps its value in its lease's row
// (docs/semantics.md, "Elections"); NULL in a lease taken by an Acquire.
absl::Status MigrateToFormat2(SqliteDb& db) {
  return db.Exec(
      "ALTER TABLE leases ADD COLUMN value BLOB;"
      "ALTER TABLE leases ADD COLUMN value_seq INTEGER;");
}

// Every step, in order (common/core/sqlite_state_format.h).
constexpr SqliteMigration kMigrations[] = {
    {1, &MigrateToFormat1},
    {2, &MigrateToFormat2},
};
static_assert(kMigrations[std::size(kMigrations) - 1].to ==
              SqliteLockStore::kStateFormat);

// Reads the mode in `column` of `stmt`'s row and the permits in the next
// column into `mode` and `permits`; or resets `stmt` and returns DATA_LOSS
// naming the row (`row` and `key`: built only then, not for every row of a
// big load).
absl::Status ReadModeColumns(SqliteStatement& stmt, int column, absl::string_view row,
                             uint64_t key, LeaseMode& mode, uint32_t& permits) {
  const int64_t value = stmt.ColumnInt(column);
  if (std::optional<LeaseMode> known = LeaseModeFromNumber(value)) {
    mode = *known;
    permits = static_cast<uint32_t>(stmt.ColumnInt(column + 1));
    return absl::OkStatus();
  }
  stmt.Reset();
  return absl::DataLossError(absl::StrCat(
      "SQLite lock store: ", row, " ", key, " has mode ", value,
      ", which this version does not know (0 exclusive, 1 shared, 2 permit); it was "
      "written by a newer version"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteLockStore>> SqliteLockStore::Open(
    const std::string& path) {
  // The writer stops the process on an I/O error (common/core/fail_stop.h).
  absl::StatusOr<std::unique_ptr<SqliteDb>> db =
      SqliteDb::Open(path, SqliteDb::OnDiskError::kFailStop);
  if (!db.ok()) return db.status();
  absl::StatusOr<StateFormatAtOpen> format =
      OpenSqliteStateFormat(**db, SqliteStateFormat{path, kMigrations});
  if (!format.ok()) return format.status();
  if (format->migrated()) {
    LogInfo("SQLite lock store %s: state now in %s", path, format->Describe());
  }
  absl::StatusOr<std::unique_ptr<SqliteDb>> reader = SqliteDb::Open(path);
  if (!reader.ok()) return reader.status();
  return std::unique_ptr<SqliteLockStore>(
      new SqliteLockStore(*std::move(db), *std::move(reader), *format));
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

// Hands each row of `stmt` (resource, holder, token, ttl_ms, hold_count,
// request_ids, and with `holds` mode and permits, without it value and
// value_seq) to `sink` as a lease.
absl::Status StreamLeases(SqliteStatement& stmt, bool holds, LoadSink& sink) {
  LeaseRecord lease;
  for (;;) {
    absl::StatusOr<bool> row = stmt.Step();
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
    lease.mode = LeaseMode::kExclusive;
    lease.permits = 0;
    if (holds) {
      absl::Status read = ReadModeColumns(stmt, 6, "holds row token", lease.token,
                                          lease.mode, lease.permits);
      if (!read.ok()) return read;
    }
    lease.proclamation.reset();
    if (!holds && !stmt.ColumnIsNull(7)) {
      lease.proclamation =
          Proclamation{static_cast<uint64_t>(stmt.ColumnInt(7)), stmt.ColumnText(6)};
    }
    sink.OnLease(lease);
  }
  stmt.Reset();
  return absl::OkStatus();
}

// Binds a row's key: ?1 of both its upsert and its delete.
SqliteStatement& BindKey(SqliteStatement& stmt, const std::string& key) {
  return stmt.BindText(1, key);
}
SqliteStatement& BindKey(SqliteStatement& stmt, uint64_t key) {
  return stmt.Bind(1, static_cast<int64_t>(key));
}

// Binds `values` to ?first, ?first+1, ...: strings as text, the rest as
// integers.
void BindValue(SqliteStatement& stmt, int index, absl::string_view value) {
  stmt.BindText(index, value);
}
void BindValue(SqliteStatement& stmt, int index, int64_t value) {
  stmt.Bind(index, value);
}
template <typename... Values>
void BindValues(SqliteStatement& stmt, int first, const Values&... values) {
  int index = first;
  (BindValue(stmt, index++, values), ...);
}

// Writes a batch's changes to one table, in order: each (key, row) with
// `upsert`, the key bound as ?1 and the rest by `bind_row`; each
// (key, nullopt) with `erase`, which deletes the key's row.
template <typename Key, typename Row, typename BindRow>
absl::Status ApplyRows(SqliteDb& db,
                       const std::vector<std::pair<Key, std::optional<Row>>>& rows,
                       absl::string_view upsert, absl::string_view erase,
                       const BindRow& bind_row) {
  for (const auto& [key, row] : rows) {
    absl::StatusOr<SqliteStatement*> stmt = db.Prepared(row ? upsert : erase);
    if (!stmt.ok()) return stmt.status();
    SqliteStatement& bound = BindKey(**stmt, key);
    if (row) bind_row(bound, *row);
    absl::Status status = bound.Run();
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

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

  absl::StatusOr<SqliteStatement*> count = db_->Prepared(
      "SELECT (SELECT count(*) FROM leases) + (SELECT count(*) FROM holds)");
  if (!count.ok()) return count.status();
  row = (*count)->Step();
  if (!row.ok()) return row.status();
  if (*row) sink.ExpectLeases(static_cast<size_t>((*count)->ColumnInt(0)));
  (*count)->Reset();

  // The exclusive leases, then the shared leases and permits: the same
  // columns, and two more.
  absl::StatusOr<SqliteStatement*> leases = db_->Prepared(
      "SELECT resource, holder, token, ttl_ms, hold_count, request_ids, value, value_seq "
      "FROM leases");
  if (!leases.ok()) return leases.status();
  absl::Status status = StreamLeases(**leases, /*holds=*/false, sink);
  if (!status.ok()) return status;
  absl::StatusOr<SqliteStatement*> holds = db_->Prepared(
      "SELECT resource, holder, token, ttl_ms, hold_count, request_ids, mode, permits "
      "FROM holds ORDER BY token");
  if (!holds.ok()) return holds.status();
  status = StreamLeases(**holds, /*holds=*/true, sink);
  if (!status.ok()) return status;

  absl::StatusOr<SqliteStatement*> waiters = db_->Prepared(
      "SELECT seq, resource, holder, ttl_ms, request_id, mode, permits FROM waiters "
      "ORDER BY seq");
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
    absl::Status read = ReadModeColumns(queue, 5, "waiters row seq", waiter.seq,
                                        waiter.mode, waiter.permits);
    if (!read.ok()) return read;
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
    absl::Status status = (*stmt)->Bind(1, static_cast<int64_t>(batch.last_token)).Run();
    if (!status.ok()) return status;
  }
  absl::Status status = ApplyRows(
      *db_, batch.leases,
      "INSERT OR REPLACE INTO leases"
      "(resource, holder, token, ttl_ms, hold_count, request_ids, value, value_seq) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
      "DELETE FROM leases WHERE resource = ?1",
      [](SqliteStatement& put, const LeaseRecord& lease) {
        BindValues(put, 2, lease.holder, static_cast<int64_t>(lease.token),
                   absl::ToInt64Milliseconds(lease.ttl), lease.hold_count,
                   absl::StrJoin(lease.request_ids, "\n"));
        if (const std::optional<Proclamation>& said = lease.proclamation) {
          put.BindBlob(7, said->value).Bind(8, static_cast<int64_t>(said->seq));
        } else {
          put.BindNull(7).BindNull(8);
        }
      });
  if (!status.ok()) return status;
  status = ApplyRows(
      *db_, batch.holds,
      "INSERT OR REPLACE INTO holds(token, resource, mode, permits, holder, "
      "ttl_ms, hold_count, request_ids) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
      "DELETE FROM holds WHERE token = ?1",
      [](SqliteStatement& put, const LeaseRecord& hold) {
        BindValues(put, 2, hold.resource, static_cast<int64_t>(hold.mode), hold.permits,
                   hold.holder, absl::ToInt64Milliseconds(hold.ttl), hold.hold_count,
                   absl::StrJoin(hold.request_ids, "\n"));
      });
  if (!status.ok()) return status;
  status = ApplyRows(
      *db_, batch.waiters,
      "INSERT OR REPLACE INTO waiters(seq, resource, holder, ttl_ms, request_id, "
      "mode, permits) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
      "DELETE FROM waiters WHERE seq = ?1",
      [](SqliteStatement& put, const WaiterRecord& waiter) {
        BindValues(put, 2, waiter.resource, waiter.holder,
                   absl::ToInt64Milliseconds(waiter.ttl), waiter.request_id,
                   static_cast<int64_t>(waiter.mode), waiter.permits);
      });
  if (!status.ok()) return status;
  for (const FencePosition& fence : batch.fence_positions) {
    absl::StatusOr<SqliteStatement*> stmt = db_->Prepared(
        "INSERT INTO fence_positions(resource, position) VALUES(?1, ?2) "
        "ON CONFLICT(resource) DO UPDATE SET position = excluded.position "
        "WHERE excluded.position > position");
    if (!stmt.ok()) return stmt.status();
    status = (*stmt)
                 ->BindText(1, fence.resource)
                 .Bind(2, static_cast<int64_t>(fence.position))
                 .Run();
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace fencegate::lockservice
