// SqliteReaderPool: a few read-only SQLite connections to one database file,
// lent out one caller at a time. In WAL mode each connection reads the last
// committed snapshot, so readers never see a write transaction in progress
// and never block the writer.
//
// Ownership: the pool owns its connections. A Borrowed handle must be
// returned (destroyed) before the pool is.
//
// Thread safety: Borrow() is thread-safe; it waits while every connection is
// lent out. A borrowed connection is used by its borrower's thread only.
#ifndef FENCEGATE_GATEWAY_SQLITE_READER_POOL_H_
#define FENCEGATE_GATEWAY_SQLITE_READER_POOL_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/core/sqlite.h"

namespace fencegate::gateway {

class SqliteReaderPool {
 public:
  // Opens `size` (>= 1) connections to `path`, which must already exist.
  static absl::StatusOr<std::unique_ptr<SqliteReaderPool>> Open(
      const std::string& path, size_t size);

  // A lent connection; gives it back when destroyed.
  class Borrowed {
   public:
    Borrowed(SqliteReaderPool* pool, SqliteDb* db) : pool_(pool), db_(db) {}
    ~Borrowed() { pool_->GiveBack(db_); }
    Borrowed(const Borrowed&) = delete;
    Borrowed& operator=(const Borrowed&) = delete;
    SqliteDb* operator->() const { return db_; }

   private:
    SqliteReaderPool* const pool_;
    SqliteDb* const db_;
  };

  Borrowed Borrow();

 private:
  SqliteReaderPool() = default;
  void GiveBack(SqliteDb* db);
  bool HasFree() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !free_.empty(); }

  std::vector<std::unique_ptr<SqliteDb>> all_;
  absl::Mutex mu_;
  std::vector<SqliteDb*> free_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_SQLITE_READER_POOL_H_
