// The SQL fencing API on PostgreSQL
// (gateway/postgres/sql/fencegate_sql_api.sql, docs/sql-fencing.md): functions
// a user's own transactions call to fence writes to their own tables with the
// gateway's fence per resource.
//
//   InstallSqlApi()  creates the gateway's schema (postgres_schema.h) if it
//                    is missing, then runs the API's script, in the
//                    connection's current schema; idempotent. Installers
//                    and gateways starting at once take turns (the schema's
//                    advisory lock).
//   LoadSqlKeys()    replaces the keys fencegate_fence verifies signed
//                    tokens with (fencegate_keys) by a key file's, in one
//                    transaction; with keys, unsigned tokens are refused.
//
// Errors: PostgresError()'s (postgres_connection.h), saying what failed;
// FAILED_PRECONDITION when the API is not installed (LoadSqlKeys).
// Thread safety: each uses the connection it is given, which no other
// thread may use meanwhile.
#ifndef FENCEGATE_GATEWAY_POSTGRES_POSTGRES_SQL_API_H_
#define FENCEGATE_GATEWAY_POSTGRES_POSTGRES_SQL_API_H_

#include "absl/status/status.h"
#include "common/signing/signing_keys.h"
#include "pqxx/connection"

namespace fencegate::gateway {

// The version of the SQL API the script installs (fencegate_sql_api_version()).
inline constexpr int kSqlApiVersion = 1;

// The script itself, as shipped in share/fencegate/sql/.
const char* SqlApiScript();

absl::Status InstallSqlApi(pqxx::connection& connection);

absl::Status LoadSqlKeys(pqxx::connection& connection, const KeyRing& keys);

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_POSTGRES_POSTGRES_SQL_API_H_
