// LockServer: a running fencegate-lockservice (store, clock, manager, fence
// feed, optional token signer, gRPC server with health and reflection).
// main() and the integration tests both start it through Start().
//
// Two stores (LockServerOptions::store):
//   sqlite  the embedded default: one instance, one SQLite file.
//   etcd    several instances share an etcd cluster; one leads, the others
//           forward to it (etcd/etcd_lock_node.h). Health is SERVING while
//           the instance leads or knows the leader, NOT_SERVING otherwise.
//           Not yet with TLS (see docs/operations.md).
//
// Thread safety: Start() and Shutdown() from one thread; Shutdown() is
// idempotent. ReloadSigningKeys() may be called from any thread.
#ifndef FENCEGATE_LOCKSERVICE_LOCK_SERVER_H_
#define FENCEGATE_LOCKSERVICE_LOCK_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/tls.h"
#include "common/token_signer.h"
#include "lockservice/fence_feed.h"
#include "grpcpp/server.h"
#include "lockservice/lock_limits.h"
#include "lockservice/lock_manager.h"
#include "lockservice/lock_service.h"
#include "lockservice/sqlite_lock_store.h"

namespace fencegate::lockservice {

class EtcdLockNode;
class RoutingLockService;

struct LockServerOptions {
  // host:port; port 0 picks a free port (see port() and port_file).
  std::string listen = "127.0.0.1:7070";
  // Where tokens and leases live: "sqlite" (the file db_path), or
  // "etcd://host:port[,host:port...]" (an etcd cluster; see
  // docs/operations.md).
  std::string store = "sqlite";
  // SQLite database file; created if missing.
  std::string db_path = "fencegate-locks.db";
  // If set, the bound port is written here once the server is serving.
  std::string port_file;
  // How long Shutdown() lets calls in flight finish before cancelling them.
  absl::Duration shutdown_grace = absl::Seconds(5);
  // Key file (common/signing_keys.h); set = every grant is signed, and
  // Renew/Release must carry the signature.
  std::string signing_keys_path;
  ServerTlsFiles tls;
  LockLimits limits;

  // etcd store only.
  // The address other instances forward calls to ("host:port"). Empty: the
  // listen address with the bound port (a wildcard host needs an explicit
  // address).
  std::string advertise;
  // Every key of this deployment starts with it.
  std::string etcd_prefix = "/fencegate/lockservice/";
  // The leader's etcd lease: how long a dead leader blocks a new one.
  absl::Duration etcd_session_ttl = absl::Seconds(5);
  // etcd's --max-txn-ops: one group commit is one txn of at most this many
  // operations, so it caps limits.max_batch.
  int etcd_max_txn_ops = 128;
  // TLS to the etcd members; empty: plaintext.
  ClientTlsFiles etcd_tls;
  // With TLS: the CA that signed the other instances' certificates, for
  // forwarding to the leader (default: tls.client_ca). Standbys present
  // tls.cert as their client certificate, and a leader believes the caller
  // a forwarded call names only from a peer whose certificate subject is
  // that of its own tls.cert: all instances share one certificate subject.
  std::string peer_tls_ca;
};

class LockServer {
 public:
  static absl::StatusOr<std::unique_ptr<LockServer>> Start(
      const LockServerOptions& options);
  ~LockServer();  // calls Shutdown()

  int port() const { return port_; }
  // The manager's batch limit in effect (capped for etcd).
  size_t max_batch() const { return max_batch_; }
  // "k1 (sign), k2", or "off".
  std::string DescribeSigning() const;

  // Re-reads the key file (on SIGHUP). On error the keys in use stay and
  // the error is returned; without signing, FAILED_PRECONDITION.
  absl::Status ReloadSigningKeys();

  // Stops taking calls, ends parked Acquires with UNAVAILABLE, lets calls in
  // flight finish (up to shutdown_grace), delivers committed replies. With
  // etcd, a leader hands over first (another instance leads at once).
  void Shutdown();

 private:
  LockServer();
  absl::Status StartSqlite(const LockServerOptions& options,
                           std::shared_ptr<grpc::ServerCredentials> credentials);
  absl::Status StartEtcd(const LockServerOptions& options);

  int port_ = 0;
  size_t max_batch_ = 0;
  std::string signing_keys_path_;
  std::unique_ptr<Clock> clock_;
  std::unique_ptr<TokenSigner> signer_;  // null: no signing
  // sqlite
  std::unique_ptr<SqliteLockStore> store_;
  FenceFeed feed_;
  std::shared_ptr<LockManager> manager_;
  std::unique_ptr<grpc::Service> service_;
  // etcd
  std::unique_ptr<RoutingLockService> router_;
  std::unique_ptr<EtcdLockNode> node_;

  std::unique_ptr<grpc::Server> server_;
  absl::Duration shutdown_grace_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_LOCK_SERVER_H_
