// Typed errors of the client library. A failed call returns an absl::Status
// whose code and fencegate ErrorInfo (common/base/errors.h) say what happened;
// these predicates read them without parsing text. Thread-safe.
//
//   absl::StatusOr<WriteResult> w = gateway.Put(*lease, "k", "v");
//   if (IsStaleToken(w.status())) {
//     // A newer holder has written: CurrentToken(w.status()) is its token.
//     // Take the lock again and redo the read-modify-write.
//   }
#ifndef FENCEGATE_CLIENT_ERRORS_H_
#define FENCEGATE_CLIENT_ERRORS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fencegate::client {

// ABORTED: the gateway has seen a larger token for the resource.
bool IsStaleToken(const absl::Status& status);
// ABORTED: the lease is gone (expired, released, or a newer holder).
bool IsLeaseLost(const absl::Status& status);
// ABORTED: a write's expected_version did not match.
bool IsVersionMismatch(const absl::Status& status);
// PERMISSION_DENIED: the token's signature is missing or not valid for its
// resource (a gateway or lock service that checks signatures).
bool IsBadSignature(const absl::Status& status);
// FAILED_PRECONDITION from LockClient::AcquireLease: the resource is held
// (CurrentToken() is the holder's token) or held back by a lock-delay.
bool IsNotAcquired(const absl::Status& status);
// The current token the server reported with the error: the gateway's max
// token for STALE_TOKEN / VERSION_MISMATCH, the holder's token for
// LEASE_LOST and not-acquired. 0 when none.
uint64_t CurrentToken(const absl::Status& status);
// VERSION_MISMATCH: the key's current version (0: absent).
uint64_t CurrentVersion(const absl::Status& status);

// An error of the SQL fencing API (docs/sql-fencing.md) as the same kind of
// status the gateway answers: SQLSTATE ZF001 -> ABORTED with IsStaleToken()
// and CurrentToken() (from the error's "current_token=N" detail, found in
// `message`, PostgreSQL's full error text); ZF002 -> PERMISSION_DENIED with
// IsBadSignature(); 22004 and 22023 -> INVALID_ARGUMENT; 25P01 ->
// FAILED_PRECONDITION; 40001 and 40P01 -> ABORTED (retry the transaction);
// 08xxx (connection) -> UNAVAILABLE; anything else (or no SQLSTATE) ->
// INTERNAL. The message is PostgreSQL's.
absl::Status FromSqlFencingError(absl::string_view sqlstate, absl::string_view message);

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_ERRORS_H_
