// SqliteStorage: the StorageBackend on one SQLite database file (WAL,
// synchronous=FULL). Keeps the contract of storage_backend.h this way:
//
//   batch   = one BEGIN IMMEDIATE transaction on the single write connection,
//             so no other writer (in this process or another) can run between
//             an op's check and its write;
//   op      = the fence check and the version checks read only, so a
//             refused op wrote nothing; an accepted op then raises the fence
//             and changes its keys. Only a write of two or more keys runs
//             inside a SAVEPOINT, undone alone if a key's statement fails;
//             an op that writes one row or one key has nothing to undo when
//             its only data statement fails (SQLite undoes a failed
//             statement), but the fence it raised first, which is put back
//             as it was loaded. Whatever cannot be put back (the transaction
//             itself rolled back, a full disk) poisons the batch: its commit
//             fails and nothing of it is applied;
//   commit  = one COMMIT, one fsync for the whole batch;
//   disk    = a full disk fails the batch's commit with RESOURCE_EXHAUSTED
//             naming the file, nothing of it applied (SQLite writes a
//             commit's frames in order, the commit frame last, and rolls
//             back); reads go on, writes resume once space is freed. An
//             I/O error (a failed write or fsync) on the write connection
//             stops the process (common/core/fail_stop.h): its outcome
//             cannot be known;
//   reads   = separate read-only connections (SqliteReaderPool). SQLite makes
//             a WAL commit visible to other connections only once it is
//             synced, so they see durable, committed state only.
//
// Tables: resources(name, max_token, revision) and
// objects(resource, key, value, version). Tokens and versions are stored as
// SQLite INTEGERs (int64); callers keep them below 2^63.
//
// State format (common/core/state_format.h, docs/upgrades.md): the row
// ('format', N) of a table meta(key, value), as in the lock service's file
// (common/core/sqlite_state_format.h says why a row and not user_version).
// Open() migrates a file of an older format, or without a marker (0.1.0's,
// format 1), in one transaction keeping every row, and writes the marker;
// it refuses a file of a newer format (FAILED_PRECONDITION, naming both
// formats) without writing to it.
//
// Thread safety: as StorageBackend (one write-path thread; reads from any).
#ifndef FENCEGATE_GATEWAY_SQLITE_STORAGE_H_
#define FENCEGATE_GATEWAY_SQLITE_STORAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/core/sqlite.h"
#include "common/core/state_format.h"
#include "gateway/sqlite_reader_pool.h"
#include "gateway/storage_backend.h"

namespace fencegate::gateway {

class SqliteStorage final : public StorageBackend {
 public:
  // The state format this version writes, and the newest it reads.
  static constexpr int64_t kStateFormat = 1;

  // Opens (creating if needed) the database at `path` with one write
  // connection and `readers` (>= 1) read-only connections, migrating an
  // older format (see above).
  static absl::StatusOr<std::unique_ptr<SqliteStorage>> Open(
      const std::string& path, size_t readers = 4);

  // What Open() found of the file's format and made of it.
  const StateFormatAtOpen& format_at_open() const { return format_at_open_; }

  absl::Status BeginBatch(absl::Span<const absl::string_view> resources) override;
  absl::Status Apply(const FencedOp& op, OpResult* result) override;
  absl::Status CommitBatch() override;
  void AbortBatch() override;
  bool SoleFenceWriter() const override { return true; }

  absl::StatusOr<ReadResult> ReadCommitted(absl::string_view resource,
                                           absl::string_view key) override;
  absl::StatusOr<ListPage> ListCommitted(absl::string_view resource,
                                         absl::string_view after_key,
                                         size_t limit) override;
  absl::StatusOr<ResourceStats> DescribeCommitted(
      absl::string_view resource) override;

 private:
  SqliteStorage(std::unique_ptr<SqliteDb> writer,
                std::unique_ptr<SqliteReaderPool> readers,
                StateFormatAtOpen format_at_open)
      : writer_(std::move(writer)),
        readers_(std::move(readers)),
        format_at_open_(format_at_open) {}

  // Runs one cached statement that returns no rows.
  absl::Status Run(absl::string_view sql);
  // A resource's row as an op loaded it, and whether the op stored it
  // since (what a failure after the fence raise puts back).
  struct Loaded {
    bool found = false;
    uint64_t fence = 0;
    uint64_t revision = 0;
    bool stored = false;
  };
  // Apply() of a write of two or more keys, inside a SAVEPOINT.
  absl::Status ApplyInSavepoint(const FencedOp& op, OpResult* result);
  // The check and the change of one op.
  absl::Status Decide(const FencedOp& op, OpResult* result, Loaded* row);
  // Puts back what a failed op without a savepoint changed: its resource's
  // row as loaded. An error if that fails or the transaction is gone.
  absl::Status Undo(absl::string_view resource, const Loaded& row);
  absl::Status WriteMutations(const FencedOp& op, uint64_t revision);
  absl::Status LoadResource(absl::string_view resource, Loaded* row);
  absl::Status StoreResource(absl::string_view resource, uint64_t fence,
                             uint64_t revision);
  absl::Status KeyVersion(absl::string_view resource, absl::string_view key,
                          uint64_t* version);
  absl::Status ReadKey(absl::string_view resource, absl::string_view key,
                       OpResult* result);

  const std::unique_ptr<SqliteDb> writer_;  // write path only
  const std::unique_ptr<SqliteReaderPool> readers_;
  const StateFormatAtOpen format_at_open_;
  // Set when an op could not be undone: the open batch must not commit.
  absl::Status poisoned_;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_SQLITE_STORAGE_H_
