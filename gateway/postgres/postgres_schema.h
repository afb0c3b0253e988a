// The gateway's schema on PostgreSQL: two tables and the function that
// decides and applies one fenced op, created in the connection's current
// schema (the first one on its search_path) when missing; and how a
// FencedOp is passed to that function and its answer read back.
//
//   fencegate_resources(name PK, max_token, revision)   one row per resource
//   fencegate_objects(resource, key, value, version, PK(resource, key))
//   fencegate_apply_v1(resource, token, kind, keys[], value_sizes[],
//                      values, expected[]) -> one row: the decision
//   fencegate_meta(key PK, value)     the row ('format', N): the state format
//
// State format (common/core/state_format.h, docs/upgrades.md): the tables are
// format 1, what 0.1.0 made (without fencegate_meta: no marker). At start
// a gateway migrates a schema of an older format, or without a marker, in
// one transaction keeping every row, and writes the marker (fencegate_meta
// is made readable by every role); it refuses a schema of a newer format
// (FAILED_PRECONDITION, naming both formats) without changing anything,
// not even the function. Migrating needs the right to create in the
// schema, as the first start does.
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
// writes nothing. Its result row: outcome, max_token, version,
// mismatch_index (0-based), found, value (a fenced read), error (SQLSTATE
// and message of a failed op).
//
// A shared lease's fenced read (OpKind::kSharedRead) changes nothing and
// is not passed to fencegate_apply_v1: it is one plain statement
// (kSharedReadSql), so the schema, and what gateways of the previous
// release expect of it, stay as they were.
//
// Thread safety: EnsurePostgresSchema() uses the connection it is given,
// which no other thread may use meanwhile.
#ifndef FENCEGATE_GATEWAY_POSTGRES_POSTGRES_SCHEMA_H_
#define FENCEGATE_GATEWAY_POSTGRES_POSTGRES_SCHEMA_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/core/state_format.h"
#include "gateway/storage_backend.h"
#include "pqxx/connection"
#include "pqxx/row"

namespace fencegate::gateway {

// Whoever creates or replaces the schema's objects takes this lock first,
// in the same transaction: gateways starting at once and `fencegate
// sql-install` take turns (concurrent CREATE ... IF NOT EXISTS can fail on
// the catalog's unique indexes). "fencegat" in ASCII; the lock is per
// database.
inline constexpr char kSchemaLockSql[] = "SELECT pg_advisory_xact_lock(7378697629483820660)";

// The statement that calls fencegate_apply_v1 (to prepare), with seven
// parameters: the op's resource, token, and then ApplyArgs in order.
inline constexpr char kApplySql[] =
    "SELECT o_outcome, o_max_token, o_version, o_mismatch_index, o_found, o_value, "
    "o_error FROM fencegate_apply_v1($1, $2, $3, $4, $5, $6, $7)";

// A shared lease's fenced read (OpKind::kSharedRead), with parameters
// resource and key: the fence and the key in ONE statement, so one
// snapshot. It changes nothing and takes no lock, so it needs no function:
// at READ COMMITTED a newer holder's write either committed before the
// snapshot (its fence is seen, and the read is refused) or is not in it at
// all (the value read is older than it); the batch's own earlier ops are
// in it. A resource without a row reads fence 0.
inline constexpr char kSharedReadSql[] =
    "SELECT coalesce((SELECT r.max_token FROM fencegate_resources AS r "
    "WHERE r.name = $1), 0), o.value, o.version FROM (VALUES (1)) AS one(x) "
    "LEFT JOIN fencegate_objects AS o ON o.resource = $1 AND o.key = $2";

// Decides a shared read for `token` from kSharedReadSql's row.
void SharedReadResultOf(const pqxx::row& row, uint64_t token, OpResult* result);

// fencegate_apply_v1's arguments after resource and token, for one op.
struct ApplyArgs {
  int kind = 2;                    // 0 write, 1 fenced read, 2 fence
  std::string keys = "{}";         // text[]: the mutations' keys, or the read key
  std::string value_sizes = "{}";  // integer[]: each put's value size; -1: delete
  std::string values;              // bytea: every put's value, in mutation order
  std::string expected = "{}";     // bigint[]: expected versions, NULL for none
};
// REQUIRES: op.kind != kSharedRead (read with kSharedReadSql instead).
ApplyArgs ApplyArgsOf(const FencedOp& op);

// Reads fencegate_apply_v1's row. An op that failed inside the function
// (undone alone) comes back as UNAVAILABLE with the SQLSTATE and message.
absl::Status ApplyResultOf(const pqxx::row& row, OpResult* result);

// A PostgreSQL array literal of text: every element quoted, `"` and `\`
// escaped, so any string reads back as itself.
std::string PgTextArray(absl::Span<const absl::string_view> items);

// The state format this version writes, and the newest it reads.
inline constexpr int64_t kPostgresStateFormat = 1;

// Creates the tables and the function, or migrates them (see above),
// unless the schema is in this version's format with this very function
// body: then it only reads, so a role without CREATE rights can run a
// gateway on a schema made earlier. Safe when several gateways start at
// once: creation and migration run in one transaction under an advisory
// lock. FAILED_PRECONDITION for a newer format; `at_open` (optional) says
// what was found and done.
absl::Status EnsurePostgresSchema(pqxx::connection& connection,
                                  StateFormatAtOpen* at_open = nullptr);

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_POSTGRES_POSTGRES_SCHEMA_H_
