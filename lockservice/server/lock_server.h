// LockServer: a running fencegate-lockservice (store, clock, manager, fence
// feed, optional token signer, gRPC server with health and reflection).
// main() and the integration tests both start it through Start().
//
// Two stores (LockServerOptions::store):
//   sqlite  the embedded default: one instance, one SQLite file, served
//           on one event loop (loop_lock_service.h).
//   etcd    several instances share an etcd cluster; one leads, the others
//           forward to it (etcd_lock_node.h). Health is SERVING while
//           the instance leads or knows the leader, NOT_SERVING otherwise.
//           With --tls_*, standbys forward to the leader over TLS too
//           (its certificate checked against --peer_tls_ca); --etcd_tls_*
//           put the connections to etcd on TLS (docs/operations-etcd.md,
//           "TLS").
//
// Metrics and the status page (common/server/server_observability.h): on unless
// serving.metrics_listen is empty; the counters run on across terms.
//
// Start() refuses options that cannot work (LockServerOptions::Validate())
// before it opens anything.
//
// Thread safety: Start() and Shutdown() from one thread; Shutdown() is
// idempotent. ReloadSigningKeys() may be called from any thread.
#ifndef FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVER_H_
#define FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVER_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/authz/authorizer.h"
#include "common/core/state_lock.h"
#include "common/core/stream_quota.h"
#include "common/core/token_signer.h"
#include "common/server/commit_bursts.h"
#include "common/server/completion_queue_loop.h"
#include "common/server/grpc_shutdown.h"
#include "common/server/health_service.h"
#include "common/server/server_observability.h"
#include "common/server/server_setup.h"
#include "common/server/stream_reactor.h"
#include "fencegate/clock.h"
#include "grpcpp/server.h"
#include "lockservice/core/fence_feed.h"
#include "lockservice/core/lock_limits.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_metrics.h"
#include "lockservice/core/sqlite_lock_store.h"
#include "lockservice/server/lock_server_options.h"

namespace fencegate::lockservice {

class EtcdLockNode;
class LoopLockService;
class RoutingLockService;

class LockServer : public ServerControl {
 public:
  static absl::StatusOr<std::unique_ptr<LockServer>> Start(
      const LockServerOptions& options);
  ~LockServer() override;  // calls Shutdown()

  int port() const { return port_; }
  // The metrics listener's port; 0 when metrics are off.
  int metrics_port() const { return observability_->metrics_port(); }
  // "http://127.0.0.1:9464/", or "off", for logs.
  std::string DescribeMetrics() const { return observability_->DescribeListener(); }
  // The manager's batch limit in effect (capped for etcd).
  size_t max_batch() const { return max_batch_; }
  // "k1 (sign), k2", or "off".
  std::string DescribeSigning() const override;

  // Re-reads the key file (on SIGHUP). On error the keys in use stay and
  // the error is returned; without signing, FAILED_PRECONDITION.
  absl::Status ReloadSigningKeys() override;
  // Re-reads the policy file (on SIGHUP; server_policy.h).
  absl::Status ReloadPolicy() override;
  // "<path> (3 rules)", or "off".
  std::string DescribePolicy() const override;

  // Stops taking calls, ends parked Acquires with UNAVAILABLE, lets calls in
  // flight finish (up to shutdown_grace), delivers committed replies. With
  // etcd, a leader hands over first (another instance leads at once).
  void Shutdown() override;

 private:
  explicit LockServer(const LockServerOptions& options);
  absl::Status StartSqlite(const LockServerOptions& options,
                           std::shared_ptr<grpc::ServerCredentials> credentials);
  absl::Status StartEtcd(const LockServerOptions& options);
  // The manager serving here now (null: a standby), and how to say so.
  std::shared_ptr<LockManager> CurrentManager() const;
  std::string Role() const;

  // sqlite: one process per database (state_lock.h); taken before the
  // database is opened, released after everything else is gone.
  std::optional<StateLock> state_lock_;
  int port_ = 0;
  size_t max_batch_ = 0;
  // Before everything that reports to it, after everything it reads.
  std::unique_ptr<ServerObservability> observability_;
  LockManagerMetrics manager_metrics_;
  LeadershipMetrics leadership_metrics_;
  std::string signing_keys_path_;
  std::unique_ptr<Clock> clock_;
  std::unique_ptr<TokenSigner> signer_;  // null: no signing
  // --policy; null: none. Outlives the services that check against it.
  std::unique_ptr<authz::Authorizer> authorizer_;
  // The Session streams of every service below, for the shutdown to wait
  // on and bounded by --max_sessions; outlives them.
  StreamRegistry sessions_;
  // Their WatchFences streams (--max_fence_watchers); outlives them.
  StreamQuota fence_watchers_;
  // Their Observe streams (--max_election_observers); outlives them.
  StreamQuota observers_;
  // sqlite
  std::unique_ptr<SqliteLockStore> store_;
  FenceFeed feed_;
  std::shared_ptr<LockManager> manager_;
  // Served on one completion-queue loop (loop_lock_service.h): the loop
  // commits each burst's calls (bursts_). The health service is the
  // loop's too.
  std::unique_ptr<LoopLockService> service_;
  std::unique_ptr<HealthService> health_;
  std::unique_ptr<CommitBursts> bursts_;
  // etcd
  std::unique_ptr<RoutingLockService> router_;
  std::unique_ptr<EtcdLockNode> node_;

  // Its unary calls in flight, which a shutdown waits for; outlives server_.
  UnaryCallCounter unary_calls_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<CompletionQueueLoop> loop_;  // sqlite; stops after server_
  absl::Duration shutdown_grace_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVER_H_
