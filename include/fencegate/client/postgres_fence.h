// RunFenced: a transaction of your own on PostgreSQL, fenced by the SQL
// fencing API (docs/sql-fencing.md; install it with `fencegate
// sql-install`). Header-only, over libpqxx: include it, and link libpqxx,
// only if you use it; the client library itself does not link libpqxx.
//
//   absl::Status s = RunFenced(db, FencingOf(*lease), [&](pqxx::transaction_base& txn) {
//     txn.exec_params("UPDATE orders SET state = $1 WHERE id = $2", "shipped", 42);
//   });
//   if (IsStaleToken(s)) { ... a newer holder fenced the resource: CurrentToken(s) }
//
// It opens a transaction at `Isolation`, runs fencegate_fence(resource,
// token[, key_id, mac]) as its first statement, then `body` (called with
// the pqxx::transaction<Isolation>: take a pqxx::transaction_base&), then
// commits.
// What `body` writes commits only if the fence held. Errors are the
// client's (FromSqlFencingError(), errors.h): a stale token is ABORTED with
// IsStaleToken() and CurrentToken(), a bad signature PERMISSION_DENIED with
// IsBadSignature(), like the gateway's answers; nothing was committed.
// A serialization failure or deadlock (40001, 40P01: at REPEATABLE READ or
// SERIALIZABLE a newer holder committed while this transaction waited)
// runs the whole transaction again, `body` included, up to `max_attempts`
// times in all; the last one's error is returned (ABORTED). A lost
// connection is UNAVAILABLE; one lost during COMMIT is UNKNOWN (it may have
// committed). Exceptions `body` throws that are not libpqxx's propagate
// (the transaction is rolled back).
//
// Thread safety: uses `connection` as libpqxx allows: one thread at a time.
#ifndef FENCEGATE_CLIENT_POSTGRES_FENCE_H_
#define FENCEGATE_CLIENT_POSTGRES_FENCE_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/fencing.h"
#include "pqxx/pqxx"

namespace fencegate::client {

template <pqxx::isolation_level Isolation = pqxx::isolation_level::read_committed,
          typename Body>
absl::Status RunFenced(pqxx::connection& connection, const Fencing& fencing, Body&& body,
                       int max_attempts = 5) {
  // fencegate_fence raises the fence: a write, which only an exclusive
  // lease's token may do (docs/sql-fencing.md, "Lease modes").
  if (fencing.mode != LeaseMode::kExclusive) {
    return absl::InvalidArgumentError(
        "mode: RunFenced takes an exclusive lease's token only; the SQL fencing API "
        "has no shared reads (a shared lease's token cannot fence) and refuses "
        "permits' tokens");
  }
  absl::Status last;
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    try {
      pqxx::transaction<Isolation> txn(connection);
      const int64_t token = static_cast<int64_t>(fencing.token);
      if (fencing.signature.key_id.empty() && fencing.signature.mac.empty()) {
        txn.exec_params("SELECT fencegate_fence($1, $2)", fencing.resource, token);
      } else {
        const std::string& mac = fencing.signature.mac;
        txn.exec_params("SELECT fencegate_fence($1, $2, $3, $4)", fencing.resource, token,
                        fencing.signature.key_id,
                        pqxx::binarystring(mac.data(), mac.size()));
      }
      body(txn);
      txn.commit();
      return absl::OkStatus();
    } catch (const pqxx::serialization_failure& e) {
      last = FromSqlFencingError("40001", e.what());
    } catch (const pqxx::deadlock_detected& e) {
      last = FromSqlFencingError("40P01", e.what());
    } catch (const pqxx::in_doubt_error& e) {
      return absl::UnknownError(absl::StrCat(
          "the connection was lost during COMMIT; the transaction may or may "
          "not have committed: ",
          e.what()));
    } catch (const pqxx::broken_connection& e) {
      return absl::UnavailableError(e.what());
    } catch (const pqxx::sql_error& e) {
      return FromSqlFencingError(e.sqlstate(), e.what());
    }
  }
  return last;
}

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_POSTGRES_FENCE_H_
