#include "gateway/postgres/postgres_reader_pool.h"

#include <exception>

namespace fencegate::gateway {

absl::StatusOr<std::unique_ptr<PostgresReaderPool>> PostgresReaderPool::Open(
    const PostgresTarget& target, size_t size, std::vector<Statement> statements) {
  std::unique_ptr<PostgresReaderPool> pool(
      new PostgresReaderPool(target, std::move(statements)));
  absl::MutexLock lock(&pool->mu_);
  for (size_t i = 0; i < (size < 1 ? 1 : size); ++i) {
    absl::StatusOr<std::unique_ptr<pqxx::connection>> connection = pool->NewConnection();
    if (!connection.ok()) return connection.status();
    pool->free_.push_back(*std::move(connection));
  }
  pool->size_ = pool->free_.size();
  return pool;
}

absl::StatusOr<std::unique_ptr<pqxx::connection>> PostgresReaderPool::NewConnection()
    const {
  absl::StatusOr<std::unique_ptr<pqxx::connection>> connection = Connect(target_);
  if (!connection.ok()) return connection.status();
  for (const auto& [name, sql] : statements_) (*connection)->prepare(name, sql);
  return connection;
}

absl::Status PostgresReaderPool::Run(absl::string_view what,
                                     absl::FunctionRef<void(pqxx::connection&)> read) {
  std::unique_ptr<pqxx::connection> connection;
  {
    absl::MutexLock lock(&mu_);
    ++waiting_;
    mu_.Await(absl::Condition(this, &PostgresReaderPool::HasFree));
    --waiting_;
    connection = std::move(free_.back());
    free_.pop_back();
  }
  absl::Status status;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (connection == nullptr || !connection->is_open()) {
      absl::StatusOr<std::unique_ptr<pqxx::connection>> fresh = NewConnection();
      if (!fresh.ok()) {
        connection = nullptr;
        status = fresh.status();
        break;
      }
      connection = *std::move(fresh);
    }
    try {
      read(*connection);
      status = absl::OkStatus();
      break;
    } catch (const std::exception& e) {
      status = PostgresError(e, what);
      if (!IsConnectionLost(e)) break;
      connection = nullptr;  // try once more on a new connection
    }
  }
  absl::MutexLock lock(&mu_);
  free_.push_back(std::move(connection));
  return status;
}

PostgresReaderPool::Stats PostgresReaderPool::stats() {
  absl::MutexLock lock(&mu_);
  return Stats{size_, free_.size(), waiting_};
}

}  // namespace fencegate::gateway
