// The gateway's schema on PostgreSQL: two tables and the function that
// decides and applies one fenced op, created in the connection's current
// schema (the first one on its search_path) when missing.
//
//   fencegate_resources(name PK, max_token, revision)   one row per resource
//   fencegate_objects(resource, key, value, version, PK(resource, key))
//   fencegate_apply_v1(resource, token, kind, keys[], value_sizes[],
//                      values, expected[]) -> one row: the decision
//
// Names are text COLLATE "C" (byte order, like SQLite's BINARY: List pages
// through keys in byte order whatever the database's locale); values are
// bytea; tokens, revisions and versions are bigint (below 2^63).
//
// fencegate_apply_v1 is the op's one atomic step (storage_backend.h,
// contract 1-2): it locks the resource's row (SELECT ... FOR UPDATE,
// creating the row first if there is none), refuses a stale token, checks
// every expected version, and only then raises the fence and writes, inside
// a BEGIN ... EXCEPTION block: a subtransaction, so an op that fails is
// undone alone and the batch's transaction stays usable. A refused op
// writes nothing. Its result row: outcome (kOutcome*), max_token, version,
// mismatch_index (0-based), found, value (a fenced read), error (SQLSTATE
// and message of a failed op).
//
// Thread safety: EnsurePostgresSchema() uses the connection it is given,
// which no other thread may use meanwhile.
#ifndef FENCEGATE_GATEWAY_POSTGRES_SCHEMA_H_
#define FENCEGATE_GATEWAY_POSTGRES_SCHEMA_H_

#include "absl/status/status.h"
#include "pqxx/connection"

namespace fencegate::gateway {

// fencegate_apply_v1's `kind` argument.
inline constexpr int kApplyWrite = 0;
inline constexpr int kApplyRead = 1;
inline constexpr int kApplyFence = 2;

// fencegate_apply_v1's `outcome` column.
inline constexpr int kOutcomeAccepted = 0;
inline constexpr int kOutcomeStaleToken = 1;
inline constexpr int kOutcomeVersionMismatch = 2;
inline constexpr int kOutcomeFailed = 3;  // undone alone; `error` says why

// Creates the tables and the function unless all of them exist already with
// this very function body, so a role without CREATE rights can run a
// gateway on a schema made earlier. Safe when several gateways start at
// once: creation runs in one transaction under an advisory lock.
absl::Status EnsurePostgresSchema(pqxx::connection& connection);

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_POSTGRES_SCHEMA_H_
