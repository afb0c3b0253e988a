// GatewayServerOptions: everything a fencegate-gateway is started with,
// each flag bound to the field it fills in main.cc
// (common/server_main/option_flags.h). The defaults here are the flags'
// defaults.
//
// Validate() is the one place a setting that cannot work is refused:
// GatewayServer::Start() calls it first, so a server started in-process
// (the tests) gets the same checks as one started by main().
#ifndef FENCEGATE_GATEWAY_GATEWAY_SERVER_OPTIONS_H_
#define FENCEGATE_GATEWAY_GATEWAY_SERVER_OPTIONS_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "common/core/stream_session.h"
#include "common/server/server_setup.h"
#include "fencegate/client_tls_files.h"
#include "gateway/gateway_limits.h"

namespace fencegate::gateway {

struct GatewayServerOptions {
  // --listen (default 127.0.0.1:7071), --port_file, --shutdown_grace,
  // --signing_keys (set = tokens need a valid signature), --tls_*
  // (server_setup.h).
  ServingOptions serving = DefaultServing();
  // SQLite database file holding fences and objects; created if missing.
  // Unused when `storage` is set.
  std::string db_path = "fencegate-gateway.db";
  // Empty: SQLite at db_path. A libpq connection URI
  // (postgres://user@host:port/db?...): PostgreSQL, which several gateways
  // may share (postgres/postgres_storage.h); tables are created if missing.
  std::string storage;
  // Read-only connections (SQLite or PostgreSQL) serving plain reads, List
  // and Describe.
  size_t read_connections = 4;
  // Grant-time fencing: follow this lock service's grants and expiries
  // (host:port); empty = off. TLS to it with `lockservice_tls`.
  std::string lockservice;
  ClientTlsFiles lockservice_tls;
  GatewayLimits limits;
  // Bounds of each Session stream (--max_stream_in_flight; gateway/session.h).
  StreamLimits session_limits;
  // Session streams open at once (--max_sessions); one more ends at once
  // with RESOURCE_EXHAUSTED (common/server/stream_registry.h).
  size_t max_sessions = 10000;

  // OK, or INVALID_ARGUMENT naming the flag and the limit it breaks. Reads
  // no file and opens no connection.
  absl::Status Validate() const;

  // What the command line set (the flags main.cc binds: option_flags.h);
  // defaults for the rest. Reads the flags: call after InitServerMain.
  static GatewayServerOptions FromFlags();
  // Every flag's setting as "name=value ..." (the start-up line); the
  // storage connection string is left out (it may hold a password).
  std::string Describe() const;

  static ServingOptions DefaultServing() {
    ServingOptions serving;
    serving.listen = "127.0.0.1:7071";
    serving.metrics_auto_port = 9465;
    return serving;
  }
};

// PostgreSQL's btree index entries hold at most 2704 bytes, and a key's
// entry holds its resource name too (objects' primary key): with PostgreSQL
// storage, max_resource_bytes + max_key_bytes may be at most this.
inline constexpr size_t kPostgresMaxNameBytes = 2600;

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_GATEWAY_SERVER_OPTIONS_H_
