// PostgresReaderPool: a few connections to PostgreSQL for the committed
// reads of the PostgreSQL backend (plain Read, List, Describe), lent out one
// caller at a time. A read is one statement outside any transaction block,
// so it sees what was committed when it started, never a batch in progress.
//
// A lost connection is replaced on its next use, and a read whose
// connection was lost runs once more on a new one (reads change nothing),
// so a restarted database costs the readers no failed call.
//
// Ownership: the pool owns its connections. Thread safety: Run() is
// thread-safe; it waits while every connection is lent out.
#ifndef FENCEGATE_GATEWAY_POSTGRES_POSTGRES_READER_POOL_H_
#define FENCEGATE_GATEWAY_POSTGRES_POSTGRES_READER_POOL_H_

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "gateway/postgres/postgres_connection.h"
#include "pqxx/connection"

namespace fencegate::gateway {

class PostgresReaderPool {
 public:
  // A statement prepared on every connection: (name, SQL).
  using Statement = std::pair<std::string, std::string>;

  // Opens `size` (>= 1) connections to `target` now, so a bad target fails
  // at start-up, and prepares `statements` on each.
  static absl::StatusOr<std::unique_ptr<PostgresReaderPool>> Open(
      const PostgresTarget& target, size_t size, std::vector<Statement> statements);

  // Runs `read` on a lent connection. `read` may throw libpqxx's exceptions;
  // they come back as a Status that says it happened while `what`. `read`
  // may run twice (after a lost connection), so it must set its outputs
  // afresh each time.
  absl::Status Run(absl::string_view what, absl::FunctionRef<void(pqxx::connection&)> read);

  // The pool now, for the metrics.
  struct Stats {
    size_t size = 0;     // connections in all
    size_t idle = 0;     // not lent out
    size_t waiting = 0;  // callers waiting for one
  };
  Stats stats();

 private:
  PostgresReaderPool(PostgresTarget target, std::vector<Statement> statements)
      : target_(std::move(target)), statements_(std::move(statements)) {}

  // A connection with the statements prepared.
  absl::StatusOr<std::unique_ptr<pqxx::connection>> NewConnection() const;
  bool HasFree() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !free_.empty(); }

  const PostgresTarget target_;
  const std::vector<Statement> statements_;
  absl::Mutex mu_;
  // Idle connections; a null one is reconnected when it is next lent out.
  std::vector<std::unique_ptr<pqxx::connection>> free_ ABSL_GUARDED_BY(mu_);
  size_t size_ ABSL_GUARDED_BY(mu_) = 0;
  size_t waiting_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_POSTGRES_POSTGRES_READER_POOL_H_
