// GatewayServer: a running fencegate-gateway (storage backend, FencedStore,
// optional token signer and grant-time fencing follower, gRPC server with
// health and reflection). main() and the tests both start it through
// Start(). The storage is SQLite (the embedded default) or, with a
// PostgreSQL connection URI in `storage`, PostgreSQL.
//
// Start() refuses options that cannot work
// (GatewayServerOptions::Validate()) before it opens anything.
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
#include "common/server_setup.h"
#include "common/token_signer.h"
#include "gateway/fence_follower.h"
#include "gateway/fenced_store.h"
#include "gateway/gateway_limits.h"
#include "gateway/gateway_server_options.h"
#include "gateway/gateway_service.h"
#include "gateway/storage_backend.h"
#include "grpcpp/server.h"

namespace fencegate::gateway {

class GatewayServer : public ServerControl {
 public:
  static absl::StatusOr<std::unique_ptr<GatewayServer>> Start(
      const GatewayServerOptions& options);
  ~GatewayServer() override;  // calls Shutdown()

  int port() const { return port_; }
  // "k1, k2", or "off".
  std::string DescribeSigning() const override;
  // The grant-time fencing follower, or null when off.
  FenceFollower* follower() const { return follower_.get(); }
  // The storage, for logs: "sqlite:<file>" or "postgres(host=... port=...
  // dbname=... user=...)", never a password.
  const std::string& storage_description() const { return storage_description_; }

  // Re-reads the key file (on SIGHUP); on error the keys in use stay.
  absl::Status ReloadSigningKeys() override;

  // Stops taking calls, lets calls in flight finish and commit (up to
  // shutdown_grace), then closes the store and the database.
  void Shutdown() override;

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
