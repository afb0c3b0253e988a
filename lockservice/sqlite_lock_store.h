// SqliteLockStore: LockStore on one SQLite file (WAL, synchronous=FULL), the
// embedded default. Schema:
//   meta(key TEXT PRIMARY KEY, value INTEGER)      -- 'last_token'
//   leases(resource TEXT PRIMARY KEY, holder TEXT, token INTEGER,
//          ttl_ms INTEGER, hold_count INTEGER, request_ids TEXT)
//                                                  -- exclusive leases
//   holds(token INTEGER PRIMARY KEY, resource TEXT, mode INTEGER,
//         permits INTEGER, holder TEXT, ttl_ms INTEGER, hold_count INTEGER,
//         request_ids TEXT)                        -- shared leases, permits
//   fence_positions(resource TEXT PRIMARY KEY, position INTEGER UNIQUE)
//   waiters(seq INTEGER PRIMARY KEY, resource TEXT, holder TEXT,
//           ttl_ms INTEGER, request_id TEXT, mode INTEGER, permits INTEGER)
// request_ids is the list joined by '\n' (request ids have no control
// characters; see common/validation.h); mode is LeaseMode's value.
//
// Migration: Open() brings a file of an older schema up to this one in one
// transaction, keeping every row: it creates the tables that are missing
// (holds) and adds the missing columns (waiters' mode and permits, DEFAULT 0:
// an exclusive waiter). Loading a row whose mode this version does not know
// is DATA_LOSS.
//
// Thread safety: as LockStore asks. Load(), LoadInto() and Commit() use the writer
// connection from one thread at a time; ScanFencePositions() uses a second,
// read-only connection under its own mutex (WAL lets it read the last
// committed state while a commit runs).
#ifndef FENCEGATE_LOCKSERVICE_SQLITE_LOCK_STORE_H_
#define FENCEGATE_LOCKSERVICE_SQLITE_LOCK_STORE_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/sqlite.h"
#include "lockservice/lock_store.h"

namespace fencegate::lockservice {

class SqliteLockStore final : public LockStore {
 public:
  // Opens or creates the database at `path` and its schema.
  static absl::StatusOr<std::unique_ptr<SqliteLockStore>> Open(
      const std::string& path);

  absl::StatusOr<LockStoreState> Load() override;
  // Reads row by row (Load() collects what it reads).
  absl::Status LoadInto(LoadSink& sink) override;
  absl::Status Commit(const LockStoreBatch& batch) override;
  absl::StatusOr<std::vector<FencePosition>> ScanFencePositions(
      uint64_t after, size_t limit) override;

 private:
  SqliteLockStore(std::unique_ptr<SqliteDb> db, std::unique_ptr<SqliteDb> reader)
      : db_(std::move(db)), reader_(std::move(reader)) {}
  absl::Status Apply(const LockStoreBatch& batch);

  std::unique_ptr<SqliteDb> db_;
  absl::Mutex reader_mu_;
  const std::unique_ptr<SqliteDb> reader_ ABSL_PT_GUARDED_BY(reader_mu_);
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SQLITE_LOCK_STORE_H_
