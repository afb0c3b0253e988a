#include "bench/loadgen/sql_driver.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "pqxx/nontransaction"
#include "pqxx/transaction"

namespace fencegate::bench {

SqlDriver::SqlDriver(std::string lock_target, std::string postgres_uri,
                     std::string holder, SqlFencing fencing)
    : locks_(std::move(lock_target), /*gateway_target=*/"", std::move(holder),
             Transport::kUnary),
      postgres_uri_(std::move(postgres_uri)),
      fencing_(fencing) {}

SqlDriver::~SqlDriver() = default;

absl::Status SqlDriver::Open(absl::Duration session_ttl) {
  if (absl::Status s = locks_.Open(session_ttl); !s.ok()) return s;
  try {
    db_ = std::make_unique<pqxx::connection>(postgres_uri_);
    {
      // Client threads open at once: they take turns creating the table.
      pqxx::work create(*db_);
      create.exec("SELECT pg_advisory_xact_lock(7378697629483820661)");
      create.exec0(
          "CREATE TABLE IF NOT EXISTS bench_sql_writes(resource text, key text, value "
          "bytea NOT NULL, PRIMARY KEY (resource, key))");
      create.commit();
    }
    db_->prepare("fence", "SELECT fencegate_fence($1, $2)");
    db_->prepare("upsert",
                 "INSERT INTO bench_sql_writes(resource, key, value) VALUES ($1, $2, $3) "
                 "ON CONFLICT (resource, key) DO UPDATE SET value = excluded.value");
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("PostgreSQL: ", e.what()));
  }
}

absl::Status SqlDriver::FencedWrite(const HeldLock& lock, absl::string_view key,
                                    absl::string_view value) {
  try {
    pqxx::work txn(*db_);
    if (fencing_ == SqlFencing::kFenced) {
      txn.exec_prepared("fence", lock.resource, static_cast<int64_t>(lock.token));
    }
    txn.exec_prepared0("upsert", lock.resource, std::string(key),
                       pqxx::binarystring(value.data(), value.size()));
    txn.commit();
    return absl::OkStatus();
  } catch (const pqxx::sql_error& e) {
    if (e.sqlstate() == "ZF001") return absl::AbortedError(e.what());
    return absl::InternalError(e.what());
  } catch (const std::exception& e) {
    return absl::UnavailableError(e.what());
  }
}

}  // namespace fencegate::bench
