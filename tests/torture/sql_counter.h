// SqlCounter: a torture worker's fenced read and increment, done in
// PostgreSQL transactions of the worker's own, fenced with the SQL fencing
// API (fencegate_fence via client::RunFenced, docs/sql-fencing.md), on the
// gateways' own rows: the counter and log the gateway workers change, in the
// database and schema the gateways use, so one checker judges both paths.
//
//   Read(lease, key)       BEGIN; fencegate_fence(resource, token[, key_id,
//                          mac]); read the fence and the key's value; COMMIT
//   MultiWrite(lease, puts)  BEGIN; fencegate_fence(...); the resource's
//                          revision + 1, given to every key it sets; COMMIT
//
// This keeps fencegate_apply_v1's rules (gateway/postgres/postgres_schema.cc):
// a fenced read raises the fence; a write takes the resource's next revision
// (fencegate_resources.revision, which outlives keys) and gives it to every
// key it puts. Both run at READ COMMITTED: fencegate_fence holds the
// resource row's lock, which every gateway write on the resource takes too,
// until the transaction ends, so what they read is what was current.
//
// Answers come in the GatewayClient's types and codes:
//   OK           committed; max_token is the fence it committed under;
//   ABORTED      a stale token (ZF001, client::IsStaleToken(), with the fence
//                in client::CurrentToken()): rolled back, nothing changed;
//   UNKNOWN      anything else (a lost connection, a COMMIT in doubt, a
//                serialization failure retried out, a signature refused):
//                it may or may not have committed.
// So ABORTED here always carries the fence PostgreSQL reported, which the
// checker compares (fence-never-below-acknowledged-token). RunFenced runs a
// transaction again only after a serialization failure or deadlock rolled
// it back, so, as with the gateway workers' single attempts, an answer is
// never about an earlier attempt's effect.
//
// Each session sets idle_in_transaction_session_timeout = 30 s, as the
// gateways' do (gateway/postgres/postgres_storage.h): a worker stopped inside a
// transaction holds the resource's row lock until it resumes, or 30 s.
//
// Planted bug (the worker's --planted_bug=sql_worker_skips_fence,
// planted_bugs.h): MultiWrite runs without fencegate_fence, as a client
// that forgot it would.
//
// Thread safety: one thread at a time (it owns one pqxx::connection).
#ifndef FENCEGATE_TESTS_TORTURE_SQL_COUNTER_H_
#define FENCEGATE_TESTS_TORTURE_SQL_COUNTER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lease.h"
#include "pqxx/connection"

namespace fencegate::torture {

// The planted bug that makes MultiWrite skip fencegate_fence.
inline constexpr char kSqlSkipsFenceBug[] = "sql_worker_skips_fence";

class SqlCounter {
 public:
  // `uri`: a libpq connection URI of the gateways' database and schema.
  // Connects on first use, and again after a call lost its connection.
  SqlCounter(std::string uri, bool skip_fence);
  ~SqlCounter();

  absl::StatusOr<client::ReadResult> Read(const client::Lease& lease,
                                          const std::string& key);
  // Puts each (key, value), atomically.
  absl::StatusOr<client::MultiWriteResult> MultiWrite(
      const client::Lease& lease,
      const std::vector<std::pair<std::string, std::string>>& puts);

 private:
  // The connection, opened (again) if needed; or UNAVAILABLE.
  absl::StatusOr<pqxx::connection*> Connection();
  // What the worker records: ABORTED only for a stale token; the connection
  // dropped after anything unexpected.
  absl::Status Answer(absl::Status status);

  const std::string uri_;
  const bool skip_fence_;
  std::unique_ptr<pqxx::connection> connection_;
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_SQL_COUNTER_H_
