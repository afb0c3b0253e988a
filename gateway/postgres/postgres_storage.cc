#include "gateway/postgres/postgres_storage.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/base/log.h"
#include "common/test_hooks/test_hooks.h"
#include "gateway/postgres/postgres_schema.h"
#include "pqxx/binarystring"
#include "pqxx/except"
#include "pqxx/nontransaction"
#include "pqxx/result"

namespace fencegate::gateway {
namespace {

// Locks (creating if missing) the rows of the names in $1, in array order:
// the caller sorts them. ON CONFLICT DO UPDATE locks an existing row; the
// no-op SET is only there to take that lock.
constexpr char kLockResources[] = R"sql(
INSERT INTO fencegate_resources AS r (name, max_token, revision)
SELECT t.name, 0, 0 FROM unnest($1::text[]) WITH ORDINALITY AS t(name, n) ORDER BY t.n
ON CONFLICT (name) DO UPDATE SET max_token = r.max_token
)sql";

// One statement each, so each reads one snapshot.
constexpr char kReadCommitted[] =
    "SELECT r.max_token, o.value, o.version FROM fencegate_resources AS r "
    "LEFT JOIN fencegate_objects AS o ON o.resource = r.name AND o.key = $2 "
    "WHERE r.name = $1";
constexpr char kListCommitted[] =
    "SELECT key, version, octet_length(value) FROM fencegate_objects "
    "WHERE resource = $1 AND key > $2 ORDER BY key LIMIT $3";
constexpr char kDescribeCommitted[] =
    "SELECT coalesce((SELECT max_token FROM fencegate_resources WHERE name = $1), 0), "
    "count(*), coalesce(sum(octet_length(value)), 0) FROM fencegate_objects "
    "WHERE resource = $1";

// The write session's settings as the server (or the URI) set them.
constexpr char kSessionSettings[] =
    "SELECT current_setting('server_encoding'), current_setting('fsync'), "
    "current_setting('synchronous_commit'), "
    "current_setting('idle_in_transaction_session_timeout')";
constexpr char kIdleInTransactionTimeout[] = "30s";

// True iff a failed COMMIT certainly rolled back: the server answered with
// an error and the session lives on. A lost connection, or an error that
// ends the session (operator intervention, e.g. a terminated backend, which
// can come after the commit record is flushed; a crash), leaves the outcome
// unknown.
bool CommitRefused(const std::exception& error, const pqxx::connection& connection) {
  if (!connection.is_open()) return false;
  if (dynamic_cast<const pqxx::transaction_rollback*>(&error) != nullptr) return true;
  const auto* sql = dynamic_cast<const pqxx::sql_error*>(&error);
  if (sql == nullptr) return false;
  const std::string& state = sql->sqlstate();
  return !state.empty() && !absl::StartsWith(state, "08") &&
         !absl::StartsWith(state, "57") && !absl::StartsWith(state, "XX");
}

int64_t I64(uint64_t v) { return static_cast<int64_t>(v); }
uint64_t U64(int64_t v) { return static_cast<uint64_t>(v); }

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresStorage>> PostgresStorage::Open(
    const PostgresTarget& target, size_t readers) {
  std::unique_ptr<PostgresStorage> storage(new PostgresStorage(target));
  absl::Status status = storage->ConnectWriter();
  if (!status.ok()) return status;
  absl::StatusOr<std::unique_ptr<PostgresReaderPool>> pool = PostgresReaderPool::Open(
      target, readers,
      {{"fg_read", kReadCommitted},
       {"fg_list", kListCommitted},
       {"fg_describe", kDescribeCommitted}});
  if (!pool.ok()) return pool.status();
  storage->readers_ = *std::move(pool);
  return storage;
}

PostgresStorage::~PostgresStorage() { CloseBatch(); }

absl::Status PostgresStorage::ConnectWriter() {
  if (writer_ != nullptr) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<pqxx::connection>> connection = Connect(target_);
  if (!connection.ok()) return connection.status();
  try {
    pqxx::nontransaction session(**connection);
    const pqxx::row settings = session.exec1(kSessionSettings);
    const std::string encoding = settings[0].as<std::string>();
    if (encoding != "UTF8" && encoding != "SQL_ASCII") {
      return absl::FailedPreconditionError(absl::StrCat(
          "the PostgreSQL database (", target_.description(), ") uses encoding ",
          encoding, "; the gateway needs UTF8 (CREATE DATABASE ... ENCODING 'UTF8')"));
    }
    if (settings[1].as<std::string>() == "off") {
      LogWarning("PostgreSQL (%s) runs with fsync=off: writes the gateway "
                 "acknowledges can be lost if the database server crashes",
                 target_.description());
    }
    // Every op's check runs under its row lock and must then read the
    // latest committed state: READ COMMITTED, whatever the server's default.
    std::string setup = "SET default_transaction_isolation = 'read committed'";
    if (settings[2].as<std::string>() == "off") {
      LogWarning("PostgreSQL (%s) has synchronous_commit=off; the gateway sets it "
                 "on for its own session, so its acknowledged writes are durable",
                 target_.description());
      absl::StrAppend(&setup, "; SET synchronous_commit = on");
    }
    if (settings[3].as<std::string>() == "0") {
      absl::StrAppend(&setup, "; SET idle_in_transaction_session_timeout = '",
                      kIdleInTransactionTimeout, "'");
    }
    session.exec0(setup);
  } catch (const std::exception& e) {
    return PostgresError(e, "setting up the write connection");
  }
  absl::Status status = EnsurePostgresSchema(**connection);
  if (!status.ok()) return status;
  (*connection)->prepare("fg_lock", kLockResources);
  (*connection)->prepare("fg_apply", kApplySql);
  (*connection)->prepare("fg_read_shared", kSharedReadSql);
  writer_ = *std::move(connection);
  return absl::OkStatus();
}

// ------------------------------------------------------------- write path

absl::Status PostgresStorage::BeginBatch(absl::Span<const absl::string_view> resources) {
  CloseBatch();
  poisoned_ = absl::OkStatus();
  std::vector<absl::string_view> names(resources.begin(), resources.end());
  std::sort(names.begin(), names.end());  // byte order, the same in every gateway
  names.erase(std::unique(names.begin(), names.end()), names.end());
  absl::Status status;
  // A connection lost while idle (database restart, failover, a proxy's
  // timeout) shows only now; nothing has run yet, so one more try on a new
  // connection is safe.
  for (int attempt = 0; attempt < 2; ++attempt) {
    status = ConnectWriter();
    if (!status.ok()) return status;
    try {
      batch_ = std::make_unique<pqxx::work>(*writer_);
      if (names.size() > 1) batch_->exec_prepared0("fg_lock", PgTextArray(names));
      return absl::OkStatus();
    } catch (const std::exception& e) {
      status = PostgresError(e, "starting a batch");
      writer_lost_ = IsConnectionLost(e);
    }
    const bool lost = writer_lost_;
    CloseBatch();
    if (!lost) break;
  }
  return status;
}

absl::Status PostgresStorage::Apply(const FencedOp& op, OpResult* result) {
  *result = OpResult();
  if (!poisoned_.ok()) return poisoned_;
  if (batch_ == nullptr) return absl::FailedPreconditionError("no batch is open");
  try {
    if (op.kind == OpKind::kSharedRead) {  // changes nothing: one snapshot's read
      SharedReadResultOf(
          batch_->exec_prepared1("fg_read_shared", std::string(op.resource),
                                 std::string(op.key)),
          op.token, result);
      return absl::OkStatus();
    }
    const ApplyArgs args = ApplyArgsOf(op);
    const pqxx::row row = batch_->exec_prepared1(
        "fg_apply", std::string(op.resource), I64(op.token), args.kind, args.keys,
        args.value_sizes, pqxx::binarystring(args.values.data(), args.values.size()),
        args.expected);
    // A failed op was undone alone by its subtransaction; the batch goes on.
    return ApplyResultOf(row, result);
  } catch (const std::exception& e) {
    // PostgreSQL has aborted the whole transaction: nothing more may run in
    // it, and nothing of it will commit.
    poisoned_ = PostgresError(e, "applying a request");
    writer_lost_ = IsConnectionLost(e);
    return poisoned_;
  }
}

absl::Status PostgresStorage::CommitBatch() {
  if (batch_ == nullptr) return absl::FailedPreconditionError("no batch is open");
  absl::Status status = poisoned_;
  FENCEGATE_FAILPOINT("gateway.before_commit");  // test builds only
  if (status.ok()) {
    try {
      batch_->commit();
      batch_.reset();
      return absl::OkStatus();
    } catch (const std::exception& e) {
      if (CommitRefused(e, *writer_)) {
        status = PostgresError(e, "committing a batch");  // rolled back
      } else {
        // The COMMIT may or may not have reached the server and taken effect.
        writer_lost_ = true;
        status = absl::UnknownError(absl::StrCat(
            "lost the connection to PostgreSQL while committing a batch, so it may "
            "or may not be committed: ", e.what()));
      }
    }
  }
  CloseBatch();
  return status;
}

void PostgresStorage::AbortBatch() {
  CloseBatch();
  poisoned_ = absl::OkStatus();
}

void PostgresStorage::CloseBatch() {
  batch_.reset();  // rolls back if still open; a lost connection is ignored
  if (writer_ != nullptr && (writer_lost_ || !writer_->is_open())) {
    LogWarning("gateway lost its PostgreSQL write connection (%s); the next batch "
               "reconnects", target_.description());
    writer_.reset();
  }
  writer_lost_ = false;
}

// -------------------------------------------------------------- read path

absl::StatusOr<ReadResult> PostgresStorage::ReadCommitted(absl::string_view resource,
                                                          absl::string_view key) {
  ReadResult result;
  absl::Status status = readers_->Run("reading a key", [&](pqxx::connection& c) {
    pqxx::nontransaction txn(c);
    const pqxx::result rows =
        txn.exec_prepared("fg_read", std::string(resource), std::string(key));
    result = ReadResult();
    if (rows.empty()) return;
    result.max_token = U64(rows[0][0].as<int64_t>());
    result.found = !rows[0][1].is_null();
    if (result.found) {
      result.value = pqxx::binarystring(rows[0][1]).str();
      result.version = U64(rows[0][2].as<int64_t>());
    }
  });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<ListPage> PostgresStorage::ListCommitted(absl::string_view resource,
                                                        absl::string_view after_key,
                                                        size_t limit) {
  ListPage page;
  absl::Status status = readers_->Run("listing keys", [&](pqxx::connection& c) {
    pqxx::nontransaction txn(c);
    // One extra row tells whether another page follows.
    const pqxx::result rows =
        txn.exec_prepared("fg_list", std::string(resource), std::string(after_key),
                          I64(limit + 1));
    page = ListPage();
    page.keys.reserve(std::min(rows.size(), limit));
    for (const pqxx::row& row : rows) {
      if (page.keys.size() == limit) {
        page.more = true;
        break;
      }
      KeyInfo& info = page.keys.emplace_back();
      info.key = row[0].as<std::string>();
      info.version = U64(row[1].as<int64_t>());
      info.size_bytes = U64(row[2].as<int64_t>());
    }
  });
  if (!status.ok()) return status;
  return page;
}

absl::StatusOr<ResourceStats> PostgresStorage::DescribeCommitted(
    absl::string_view resource) {
  ResourceStats stats;
  absl::Status status = readers_->Run("describing a resource", [&](pqxx::connection& c) {
    pqxx::nontransaction txn(c);
    const pqxx::row row = txn.exec_prepared1("fg_describe", std::string(resource));
    stats.max_token = U64(row[0].as<int64_t>());
    stats.key_count = U64(row[1].as<int64_t>());
    stats.total_bytes = U64(row[2].as<int64_t>());
  });
  if (!status.ok()) return status;
  return stats;
}

}  // namespace fencegate::gateway
