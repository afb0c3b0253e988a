// GatewayServer: a running fencegate-gateway (storage backend, FencedStore,
// optional token signer and grant-time fencing follower, gRPC server with
// health and reflection, every call of it on one event loop: docs/design.md,
// "Threads"). main() and the tests both start it through
// Start(). The storage is SQLite (the embedded default) or, with a
// PostgreSQL connection URI in `storage`, PostgreSQL.
//
// Metrics and the status page (common/server/server_observability.h): on unless
// serving.metrics_listen is empty.
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
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/authz/authorizer.h"
#include "common/core/state_lock.h"
#include "common/core/token_signer.h"
#include "common/server/commit_bursts.h"
#include "common/server/completion_queue_loop.h"
#include "common/server/grpc_shutdown.h"
#include "common/server/health_service.h"
#include "common/server/server_observability.h"
#include "common/server/server_setup.h"
#include "gateway/fence_follower.h"
#include "gateway/fenced_store.h"
#include "gateway/gateway_limits.h"
#include "gateway/gateway_server_options.h"
#include "gateway/gateway_service.h"
#include "gateway/postgres/postgres_storage.h"
#include "gateway/stale_refusals.h"
#include "gateway/storage_backend.h"
#include "gateway/store_metrics.h"
#include "grpcpp/server.h"

namespace fencegate::gateway {

class GatewayServer : public ServerControl {
 public:
  static absl::StatusOr<std::unique_ptr<GatewayServer>> Start(
      const GatewayServerOptions& options);
  ~GatewayServer() override;  // calls Shutdown()

  int port() const { return port_; }
  // The metrics listener's port; 0 when metrics are off.
  int metrics_port() const { return observability_->metrics_port(); }
  // "http://127.0.0.1:9465/", or "off", for logs.
  std::string DescribeMetrics() const { return observability_->DescribeListener(); }
  // "k1, k2", or "off".
  std::string DescribeSigning() const override;
  // The grant-time fencing follower, or null when off.
  FenceFollower* follower() const { return follower_.get(); }
  // The storage, for logs: "sqlite:<file>" or "postgres(host=... port=...
  // dbname=... user=...)", never a password.
  const std::string& storage_description() const { return storage_description_; }

  // Re-reads the key file (on SIGHUP); on error the keys in use stay.
  absl::Status ReloadSigningKeys() override;
  // Re-reads the policy file (on SIGHUP; server_policy.h).
  absl::Status ReloadPolicy() override;
  // "<path> (3 rules)", or "off".
  std::string DescribePolicy() const override;

  // Stops taking calls, lets calls in flight finish and commit (up to
  // shutdown_grace), then closes the store and the database.
  void Shutdown() override;

 private:
  GatewayServer() = default;
  // The gauges read at each scrape: queue, feed, PostgreSQL readers.
  void AddGauges(metrics::Registry& registry);

  // SQLite: one process per database (state_lock.h); taken before the
  // database is opened, released after everything else is gone.
  std::optional<StateLock> state_lock_;
  int port_ = 0;
  // Before everything that reports to it, after everything it reads.
  std::unique_ptr<ServerObservability> observability_;
  std::unique_ptr<StaleRefusals> refusals_;  // null: metrics off
  StoreMetrics store_metrics_;
  std::string lockservice_;
  absl::Duration shutdown_grace_;
  std::string signing_keys_path_;
  std::unique_ptr<TokenSigner> signer_;  // null: unsigned tokens
  // --policy; null: none. Outlives the service that checks against it.
  std::unique_ptr<authz::Authorizer> authorizer_;
  std::string storage_description_;
  std::unique_ptr<StorageBackend> storage_;
  PostgresStorage* postgres_ = nullptr;  // storage_, when it is PostgreSQL
  std::unique_ptr<FencedStore> store_;
  std::unique_ptr<FenceFollower> follower_;
  std::unique_ptr<GatewayServiceImpl> service_;
  HealthService health_;
  // Its unary calls in flight, which a shutdown waits for; outlives server_.
  UnaryCallCounter unary_calls_;
  std::unique_ptr<CommitBursts> bursts_;  // the store's commits, by the loop's bursts
  std::unique_ptr<grpc::Server> server_;
  // Runs every call of server_; Shutdown() stops it after server_'s
  // shutdown and the store's last commit.
  std::unique_ptr<CompletionQueueLoop> loop_;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_GATEWAY_SERVER_H_
