// CounterStore: where a demo client keeps the shared counter it increments
// (read, add one, write back: a read-modify-write).
//
//   - The gateway store goes through fencegate-gateway: every read and write
//     carries the lease's token and is refused once a newer token was seen.
//   - The plain store is a SQLite file that both clients open directly. It
//     ignores tokens: the "without fencing" control of act 3. It is a
//     separate file; the gateway itself never takes a write without a token.
//   - The SQL table store keeps the counter in a table of the user's own on
//     PostgreSQL (demo_counters), each read and write a transaction fenced
//     with fencegate_fence (the SQL fencing API, docs/sql-fencing.md): a
//     stale token is refused like the gateway's (IsStaleToken).
//
// The stored text is "<n> (by <who>, token <t>)", so an overwrite shows who
// made it; ParseCounter() reads the number back.
//
// Thread safety: not thread-safe; each client process uses one from one
// thread.
#ifndef FENCEGATE_HARNESS_COUNTER_STORE_H_
#define FENCEGATE_HARNESS_COUNTER_STORE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "fencegate/client/gateway_client.h"

namespace fencegate::demo {

struct CounterValue {
  int64_t value = 0;       // 0 when absent
  std::string text;        // as stored; empty when absent
  uint64_t version = 0;    // gateway only
  uint64_t max_token = 0;  // gateway only: the fence after the call
};

class CounterStore {
 public:
  virtual ~CounterStore() = default;
  // A gateway store refuses a stale token with ABORTED (IsStaleToken).
  virtual absl::StatusOr<CounterValue> Read(const client::Fencing& fencing) = 0;
  virtual absl::StatusOr<CounterValue> Write(const client::Fencing& fencing,
                                             const std::string& text) = 0;
};

// INVALID_ARGUMENT if the TLS files in `options` cannot be used.
absl::StatusOr<std::unique_ptr<CounterStore>> NewGatewayCounterStore(
    const std::string& address, const std::string& key,
    const client::ClientOptions& options = client::ClientOptions());
absl::StatusOr<std::unique_ptr<CounterStore>> NewPlainCounterStore(
    const std::string& sqlite_path, const std::string& key);
// sql_table_counter_store.cc. The table is created once, before the
// clients start (CreateSqlCounterTable); the last reads it without a token.
absl::Status CreateSqlCounterTable(const std::string& postgres_uri);
absl::StatusOr<std::unique_ptr<CounterStore>> NewSqlTableCounterStore(
    const std::string& postgres_uri, const std::string& key);
absl::StatusOr<int64_t> ReadSqlCounterUnfenced(const std::string& postgres_uri,
                                               const std::string& resource,
                                               const std::string& key);

// The number at the start of a stored text; 0 if there is none.
int64_t ParseCounter(const std::string& text);

}  // namespace fencegate::demo

#endif  // FENCEGATE_HARNESS_COUNTER_STORE_H_
