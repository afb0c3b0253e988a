#include "gateway/sqlite_reader_pool.h"

namespace fencegate::gateway {

absl::StatusOr<std::unique_ptr<SqliteReaderPool>> SqliteReaderPool::Open(
    const std::string& path, size_t size) {
  std::unique_ptr<SqliteReaderPool> pool(new SqliteReaderPool());
  for (size_t i = 0; i < size; ++i) {
    absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
    if (!db.ok()) return db.status();
    // A reader must never write, not even by mistake.
    absl::Status status = (*db)->Exec("PRAGMA query_only=ON");
    if (!status.ok()) return status;
    pool->all_.push_back(*std::move(db));
  }
  absl::MutexLock lock(&pool->mu_);
  for (const auto& db : pool->all_) pool->free_.push_back(db.get());
  return pool;
}

SqliteReaderPool::Borrowed SqliteReaderPool::Borrow() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &SqliteReaderPool::HasFree));
  SqliteDb* db = free_.back();
  free_.pop_back();
  return Borrowed(this, db);
}

void SqliteReaderPool::GiveBack(SqliteDb* db) {
  absl::MutexLock lock(&mu_);
  free_.push_back(db);
}

}  // namespace fencegate::gateway
