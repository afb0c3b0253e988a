#include "harness/counter_store.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "common/core/sqlite.h"

namespace fencegate::demo {
namespace {

using client::Fencing;

class GatewayCounterStore : public CounterStore {
 public:
  GatewayCounterStore(std::unique_ptr<client::GatewayClient> gateway, std::string key)
      : gateway_(std::move(gateway)), key_(std::move(key)) {}

  absl::StatusOr<CounterValue> Read(const Fencing& fencing) override {
    absl::StatusOr<client::ReadResult> read = gateway_->Read(fencing, key_);
    if (!read.ok()) return read.status();
    CounterValue out;
    if (read->found) {
      out.text = read->value;
      out.value = ParseCounter(read->value);
    }
    out.version = read->version;
    out.max_token = read->max_token;
    return out;
  }

  absl::StatusOr<CounterValue> Write(const Fencing& fencing,
                                     const std::string& text) override {
    absl::StatusOr<client::WriteResult> written = gateway_->Put(fencing, key_, text);
    if (!written.ok()) return written.status();
    return CounterValue{ParseCounter(text), text, written->version, written->max_token};
  }

 private:
  std::unique_ptr<client::GatewayClient> gateway_;
  const std::string key_;
};

// Reads and writes the file directly: no token is looked at.
class PlainCounterStore : public CounterStore {
 public:
  PlainCounterStore(std::unique_ptr<SqliteDb> db, std::string key)
      : db_(std::move(db)), key_(std::move(key)) {}

  absl::StatusOr<CounterValue> Read(const Fencing& fencing) override {
    absl::StatusOr<SqliteStatement*> select =
        db_->Prepared("SELECT value FROM objects WHERE resource = ?1 AND key = ?2");
    if (!select.ok()) return select.status();
    (*select)->BindText(1, fencing.resource).BindText(2, key_);
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) return row.status();
    CounterValue out;
    if (*row) {
      out.text = (*select)->ColumnText(0);
      out.value = ParseCounter(out.text);
    }
    (*select)->Reset();
    return out;
  }

  absl::StatusOr<CounterValue> Write(const Fencing& fencing,
                                     const std::string& text) override {
    absl::StatusOr<SqliteStatement*> upsert = db_->Prepared(
        "INSERT OR REPLACE INTO objects (resource, key, value) VALUES (?1, ?2, ?3)");
    if (!upsert.ok()) return upsert.status();
    absl::Status status = (*upsert)
                              ->BindText(1, fencing.resource)
                              .BindText(2, key_)
                              .BindText(3, text)
                              .Run();
    if (!status.ok()) return status;
    return CounterValue{ParseCounter(text), text, 0, 0};
  }

 private:
  std::unique_ptr<SqliteDb> db_;
  const std::string key_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CounterStore>> NewGatewayCounterStore(
    const std::string& address, const std::string& key,
    const client::ClientOptions& options) {
  absl::StatusOr<std::unique_ptr<client::GatewayClient>> gateway =
      client::GatewayClient::Connect(address, options);
  if (!gateway.ok()) return gateway.status();
  return std::make_unique<GatewayCounterStore>(*std::move(gateway), key);
}

absl::StatusOr<std::unique_ptr<CounterStore>> NewPlainCounterStore(
    const std::string& sqlite_path, const std::string& key) {
  // Both clients open the file at about the same time. SqliteDb::Open
  // switches it to WAL before it sets a busy timeout, so the second opener
  // can get SQLITE_BUSY (UNAVAILABLE) at once: try again, for a while.
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  for (;;) {
    absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(sqlite_path);
    absl::Status status = db.status();
    if (status.ok()) {
      status = (*db)->Exec(
          "CREATE TABLE IF NOT EXISTS objects (resource TEXT NOT NULL, key TEXT NOT "
          "NULL, value TEXT NOT NULL, PRIMARY KEY (resource, key))");
    }
    if (status.ok()) return std::make_unique<PlainCounterStore>(*std::move(db), key);
    if (status.code() != absl::StatusCode::kUnavailable || absl::Now() > give_up) {
      return status;
    }
    absl::SleepFor(absl::Milliseconds(10));  // retry interval, under a deadline
  }
}

int64_t ParseCounter(const std::string& text) {
  absl::string_view digits = text;
  digits = digits.substr(0, digits.find(' '));
  int64_t value = 0;
  return absl::SimpleAtoi(digits, &value) ? value : 0;
}

}  // namespace fencegate::demo
