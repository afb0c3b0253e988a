// SqliteLockStore: LockStore on one SQLite file (WAL, synchronous=FULL), the
// embedded default. Schema (state format 2):
//   meta(key TEXT PRIMARY KEY, value INTEGER)      -- 'last_token', 'format'
//   leases(resource TEXT PRIMARY KEY, holder TEXT, token INTEGER,
//          ttl_ms INTEGER, hold_count INTEGER, request_ids TEXT,
//          value BLOB, value_seq INTEGER)          -- exclusive leases
//                         (value, value_seq: an election leader's; NULL
//                          in a lease an Acquire took; format 2)
//   holds(token INTEGER PRIMARY KEY, resource TEXT, mode INTEGER,
//         permits INTEGER, holder TEXT, ttl_ms INTEGER, hold_count INTEGER,
//         request_ids TEXT)                        -- shared leases, permits
//   fence_positions(resource TEXT PRIMARY KEY, position INTEGER UNIQUE)
//   waiters(seq INTEGER PRIMARY KEY, resource TEXT, holder TEXT,
//           ttl_ms INTEGER, request_id TEXT, mode INTEGER, permits INTEGER)
// request_ids is the list joined by '\n' (request ids have no control
// characters; see common/core/validation.h); mode is LeaseMode's value.
//
// State format (common/core/state_format.h, docs/upgrades.md): the meta row
// 'format' (common/core/sqlite_state_format.h says why a row and not
// user_version). Open() migrates a file of an older format, or without a
// marker (0.1.0's, format 1: builds of it before lock kinds lacked the
// holds table and the waiters' mode and permits, which it adds, DEFAULT 0:
// an exclusive waiter; format 2 adds the leases' value and value_seq,
// NULL), in one transaction keeping every row, and writes
// the marker; it refuses a file of a newer format (FAILED_PRECONDITION,
// naming both formats) without writing to it. Loading a row whose mode this
// version does not know is DATA_LOSS.
//
// Disk faults: a full disk fails Commit() with RESOURCE_EXHAUSTED naming
// the file, nothing of the batch applied; an I/O error (a failed write or
// fsync) on the writer connection stops the process instead of returning
// (common/core/fail_stop.h): its outcome cannot be known.
//
// Thread safety: as LockStore asks. Load(), LoadInto() and Commit() use the writer
// connection from one thread at a time; ScanFencePositions() uses a second,
// read-only connection under its own mutex (WAL lets it read the last
// committed state while a commit runs).
#ifndef FENCEGATE_LOCKSERVICE_CORE_SQLITE_LOCK_STORE_H_
#define FENCEGATE_LOCKSERVICE_CORE_SQLITE_LOCK_STORE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/core/sqlite.h"
#include "common/core/state_format.h"
#include "lockservice/core/lock_store.h"

namespace fencegate::lockservice {

class SqliteLockStore final : public LockStore {
 public:
  // The state format this version writes, and the newest it reads.
  static constexpr int64_t kStateFormat = 2;

  // Opens or creates the database at `path` and its schema, migrating an
  // older format (see above).
  static absl::StatusOr<std::unique_ptr<SqliteLockStore>> Open(const std::string& path);

  // What Open() found of the file's format and made of it.
  const StateFormatAtOpen& format_at_open() const { return format_at_open_; }

  absl::StatusOr<LockStoreState> Load() override;
  // Reads row by row (Load() collects what it reads).
  absl::Status LoadInto(LoadSink& sink) override;
  absl::Status Commit(const LockStoreBatch& batch) override;
  absl::StatusOr<std::vector<FencePosition>> ScanFencePositions(uint64_t after,
                                                                size_t limit) override;

 private:
  SqliteLockStore(std::unique_ptr<SqliteDb> db, std::unique_ptr<SqliteDb> reader,
                  StateFormatAtOpen format_at_open)
      : db_(std::move(db)), reader_(std::move(reader)), format_at_open_(format_at_open) {}
  absl::Status Apply(const LockStoreBatch& batch);

  std::unique_ptr<SqliteDb> db_;
  absl::Mutex reader_mu_;
  const std::unique_ptr<SqliteDb> reader_ ABSL_PT_GUARDED_BY(reader_mu_);
  const StateFormatAtOpen format_at_open_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_SQLITE_LOCK_STORE_H_
