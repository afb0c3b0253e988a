// Connections to PostgreSQL for the gateway's PostgreSQL backend
// (postgres_storage.h): what a --storage URI means, how a connection is
// opened, and how libpqxx's exceptions read as absl::Status.
//
//   PostgresTarget   a libpq connection URI, parsed and checked by libpq
//                    itself: the connection string handed to libpq (always
//                    client_encoding UTF8; connect_timeout 10 s and
//                    application_name fencegate-gateway unless the URI sets
//                    them) and a description for logs that never shows a
//                    password (libpq marks which options are secret).
//   Connect()        opens one connection.
//   PostgresError()  an exception caught from libpqxx, as a Status whose
//                    message says what the gateway was doing.
//
// Thread safety: a PostgresTarget is immutable after Parse() and may be
// shared. A pqxx::connection is used by one thread at a time.
#ifndef FENCEGATE_GATEWAY_POSTGRES_POSTGRES_CONNECTION_H_
#define FENCEGATE_GATEWAY_POSTGRES_POSTGRES_CONNECTION_H_

#include <exception>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pqxx/connection"

namespace fencegate::gateway {

class PostgresTarget {
 public:
  // True iff `storage` names PostgreSQL (starts with postgres:// or
  // postgresql://), whether or not it is well-formed.
  static bool IsPostgresUri(absl::string_view storage);
  // INVALID_ARGUMENT when libpq cannot parse `uri` (its message says why).
  static absl::StatusOr<PostgresTarget> Parse(absl::string_view uri);

  // What libpq connects with (keyword=value form; may hold the password).
  const std::string& conninfo() const { return conninfo_; }
  // For logs and error messages, e.g. "host=db port=5432 dbname=fg user=fg";
  // secret options (password) are left out.
  const std::string& description() const { return description_; }

 private:
  std::string conninfo_;
  std::string description_;
};

// Opens one connection to `target`. UNAVAILABLE when the server cannot be
// reached or refuses the connection.
absl::StatusOr<std::unique_ptr<pqxx::connection>> Connect(const PostgresTarget& target);

// `error`, caught from libpqxx while `what` ("committing a batch", ...), as a
// Status: UNKNOWN for a commit whose outcome is unknown (the connection was
// lost during COMMIT); UNAVAILABLE for a lost connection and for transient
// server conditions (deadlock, serialization failure, shutdown, out of
// resources); INTERNAL otherwise. The message carries the SQLSTATE if known.
absl::Status PostgresError(const std::exception& error, absl::string_view what);

// True iff `error` means the connection is gone (it must be replaced).
bool IsConnectionLost(const std::exception& error);

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_POSTGRES_POSTGRES_CONNECTION_H_
