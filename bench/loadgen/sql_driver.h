// SqlDriver: a write to a table of the user's own on PostgreSQL, in a
// transaction of its own, with or without the SQL fencing API's check
// (docs/sql-fencing.md): the cost of fencing in SQL, measured against the
// same write unfenced, on the same table and database.
//
//   Acquire, Release  fencegate's lock service (a FencegateDriver with no
//                gateway): the tokens the fenced writes carry.
//   FencedWrite  kFenced: BEGIN; SELECT fencegate_fence(resource, token);
//                INSERT ... ON CONFLICT DO UPDATE into bench_sql_writes;
//                COMMIT. kPlain: the same without the fencegate_fence
//                statement (what the write costs with no fence at all).
//                Prepared statements, libpqxx, READ COMMITTED; the commit
//                waits for PostgreSQL's WAL fsync (synchronous_commit on).
//
// The schema the --postgres URI selects must hold the SQL fencing API
// (`fencegate sql-install`); Open() creates bench_sql_writes if missing.
//
// Thread safety: none (see driver.h).
#ifndef FENCEGATE_BENCH_LOADGEN_SQL_DRIVER_H_
#define FENCEGATE_BENCH_LOADGEN_SQL_DRIVER_H_

#include <memory>
#include <string>

#include "bench/loadgen/driver.h"
#include "bench/loadgen/fencegate_driver.h"
#include "pqxx/connection"

namespace fencegate::bench {

enum class SqlFencing { kFenced, kPlain };

class SqlDriver final : public Driver {
 public:
  SqlDriver(std::string lock_target, std::string postgres_uri, std::string holder,
            SqlFencing fencing);
  ~SqlDriver() override;

  absl::Status Open(absl::Duration session_ttl) override;
  absl::StatusOr<std::optional<HeldLock>> Acquire(
      const std::string& resource, const AcquireOptions& options) override {
    return locks_.Acquire(resource, options);
  }
  absl::Status Release(const HeldLock& lock) override { return locks_.Release(lock); }
  absl::Status FencedWrite(const HeldLock& lock, absl::string_view key,
                           absl::string_view value) override;

 private:
  FencegateDriver locks_;
  const std::string postgres_uri_;
  const SqlFencing fencing_;
  std::unique_ptr<pqxx::connection> db_;
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_SQL_DRIVER_H_
