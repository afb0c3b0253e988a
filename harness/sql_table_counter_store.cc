// The counter in a table of the user's own on PostgreSQL, fenced in SQL
// (counter_store.h; docs/sql-fencing.md).
#include <memory>
#include <string>
#include <utility>

#include "harness/counter_store.h"
#include "fencegate/client/postgres_fence.h"

namespace fencegate::demo {
namespace {

using client::Fencing;

// Each read and write is a transaction of its own that first calls
// fencegate_fence with the client's token (client::RunFenced): a read
// raises the fence as the gateway's fenced read does.
class SqlTableCounterStore : public CounterStore {
 public:
  SqlTableCounterStore(std::unique_ptr<pqxx::connection> db, std::string key)
      : db_(std::move(db)), key_(std::move(key)) {}

  absl::StatusOr<CounterValue> Read(const Fencing& fencing) override {
    CounterValue out;
    absl::Status status =
        client::RunFenced(*db_, fencing, [&](pqxx::transaction_base& txn) {
          const pqxx::result rows = txn.exec_params(
              "SELECT value FROM demo_counters WHERE resource = $1 AND key = $2",
              fencing.resource, key_);
          out = CounterValue();
          if (!rows.empty()) {
            out.text = rows[0][0].as<std::string>();
            out.value = ParseCounter(out.text);
          }
        });
    if (!status.ok()) return status;
    out.max_token = fencing.token;  // the fence now
    return out;
  }

  absl::StatusOr<CounterValue> Write(const Fencing& fencing,
                                     const std::string& text) override {
    absl::Status status =
        client::RunFenced(*db_, fencing, [&](pqxx::transaction_base& txn) {
          txn.exec_params0(
              "INSERT INTO demo_counters(resource, key, value) VALUES ($1, $2, $3) "
              "ON CONFLICT (resource, key) DO UPDATE SET value = $3",
              fencing.resource, key_, text);
        });
    if (!status.ok()) return status;
    return CounterValue{ParseCounter(text), text, 0, fencing.token};
  }

 private:
  std::unique_ptr<pqxx::connection> db_;
  const std::string key_;
};

}  // namespace

absl::Status CreateSqlCounterTable(const std::string& postgres_uri) {
  try {
    pqxx::connection db(postgres_uri);
    pqxx::nontransaction(db).exec0(
        "CREATE TABLE IF NOT EXISTS demo_counters(resource text, key text, value text "
        "NOT "
        "NULL, PRIMARY KEY (resource, key))");
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return absl::UnavailableError(e.what());
  }
}

absl::StatusOr<std::unique_ptr<CounterStore>> NewSqlTableCounterStore(
    const std::string& postgres_uri, const std::string& key) {
  try {
    return std::make_unique<SqlTableCounterStore>(
        std::make_unique<pqxx::connection>(postgres_uri), key);
  } catch (const std::exception& e) {
    return absl::UnavailableError(e.what());
  }
}

absl::StatusOr<int64_t> ReadSqlCounterUnfenced(const std::string& postgres_uri,
                                               const std::string& resource,
                                               const std::string& key) {
  try {
    pqxx::connection db(postgres_uri);
    const pqxx::result rows = pqxx::nontransaction(db).exec_params(
        "SELECT value FROM demo_counters WHERE resource = $1 AND key = $2", resource,
        key);
    return rows.empty() ? 0 : ParseCounter(rows[0][0].as<std::string>());
  } catch (const std::exception& e) {
    return absl::UnavailableError(e.what());
  }
}

}  // namespace fencegate::demo
