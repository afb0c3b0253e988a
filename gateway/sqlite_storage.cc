#include "gateway/sqlite_storage.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/log.h"
#include "common/core/sqlite_state_format.h"
#include "common/test_hooks/test_hooks.h"

namespace fencegate::gateway {
namespace {

// `resources` keeps a resource's fence and revision even when it has no keys,
// so a revision (and thus a version) is never handed out twice.
constexpr char kSchema[] =
    "CREATE TABLE IF NOT EXISTS resources("
    "  name TEXT PRIMARY KEY NOT NULL,"
    "  max_token INTEGER NOT NULL,"
    "  revision INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS objects("
    "  resource TEXT NOT NULL,"
    "  key TEXT NOT NULL,"
    "  value BLOB NOT NULL,"
    "  version INTEGER NOT NULL,"
    "  PRIMARY KEY(resource, key));";

// Format 1, the 0.1.0 format: the tables of kSchema (0.1.0 wrote no
// marker; the step holds on its files and on a new one). A later format
// changes them in a step of its own, never in kSchema.
absl::Status MigrateToFormat1(SqliteDb& db) { return db.Exec(kSchema); }

// Every step, in order (common/core/sqlite_state_format.h).
constexpr SqliteMigration kMigrations[] = {
    {1, &MigrateToFormat1},
};
static_assert(kMigrations[std::size(kMigrations) - 1].to == SqliteStorage::kStateFormat);

constexpr char kBegin[] = "BEGIN IMMEDIATE";
constexpr char kCommit[] = "COMMIT";
constexpr char kRollback[] = "ROLLBACK";
constexpr char kSavepoint[] = "SAVEPOINT op";
constexpr char kRelease[] = "RELEASE op";
constexpr char kRollbackTo[] = "ROLLBACK TO op";

constexpr char kLoadResource[] =
    "SELECT max_token, revision FROM resources WHERE name = ?1";
constexpr char kDeleteResource[] = "DELETE FROM resources WHERE name = ?1";
constexpr char kStoreResource[] =
    "INSERT INTO resources(name, max_token, revision) VALUES(?1, ?2, ?3) "
    "ON CONFLICT(name) DO UPDATE SET "
    "max_token = excluded.max_token, revision = excluded.revision";
constexpr char kKeyVersion[] =
    "SELECT version FROM objects WHERE resource = ?1 AND key = ?2";
constexpr char kReadKey[] =
    "SELECT value, version FROM objects WHERE resource = ?1 AND key = ?2";
constexpr char kPut[] =
    "INSERT INTO objects(resource, key, value, version) VALUES(?1, ?2, ?3, ?4) "
    "ON CONFLICT(resource, key) DO UPDATE SET "
    "value = excluded.value, version = excluded.version";
constexpr char kDelete[] = "DELETE FROM objects WHERE resource = ?1 AND key = ?2";

// One statement each, so each is one consistent snapshot.
constexpr char kReadCommitted[] =
    "SELECT r.max_token, o.value, o.version FROM resources AS r "
    "LEFT JOIN objects AS o ON o.resource = r.name AND o.key = ?2 "
    "WHERE r.name = ?1";
constexpr char kListCommitted[] =
    "SELECT key, version, length(value) FROM objects "
    "WHERE resource = ?1 AND key > ?2 ORDER BY key LIMIT ?3";
constexpr char kDescribeCommitted[] =
    "SELECT (SELECT max_token FROM resources WHERE name = ?1), "
    "COUNT(*), COALESCE(SUM(length(value)), 0) FROM objects WHERE resource = ?1";

int64_t I64(uint64_t v) { return static_cast<int64_t>(v); }
uint64_t U64(int64_t v) { return static_cast<uint64_t>(v); }

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStorage>> SqliteStorage::Open(
    const std::string& path, size_t readers) {
  // The writer stops the process on an I/O error (common/core/fail_stop.h).
  absl::StatusOr<std::unique_ptr<SqliteDb>> writer =
      SqliteDb::Open(path, SqliteDb::OnDiskError::kFailStop);
  if (!writer.ok()) return writer.status();
  absl::StatusOr<StateFormatAtOpen> format =
      OpenSqliteStateFormat(**writer, SqliteStateFormat{path, kMigrations});
  if (!format.ok()) return format.status();
  if (format->migrated()) {
    LogInfo("SQLite storage %s: state now in %s", path, format->Describe());
  }
  absl::StatusOr<std::unique_ptr<SqliteReaderPool>> pool =
      SqliteReaderPool::Open(path, readers < 1 ? 1 : readers);
  if (!pool.ok()) return pool.status();
  return std::unique_ptr<SqliteStorage>(
      new SqliteStorage(*std::move(writer), *std::move(pool), *format));
}

absl::Status SqliteStorage::Run(absl::string_view sql) {
  absl::StatusOr<SqliteStatement*> stmt = writer_->Prepared(sql);
  if (!stmt.ok()) return stmt.status();
  return (*stmt)->Run();
}

// ------------------------------------------------------------- write path

// BEGIN IMMEDIATE takes the database's one write lock: there is no lock
// order to keep, so the batch's resources are not needed.
absl::Status SqliteStorage::BeginBatch(absl::Span<const absl::string_view>) {
  poisoned_ = absl::OkStatus();
  return Run(kBegin);
}

absl::Status SqliteStorage::Apply(const FencedOp& op, OpResult* result) {
  *result = OpResult();
  if (!poisoned_.ok()) return poisoned_;
  // Checks only read, so a refused op wrote nothing. Only a write of two
  // or more keys can fail with something of its own to undo beyond its
  // resource's row: it alone runs inside a savepoint.
  if (op.kind == OpKind::kWrite && op.mutations.size() > 1)
    return ApplyInSavepoint(op, result);
  Loaded row;
  absl::Status status = Decide(op, result, &row);
  if (status.ok()) return status;
  if (absl::Status undo = Undo(op.resource, row); !undo.ok()) poisoned_ = undo;
  return status;
}

absl::Status SqliteStorage::ApplyInSavepoint(const FencedOp& op, OpResult* result) {
  absl::Status status = Run(kSavepoint);
  if (!status.ok()) {
    poisoned_ = status;
    return status;
  }
  Loaded row;
  status = Decide(op, result, &row);
  if (status.ok() && result->outcome == Outcome::kAccepted) {
    status = Run(kRelease);
    if (!status.ok()) poisoned_ = status;
    return status;
  }
  // Refused or failed: undo whatever the op did, and only that.
  absl::Status undo = Run(kRollbackTo);
  if (undo.ok()) undo = Run(kRelease);
  if (!undo.ok()) {
    // SQLite may have rolled back the whole transaction (e.g. on an I/O
    // error); nothing more may run in it.
    poisoned_ = undo;
    return status.ok() ? undo : status;
  }
  return status;
}

absl::Status SqliteStorage::Undo(absl::string_view resource, const Loaded& row) {
  // A failed statement undid itself, unless SQLite rolled back the whole
  // transaction (a full disk, an I/O error): then the batch is lost.
  if (!writer_->InTransaction()) {
    return absl::UnavailableError(
        "SQLite rolled back the batch's transaction after a failed statement");
  }
  if (!row.stored) return absl::OkStatus();
  if (row.found) return StoreResource(resource, row.fence, row.revision);
  absl::StatusOr<SqliteStatement*> stmt = writer_->Prepared(kDeleteResource);
  if (!stmt.ok()) return stmt.status();
  return (*stmt)->BindText(1, resource).Run();
}

absl::Status SqliteStorage::Decide(const FencedOp& op, OpResult* result, Loaded* row) {
  absl::Status status = LoadResource(op.resource, row);
  if (!status.ok()) return status;
  const uint64_t fence = row->fence;
  uint64_t revision = row->revision;
  result->max_token = fence;
  if (op.token < fence) {
    result->outcome = Outcome::kStaleToken;
    return absl::OkStatus();
  }
  switch (op.kind) {
    case OpKind::kWrite:
      for (size_t i = 0; i < op.mutations.size(); ++i) {
        const Mutation& m = op.mutations[i];
        if (!m.expected_version.has_value()) continue;
        uint64_t current = 0;
        status = KeyVersion(op.resource, m.key, &current);
        if (!status.ok()) return status;
        if (current != *m.expected_version) {
          result->outcome = Outcome::kVersionMismatch;
          result->version = current;
          result->mismatch_index = i;
          return absl::OkStatus();
        }
      }
      ++revision;
      status = StoreResource(op.resource, op.token, revision);
      row->stored = status.ok();
      if (status.ok()) status = WriteMutations(op, revision);
      result->version = revision;
      break;
    case OpKind::kRead:
      if (op.token > fence) {
        status = StoreResource(op.resource, op.token, revision);
        row->stored = status.ok();
      }
      if (status.ok()) status = ReadKey(op.resource, op.key, result);
      break;
    case OpKind::kFence:
      if (op.token > fence) status = StoreResource(op.resource, op.token, revision);
      break;
    case OpKind::kSharedRead:  // the fence stays: a shared token never writes
      status = ReadKey(op.resource, op.key, result);
      break;
  }
  if (!status.ok()) return status;
  result->outcome = Outcome::kAccepted;
  if (op.kind == OpKind::kSharedRead) return absl::OkStatus();  // max_token = fence
  result->fence_raised = op.token > fence;
  result->max_token = op.token;
  return absl::OkStatus();
}

absl::Status SqliteStorage::WriteMutations(const FencedOp& op, uint64_t revision) {
  for (const Mutation& m : op.mutations) {
    absl::StatusOr<SqliteStatement*> stmt =
        writer_->Prepared(m.kind == Mutation::Kind::kPut ? kPut : kDelete);
    if (!stmt.ok()) return stmt.status();
    (*stmt)->BindText(1, op.resource).BindText(2, m.key);
    if (m.kind == Mutation::Kind::kPut) {
      (*stmt)->BindBlob(3, m.value).Bind(4, I64(revision));
    }
    absl::Status status = (*stmt)->Run();
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status SqliteStorage::LoadResource(absl::string_view resource, Loaded* row) {
  absl::StatusOr<SqliteStatement*> stmt = writer_->Prepared(kLoadResource);
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> found = (*stmt)->BindText(1, resource).Step();
  if (!found.ok()) return found.status();
  row->found = *found;
  row->fence = *found ? U64((*stmt)->ColumnInt(0)) : 0;
  row->revision = *found ? U64((*stmt)->ColumnInt(1)) : 0;
  (*stmt)->Reset();
  return absl::OkStatus();
}

absl::Status SqliteStorage::StoreResource(absl::string_view resource,
                                          uint64_t fence, uint64_t revision) {
  absl::StatusOr<SqliteStatement*> stmt = writer_->Prepared(kStoreResource);
  if (!stmt.ok()) return stmt.status();
  return (*stmt)
      ->BindText(1, resource)
      .Bind(2, I64(fence))
      .Bind(3, I64(revision))
      .Run();
}

absl::Status SqliteStorage::KeyVersion(absl::string_view resource,
                                       absl::string_view key, uint64_t* version) {
  absl::StatusOr<SqliteStatement*> stmt = writer_->Prepared(kKeyVersion);
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> row = (*stmt)->BindText(1, resource).BindText(2, key).Step();
  if (!row.ok()) return row.status();
  *version = *row ? U64((*stmt)->ColumnInt(0)) : 0;
  (*stmt)->Reset();
  return absl::OkStatus();
}

absl::Status SqliteStorage::ReadKey(absl::string_view resource,
                                    absl::string_view key, OpResult* result) {
  absl::StatusOr<SqliteStatement*> stmt = writer_->Prepared(kReadKey);
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> row = (*stmt)->BindText(1, resource).BindText(2, key).Step();
  if (!row.ok()) return row.status();
  result->found = *row;
  if (*row) {
    result->value = (*stmt)->ColumnText(0);
    result->version = U64((*stmt)->ColumnInt(1));
  }
  (*stmt)->Reset();
  return absl::OkStatus();
}

absl::Status SqliteStorage::CommitBatch() {
  absl::Status status = poisoned_;
  FENCEGATE_FAILPOINT("gateway.before_commit");  // test builds only
  if (status.ok()) status = Run(kCommit);
  if (!status.ok()) AbortBatch();
  return status;
}

void SqliteStorage::AbortBatch() {
  // Best effort: SQLite may already have rolled back (then this fails with
  // "no transaction is active", which is the state we want).
  Run(kRollback).IgnoreError();
  poisoned_ = absl::OkStatus();
}

// -------------------------------------------------------------- read path

absl::StatusOr<ReadResult> SqliteStorage::ReadCommitted(absl::string_view resource,
                                                        absl::string_view key) {
  SqliteReaderPool::Borrowed db = readers_->Borrow();
  absl::StatusOr<SqliteStatement*> stmt = db->Prepared(kReadCommitted);
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> row = (*stmt)->BindText(1, resource).BindText(2, key).Step();
  if (!row.ok()) return row.status();
  ReadResult result;
  if (*row) {
    result.max_token = U64((*stmt)->ColumnInt(0));
    result.found = !(*stmt)->ColumnIsNull(2);
    if (result.found) {
      result.value = (*stmt)->ColumnText(1);
      result.version = U64((*stmt)->ColumnInt(2));
    }
  }
  (*stmt)->Reset();
  return result;
}

absl::StatusOr<ListPage> SqliteStorage::ListCommitted(absl::string_view resource,
                                                      absl::string_view after_key,
                                                      size_t limit) {
  SqliteReaderPool::Borrowed db = readers_->Borrow();
  absl::StatusOr<SqliteStatement*> stmt = db->Prepared(kListCommitted);
  if (!stmt.ok()) return stmt.status();
  // One extra row tells whether another page follows.
  (*stmt)->BindText(1, resource).BindText(2, after_key).Bind(3, I64(limit + 1));
  ListPage page;
  page.keys.reserve(limit);
  for (;;) {
    absl::StatusOr<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (page.keys.size() == limit) {
      page.more = true;
      break;
    }
    KeyInfo& info = page.keys.emplace_back();
    info.key = (*stmt)->ColumnText(0);
    info.version = U64((*stmt)->ColumnInt(1));
    info.size_bytes = U64((*stmt)->ColumnInt(2));
  }
  (*stmt)->Reset();
  return page;
}

absl::StatusOr<ResourceStats> SqliteStorage::DescribeCommitted(
    absl::string_view resource) {
  SqliteReaderPool::Borrowed db = readers_->Borrow();
  absl::StatusOr<SqliteStatement*> stmt = db->Prepared(kDescribeCommitted);
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> row = (*stmt)->BindText(1, resource).Step();
  if (!row.ok()) return row.status();
  ResourceStats stats;
  if (*row) {
    stats.max_token = U64((*stmt)->ColumnInt(0));  // NULL reads as 0
    stats.key_count = U64((*stmt)->ColumnInt(1));
    stats.total_bytes = U64((*stmt)->ColumnInt(2));
  }
  (*stmt)->Reset();
  return stats;
}

}  // namespace fencegate::gateway
