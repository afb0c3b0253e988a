// PostgresStorage: the StorageBackend on a PostgreSQL database, through
// libpqxx, so several gateways (processes, machines) can serve one set of
// fences and objects. Keeps the contract of storage_backend.h this way:
//
//   batch   = one READ COMMITTED transaction on the write connection. A batch
//             on more than one resource first locks every resource row it
//             will touch, in byte order of the name, in one upsert (rows are
//             created if missing). Every gateway locks in that one order, so
//             two gateways' concurrent batches wait for each other but can
//             never deadlock; a batch on one resource holds one row lock and
//             cannot close a cycle either. Object rows are only written by
//             the holder of their resource's row lock, so they add no wait.
//   op      = one call of fencegate_apply_v1 (postgres_schema.h): under the
//             resource row's lock, the fence check, the version checks, and
//             then the fence raise and the writes in a subtransaction, so a
//             refused op writes nothing and a failed op is undone alone. One
//             round trip per op. Under READ COMMITTED each statement reads the
//             latest committed rows once it holds the lock, so the check
//             always sees what the last batch of any gateway committed.
//   commit  = one COMMIT with synchronous_commit on (set for the session if
//             the server's default is off): durable when acknowledged. A
//             COMMIT whose connection is lost has an unknown outcome:
//             CommitBatch() then returns UNKNOWN (storage_backend.h).
//   reads   = separate connections (PostgresReaderPool), one statement each:
//             committed state only. PostgreSQL makes a commit visible to
//             other sessions only after its WAL is flushed.
//
// A lost write connection fails the batch in progress (nothing of it
// applied, or unknown if lost during COMMIT) and is reopened by the next
// BeginBatch(); one lost while idle is found and replaced by BeginBatch()
// before anything runs, so it fails no batch. The write session also sets a
// 30 s idle_in_transaction_session_timeout unless the server or the URI sets
// one, so a gateway frozen mid-batch (SIGSTOP, VM pause) releases its row
// locks and cannot stall the other gateways for longer.
//
// The database must use the UTF8 or SQL_ASCII encoding (names are UTF-8).
// Tokens and versions are stored as bigint; callers keep them below 2^63.
//
// Thread safety: as StorageBackend (one write-path thread; reads from any).
#ifndef FENCEGATE_GATEWAY_POSTGRES_POSTGRES_STORAGE_H_
#define FENCEGATE_GATEWAY_POSTGRES_POSTGRES_STORAGE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "gateway/postgres/postgres_connection.h"
#include "gateway/postgres/postgres_reader_pool.h"
#include "gateway/storage_backend.h"
#include "pqxx/connection"
#include "pqxx/transaction"

namespace fencegate::gateway {

class PostgresStorage final : public StorageBackend {
 public:
  // Connects to `target` with one write connection and `readers` (>= 1)
  // read connections, and creates the schema if missing.
  static absl::StatusOr<std::unique_ptr<PostgresStorage>> Open(
      const PostgresTarget& target, size_t readers = 4);
  ~PostgresStorage() override;

  absl::Status BeginBatch(absl::Span<const absl::string_view> resources) override;
  absl::Status Apply(const FencedOp& op, OpResult* result) override;
  absl::Status CommitBatch() override;
  void AbortBatch() override;

  absl::StatusOr<ReadResult> ReadCommitted(absl::string_view resource,
                                           absl::string_view key) override;
  absl::StatusOr<ListPage> ListCommitted(absl::string_view resource,
                                         absl::string_view after_key,
                                         size_t limit) override;
  absl::StatusOr<ResourceStats> DescribeCommitted(absl::string_view resource) override;

  // The read connections now (for the metrics).
  PostgresReaderPool::Stats reader_stats() { return readers_->stats(); }

 private:
  explicit PostgresStorage(PostgresTarget target) : target_(std::move(target)) {}

  // Opens the write connection unless it is open: session settings, the
  // schema, the write path's prepared statements.
  absl::Status ConnectWriter();
  // Closes the batch's transaction (rolling it back if it is still open),
  // and the write connection too if it was lost.
  void CloseBatch();

  const PostgresTarget target_;
  std::unique_ptr<pqxx::connection> writer_;  // write path only; null: reopen
  std::unique_ptr<pqxx::work> batch_;         // the open batch, if any
  bool writer_lost_ = false;                  // writer_ must be reopened
  // Set when an op failed outside its subtransaction: PostgreSQL has aborted
  // the batch's transaction, which must not commit.
  absl::Status poisoned_;
  std::unique_ptr<PostgresReaderPool> readers_;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_POSTGRES_POSTGRES_STORAGE_H_
