// GatewayServer: a running fencegate-gateway (storage backend, FencedStore,
// optional token signer and grant-time fencing follower, gRPC server with
// health and reflection). main() and the tests both start it through
// Start(). The storage is SQLite (the embedded default) or, with a
// PostgreSQL connection URI in `storage`, PostgreSQL.
//
// Thread safety: Start() and Shutdown() from one thread; Shutdown() is
// idempotent. ReloadSigningKeys() may be called from any thread.
#ifndef FENCEGATE_GATEWAY_GATEWAY_SERVER_H_
#define FENCEGATE_GATEWAY_GATEWAY_SERVER_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/tls.h"
#include "common/token_signer.h"
#include "gateway/fence_follower.h"
#include "gateway/fenced_store.h"
#include "gateway/gateway_limits.h"
#include "gateway/gateway_service.h"
#include "gateway/session.h"
#include "gateway/storage_backend.h"
#include "grpcpp/server.h"

namespace fencegate::gateway {

struct GatewayServerOptions {
  // host:port; port 0 picks a free port (see port() and port_file).
  std::string listen = "127.0.0.1:7071";
  // SQLite database file holding fences and objects; created if missing.
  // Unused when `storage` is set.
  std::string db_path = "fencegate-gateway.db";
  // Empty: SQLite at db_path. A libpq connection URI
  // (postgres://user@host:port/db?...): PostgreSQL, which several gateways
  // may share (postgres_storage.h); tables are created if missing.
  std::string storage;
  // If set, the bound port is written here once the server is serving.
  std::string port_file;
  // How long Shutdown() lets calls in flight finish before cancelling them.
  absl::Duration shutdown_grace = absl::Seconds(5);
  // Read-only connections (SQLite or PostgreSQL) serving plain reads, List
  // and Describe.
  size_t read_connections = 4;
  // Key file (common/signing_keys.h); set = tokens need a valid signature.
  std::string signing_keys_path;
  ServerTlsFiles tls;
  // Grant-time fencing: follow this lock service's grants and expiries
  // (host:port); empty = off. TLS to it with `lockservice_tls`.
  std::string lockservice;
  ClientTlsFiles lockservice_tls;
  GatewayLimits limits;
  // Bounds of each Session stream (--max_stream_in_flight).
  SessionLimits session_limits;
};

class GatewayServer {
 public:
  static absl::StatusOr<std::unique_ptr<GatewayServer>> Start(
      const GatewayServerOptions& options);
  ~GatewayServer();  // calls Shutdown()

  int port() const { return port_; }
  // "k1, k2", or "off".
  std::string DescribeSigning() const;
  // The grant-time fencing follower, or null when off.
  FenceFollower* follower() const { return follower_.get(); }
  // The storage, for logs: "sqlite:<file>" or "postgres(host=... port=...
  // dbname=... user=...)", never a password.
  const std::string& storage_description() const { return storage_description_; }

  // Re-reads the key file (on SIGHUP); on error the keys in use stay.
  absl::Status ReloadSigningKeys();

  // Stops taking calls, lets calls in flight finish and commit (up to
  // shutdown_grace), then closes the store and the database.
  void Shutdown();

 private:
  GatewayServer() = default;

  int port_ = 0;
  absl::Duration shutdown_grace_;
  std::string signing_keys_path_;
  std::unique_ptr<TokenSigner> signer_;  // null: unsigned tokens
  std::string storage_description_;
  std::unique_ptr<StorageBackend> storage_;
  std::unique_ptr<FencedStore> store_;
  std::unique_ptr<FenceFollower> follower_;
  std::unique_ptr<GatewayServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_GATEWAY_SERVER_H_
