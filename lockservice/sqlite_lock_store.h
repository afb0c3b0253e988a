// SqliteLockStore: LockStore on one SQLite file (WAL, synchronous=FULL), the
// embedded default. Schema:
//   meta(key TEXT PRIMARY KEY, value INTEGER)      -- 'last_token'
//   leases(resource TEXT PRIMARY KEY, holder TEXT, token INTEGER,
//          ttl_ms INTEGER, hold_count INTEGER, request_ids TEXT)
// request_ids is the list joined by '\n' (request ids have no control
// characters; see common/validation.h).
//
// Thread safety: not thread-safe (see LockStore).
#ifndef FENCEGATE_LOCKSERVICE_SQLITE_LOCK_STORE_H_
#define FENCEGATE_LOCKSERVICE_SQLITE_LOCK_STORE_H_

#include <memory>
#include <string>

#include "common/sqlite.h"
#include "lockservice/lock_store.h"

namespace fencegate::lockservice {

class SqliteLockStore final : public LockStore {
 public:
  // Opens or creates the database at `path` and its schema.
  static absl::StatusOr<std::unique_ptr<SqliteLockStore>> Open(
      const std::string& path);

  absl::StatusOr<LockStoreState> Load() override;
  absl::Status Commit(const LockStoreBatch& batch) override;

 private:
  explicit SqliteLockStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  absl::Status Apply(const LockStoreBatch& batch);

  std::unique_ptr<SqliteDb> db_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SQLITE_LOCK_STORE_H_
